// Package dashboard runs the interactive dashboard: the watches of its source
// (dashboard/source), the actions of its backend (dashboard/backend) and the views (tui)
// in one bubbletea program, until the user quits; then it stops what still runs and
// waits for it. The views never call the API: they are handed the backend.
package dashboard

import (
	"context"
	"fmt"
	"io"

	tea "charm.land/bubbletea/v2"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-maintenance/kubectl-maintenance/dashboard/backend"
	"github.com/kubectl-maintenance/kubectl-maintenance/dashboard/source"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui"
)

// RequestFunc is how the front end builds the request of an action the dialog confirmed
// (backend.RequestFunc).
type RequestFunc = backend.RequestFunc

// Config is the dashboard's clients, terminal and front end.
type Config struct {
	// Kube, EventKube and Pools are the backend's (backend.Config).
	Kube, EventKube kubernetes.Interface
	Pools           client.Client
	// Dynamic and Server are the source's (source.Config).
	Dynamic dynamic.Interface
	Server  string
	// User and Request are the backend's (backend.Config).
	User    string
	Request RequestFunc
	// In and Out are the terminal.
	In  io.Reader
	Out io.Writer
	// NoColor draws without colors (NO_COLOR).
	NoColor bool
	// ClusterFlags are the cluster flags the commands it prints carry.
	ClusterFlags []string
}

// Result is how the dashboard ended.
type Result struct {
	// Stopped says, per action the quit stopped, what is left and how to finish it.
	Stopped []string
	// Interrupted: the user quit while actions ran (they were stopped).
	Interrupted bool
}

// Run shows the dashboard until the user quits or ctx ends, and returns once the
// source's informers and every action's goroutines have ended. The error is the
// program's (nil when it ended because ctx did).
func Run(ctx context.Context, cfg Config) (Result, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	src, err := source.New(source.Config{Kube: cfg.Kube, Dynamic: cfg.Dynamic, Server: cfg.Server})
	if err != nil {
		return Result{}, err
	}
	srcDone := make(chan struct{})
	go func() {
		defer close(srcDone)
		src.Run(ctx)
	}()
	b := backend.New(ctx, backend.Config{Kube: cfg.Kube, EventKube: cfg.EventKube, Pools: cfg.Pools, User: cfg.User, Source: src, Request: cfg.Request})
	p := tea.NewProgram(tui.New(b, cfg.NoColor).WithClusterFlags(cfg.ClusterFlags...), tea.WithContext(ctx), tea.WithInput(cfg.In), tea.WithOutput(cfg.Out))
	final, runErr := p.Run()
	// Whatever ended the program, stop what still runs and wait for it: the source's
	// informers and every action's goroutines end before the command returns.
	cancel()
	b.Wait()
	<-srcDone

	var res Result
	if app, ok := final.(tui.App); ok {
		res.Stopped, res.Interrupted = app.Stopped(), app.Interrupted()
	}
	if runErr != nil {
		return res, fmt.Errorf("dashboard: %w", runErr)
	}
	return res, nil
}

// Backend is the dashboard's backend on cfg's clients without a terminal and without the
// watches (Snapshots delivers nothing): what a test drives the dashboard's actions
// through. wait waits for the actions once ctx is cancelled.
func Backend(ctx context.Context, cfg Config) (b tui.Backend, wait func()) {
	be := backend.New(ctx, backend.Config{Kube: cfg.Kube, EventKube: cfg.EventKube, Pools: cfg.Pools, User: cfg.User, Request: cfg.Request})
	return be, be.Wait
}

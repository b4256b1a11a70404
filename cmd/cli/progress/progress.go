// Package progress runs an operation while its events are shown: printed as they come,
// or in the live progress view (bubbletea) on a terminal, with Ctrl-C in the view
// interrupting the run as SIGINT does; and keeps klog off the screen a view owns (LogTo).
package progress

import (
	"context"
	"os"

	tea "charm.land/bubbletea/v2"
	"k8s.io/klog/v2"

	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/render"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/event/relay"
	"github.com/kubectl-maintenance/kubectl-maintenance/operation"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui"
)

// Run runs an operation while its events are printed as they come (a relay to
// the printer), or shown in the live progress view when view is true, and returns what
// the operation returned. Every event is printed before it returns.
func Run(ctx context.Context, view bool, p render.Printer, run func(events chan<- event.Event) (operation.Summary, error)) (operation.Summary, error) {
	if view {
		return runProgressView(ctx, run)
	}
	r := relay.Start(nil, 256, p.Event)
	sum, err := run(r.In())
	r.Close()
	return sum, err
}

// runProgressView runs the operation while the live view shows its events until they
// end; the view replaces the plain lines, and the caller prints the summary once it is
// gone. Ctrl-C in the view (the terminal is in raw mode, so no SIGINT comes) interrupts
// the drain exactly as SIGINT does: it calls the interrupt that main put in ctx
// (WithInterrupt), which cancels the run's context. No signal is sent, so this builds
// and works on every OS.
func runProgressView(ctx context.Context, run func(events chan<- event.Event) (operation.Summary, error)) (operation.Summary, error) {
	events := make(chan event.Event, 256)
	type result struct {
		sum operation.Summary
		err error
	}
	done := make(chan result, 1)
	go func() {
		sum, err := run(events)
		close(events)
		done <- result{sum, err}
	}()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	klog.LogToStderr(false)
	defer klog.LogToStderr(true)
	_, noColor := os.LookupEnv("NO_COLOR")
	p := tea.NewProgram(tui.NewProgressApp(events, interruptFrom(ctx, cancel), noColor), tea.WithContext(ctx))
	if _, err := p.Run(); err != nil {
		// The view failed (e.g. the terminal went away): drain the rest silently; the
		// summary still follows.
		for range events {
		}
	}
	res := <-done
	return res.sum, res.err
}

type interruptKey struct{}

// WithInterrupt returns a context that carries interrupt: what a Ctrl-C typed into a view
// (which reads the terminal in raw mode, so the OS sends no SIGINT) calls to interrupt the
// run. main passes the same function its SIGINT handler runs: say so, cancel the context.
func WithInterrupt(ctx context.Context, interrupt func()) context.Context {
	return context.WithValue(ctx, interruptKey{}, interrupt)
}

// interruptFrom returns the interrupt in ctx, or fallback when there is none (a command
// run without main, as in tests: then only the view's own context is cancelled).
func interruptFrom(ctx context.Context, fallback func()) func() {
	if f, ok := ctx.Value(interruptKey{}).(func()); ok && f != nil {
		return f
	}
	return fallback
}

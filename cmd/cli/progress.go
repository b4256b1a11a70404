package cli

import (
	"context"
	"os"

	"golang.org/x/term"

	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/progress"
)

// useProgressView decides the mode: the live view only with -o unset and, for auto, when
// stdin and stdout are both terminals. A bubbletea program is never started without one.
func (o *DrainOptions) useProgressView() bool {
	if o.Output != "" || o.Progress == "plain" || o.DryRun != "none" {
		return false
	}
	tty := term.IsTerminal(int(os.Stdin.Fd())) && term.IsTerminal(int(os.Stdout.Fd()))
	return tty && (o.Progress == "auto" || o.Progress == "" || o.Progress == "tty")
}

// WithInterrupt returns a context that carries interrupt, what a Ctrl-C typed into a
// view calls to interrupt the run (progress.WithInterrupt).
func WithInterrupt(ctx context.Context, interrupt func()) context.Context {
	return progress.WithInterrupt(ctx, interrupt)
}

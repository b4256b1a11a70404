package cli

import (
	"fmt"
	"io"

	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/exitcode"
	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/render"
)

// Exit codes of kubectl-maintenance, package exitcode's (documented there).
const (
	ExitOK          = exitcode.OK
	ExitError       = exitcode.Error
	ExitUsage       = exitcode.Usage
	ExitBlocked     = exitcode.Blocked
	ExitNotStarted  = exitcode.NotStarted
	ExitForced      = exitcode.Forced
	ExitTimeout     = exitcode.Timeout
	ExitInterrupted = exitcode.Interrupted
)

// ExitCodesHelp is the exit-code table shown in --help (exitcode.Help).
const ExitCodesHelp = exitcode.Help

// WithExitCode wraps err so that ExitCode returns code for it (exitcode.With).
func WithExitCode(code int, err error) error { return exitcode.With(code, err) }

// UsageErrorf returns a usage error (exit 2) with a formatted message (exitcode.UsageErrorf).
func UsageErrorf(format string, args ...any) error { return exitcode.UsageErrorf(format, args...) }

// ExitCode maps an error to the process exit code (exitcode.Of).
func ExitCode(err error) int { return exitcode.Of(err) }

// PrintError writes err as one line, kubectl style ("error: ..."), with a hint for the
// common cases a person can fix.
func PrintError(w io.Writer, err error) {
	fmt.Fprintf(w, "error: %s\n", render.ErrorLine(err))
}

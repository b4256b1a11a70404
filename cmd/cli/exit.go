package cli

import (
	"errors"
	"fmt"
	"io"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/printflags"
	"github.com/kubectl-maintenance/kubectl-maintenance/outcome"
	"github.com/kubectl-maintenance/kubectl-maintenance/render"
)

// Exit codes of kubectl-maintenance. They are documented in the root command's help and
// the README so that a runbook can tell "retry later" from "fix the input".
const (
	// ExitOK means done, or nothing to do.
	ExitOK = outcome.CodeSucceeded
	// ExitError is an API, RBAC or internal error.
	ExitError = outcome.CodeFailed
	// ExitUsage is a usage or validation error: bad flag, selector, unknown node or pool,
	// bad kubeconfig. Nothing was changed.
	ExitUsage = outcome.CodeInvalid
	// ExitBlocked means blocked by policy: a PDB that can never allow a disruption, a pod
	// under several PDBs, unmanaged pods without --force.
	ExitBlocked = outcome.CodeBlocked
	// ExitNotStarted means the --not-after deadline passed with nodes not started; the
	// nodes started before it finished.
	ExitNotStarted = outcome.CodeNotStarted
	// ExitForced means finished by force: --on-blocked=force deleted pods below their
	// budgets (the nodes are drained).
	ExitForced = outcome.CodeForced
	// ExitTimeout means --timeout was reached.
	ExitTimeout = outcome.CodeTimedOut
	// ExitInterrupted means Ctrl-C or SIGTERM.
	ExitInterrupted = outcome.CodeInterrupted
)

// ExitCodesHelp is the exit-code table shown in --help.
const ExitCodesHelp = `Exit codes:
  0    done, or nothing to do
  1    error (API, RBAC, internal)
  2    usage or validation error (bad flag, selector, node, pool or kubeconfig); nothing changed
  3    blocked by policy (a PDB that never allows a disruption, a pod under several PDBs,
       pods that need --force, --ignore-daemonsets or --delete-emptydir-data; nodes given
       up by --on-blocked=skip; a run stopped by --on-blocked=fail; uninstall refused
       while a Maintenance is in progress or a NodePool exists)
  4    --not-after passed (or a Maintenance's window closed) with nodes not started (the others finished)
  5    finished by force: --on-blocked=force deleted pods below their budgets
  124  --timeout reached
  130  interrupted (Ctrl-C or SIGTERM); run the same command again to finish`

// ExitError carries the exit code an error maps to.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// WithExitCode wraps err so that ExitCode returns code for it.
func WithExitCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: code, err: err}
}

// UsageErrorf returns a usage error (exit 2) with a formatted message.
func UsageErrorf(format string, args ...any) error {
	return WithExitCode(ExitUsage, fmt.Errorf(format, args...))
}

// ExitCode maps an error to the process exit code: an exit code given with WithExitCode,
// a bad kubeconfig (usage), else the outcome the error means (package outcome, the one
// mapping the Maintenance phases share).
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	var fe *printflags.FormatError // a bad -o
	if errors.As(err, &fe) {
		return ExitUsage
	}
	if clientcmd.IsConfigurationInvalid(err) || clientcmd.IsEmptyConfig(err) {
		return ExitUsage
	}
	return outcome.Of(err).ExitCode()
}

// PrintError writes err as one line, kubectl style ("error: ..."), with a hint for the
// common cases a person can fix.
func PrintError(w io.Writer, err error) {
	fmt.Fprintf(w, "error: %s\n", render.ErrorLine(err))
}

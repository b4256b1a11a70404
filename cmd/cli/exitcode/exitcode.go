// Package exitcode owns the exit codes of kubectl-maintenance: the codes and their
// --help table, the errors that carry a code (a usage error, a flag the command line got
// wrong) and the mapping of any error to the process exit code.
package exitcode

import (
	"errors"
	"fmt"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/printflags"
	"github.com/kubectl-maintenance/kubectl-maintenance/outcome"
)

// Exit codes of kubectl-maintenance. They are documented in the root command's help and
// the README so that a runbook can tell "retry later" from "fix the input".
const (
	// OK means done, or nothing to do.
	OK = outcome.CodeSucceeded
	// Error is an API, RBAC or internal error.
	Error = outcome.CodeFailed
	// Usage is a usage or validation error: bad flag, selector, unknown node or pool,
	// bad kubeconfig. Nothing was changed.
	Usage = outcome.CodeInvalid
	// Blocked means blocked by policy: a PDB that can never allow a disruption, a pod
	// under several PDBs, unmanaged pods without --force.
	Blocked = outcome.CodeBlocked
	// NotStarted means the --not-after deadline passed with nodes not started; the
	// nodes started before it finished.
	NotStarted = outcome.CodeNotStarted
	// Forced means finished by force: --on-blocked=force deleted pods below their
	// budgets (the nodes are drained).
	Forced = outcome.CodeForced
	// Timeout means --timeout was reached.
	Timeout = outcome.CodeTimedOut
	// Interrupted means Ctrl-C or SIGTERM.
	Interrupted = outcome.CodeInterrupted
)

// Help is the exit-code table shown in --help.
const Help = `Exit codes:
  0    done, or nothing to do
  1    error (API, RBAC, internal)
  2    usage or validation error (bad flag, selector, node, pool or kubeconfig); nothing changed
  3    blocked by policy (a PDB that never allows a disruption, also in plan and a dry run,
       a pod under several PDBs, pods that need --force, --ignore-daemonsets or --delete-emptydir-data; nodes given
       up by --on-blocked=skip; a run stopped by --on-blocked=fail; uninstall refused
       while a Maintenance is in progress or a NodePool exists)
  4    --not-after passed (or a Maintenance's window closed) with nodes not started (the others finished)
  5    finished by force: --on-blocked=force deleted pods below their budgets (a dry run: would)
  124  --timeout reached
  130  interrupted (Ctrl-C or SIGTERM); run the same command again to finish`

// exitError carries the exit code an error maps to.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// With wraps err so that Of returns code for it.
func With(code int, err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: code, err: err}
}

// UsageErrorf returns a usage error (exit 2) with a formatted message.
func UsageErrorf(format string, args ...any) error {
	return With(Usage, fmt.Errorf(format, args...))
}

// Of maps an error to the process exit code: an exit code given with With, a bad
// kubeconfig (usage), else the outcome the error means (package outcome, the one
// mapping the Maintenance phases share).
func Of(err error) int {
	if err == nil {
		return OK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	var fe *printflags.FormatError // a bad -o
	if errors.As(err, &fe) {
		return Usage
	}
	if clientcmd.IsConfigurationInvalid(err) || clientcmd.IsEmptyConfig(err) {
		return Usage
	}
	return outcome.Of(err).ExitCode()
}

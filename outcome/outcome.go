// Package outcome owns how a run ended and everything read from it: the process exit
// code of a command, the phase and Progressing reason of a Maintenance, and the one-word
// verdict a summary gives. A run's error is read once (Of); a finished Maintenance is read
// back the same way (OfPhase), so a server-side run exits as the same run would locally.
// The table in Table is the only mapping.
package outcome

import (
	"context"
	"errors"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
)

// Outcome is how a run ended.
type Outcome int

// Outcomes, from the best to the worst a runbook must tell apart.
const (
	// Succeeded: done, or nothing to do.
	Succeeded Outcome = iota
	// Failed: an API, RBAC or internal error.
	Failed
	// Invalid: the request can't run as given (bad flag, selector, node, pool or spec);
	// nothing was changed.
	Invalid
	// Blocked: blocked by policy (a budget that never allows a disruption, pods that need
	// --force, nodes given up by --on-blocked=skip, a run stopped by --on-blocked=fail).
	Blocked
	// NotStarted: the --not-after deadline passed with nodes not started; the nodes
	// started before it finished.
	NotStarted
	// TimedOut: --timeout was reached.
	TimedOut
	// Interrupted: Ctrl-C or SIGTERM; running the same command again finishes.
	Interrupted
	// Forced: finished by force: --on-blocked=force deleted pods below their budgets
	// (the nodes are drained).
	Forced
)

// Row is what one outcome maps to.
type Row struct {
	// ExitCode is the command's exit code.
	ExitCode int
	// Phase and Reason are a finished Maintenance's phase and Progressing reason ("" for
	// Interrupted: a Maintenance whose run is interrupted is not finished, its next
	// leader goes on).
	Phase  string
	Reason string
	// Verdict is the summary's word for it.
	Verdict string
}

// The exit codes, documented in every command's help (cmd/cli ExitCodesHelp).
const (
	CodeSucceeded   = 0
	CodeFailed      = 1
	CodeInvalid     = 2
	CodeBlocked     = 3
	CodeNotStarted  = 4
	CodeForced      = 5
	CodeTimedOut    = 124
	CodeInterrupted = 130
)

// The phases of a finished Maintenance, by name. outcome owns them: the API's Phase
// constants (maintenance/api/v1alpha1) spell the same names, and a test of package
// maintenance holds the two to each other.
const (
	PhaseSucceeded      = "Succeeded"
	PhaseFailed         = "Failed"
	PhaseBlocked        = "Blocked"
	PhaseDeadlinePassed = "DeadlinePassed"
	PhaseTimedOut       = "TimedOut"
	PhaseForced         = "Forced"
)

// Table is the one mapping of outcomes to exit codes, phases, reasons and verdicts.
var Table = map[Outcome]Row{
	Succeeded:   {CodeSucceeded, PhaseSucceeded, "Succeeded", "done"},
	Failed:      {CodeFailed, PhaseFailed, "Failed", "failed"},
	Invalid:     {CodeInvalid, PhaseFailed, "Invalid", "invalid"},
	Blocked:     {CodeBlocked, PhaseBlocked, "Blocked", "blocked"},
	NotStarted:  {CodeNotStarted, PhaseDeadlinePassed, "DeadlinePassed", "deadline passed"},
	TimedOut:    {CodeTimedOut, PhaseTimedOut, "TimedOut", "timed out"},
	Interrupted: {CodeInterrupted, "", "", "interrupted"},
	Forced:      {CodeForced, PhaseForced, "FinishedByForce", "finished by force"},
}

// Of reads how a run ended from its error (nil: Succeeded).
func Of(err error) Outcome {
	if err == nil {
		return Succeeded
	}
	var be interface{ Blocked() bool }
	var ns interface{ NotStarted() bool }
	var forced interface{ Forced() bool }
	switch {
	case errors.As(err, &be) && be.Blocked():
		return Blocked
	case drain.IsUsage(err):
		return Invalid
	case errors.As(err, &ns) && ns.NotStarted():
		return NotStarted
	case errors.As(err, &forced) && forced.Forced():
		return Forced
	case errors.Is(err, context.DeadlineExceeded):
		return TimedOut
	case errors.Is(err, context.Canceled):
		return Interrupted
	}
	return Failed
}

// OfPhase reads a finished Maintenance back: its phase and Progressing reason give the
// outcome its run had (a phase not in Table, e.g. Running: Failed).
func OfPhase(phase, reason string) Outcome {
	best, found := Failed, false
	for o, r := range Table {
		if r.Phase != phase || r.Phase == "" {
			continue
		}
		if r.Reason == reason {
			return o
		}
		if !found || o < best {
			best, found = o, true
		}
	}
	return best
}

// OfExitCode is the outcome a command's exit code says (an unknown code: Failed).
func OfExitCode(code int) Outcome {
	for o, r := range Table {
		if r.ExitCode == code {
			return o
		}
	}
	return Failed
}

// ExitCode is the command's exit code for o.
func (o Outcome) ExitCode() int { return Table[o].ExitCode }

// Phase is the phase of a Maintenance whose run ended so.
func (o Outcome) Phase() string { return Table[o].Phase }

// Reason is the Progressing condition's reason of a Maintenance whose run ended so.
func (o Outcome) Reason() string { return Table[o].Reason }

// Verdict is the summary's word for o.
func (o Outcome) Verdict() string { return Table[o].Verdict }

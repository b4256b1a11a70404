package maintenance

import (
	"context"
	"errors"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/operation"
)

// Reasons of the Progressing condition of a finished Maintenance.
const (
	// ReasonInvalid: the spec can't run as given (the CLI's exit 2); nothing was changed.
	ReasonInvalid = "Invalid"
	// ReasonSucceeded, ReasonBlocked, ReasonDeadlinePassed, ReasonTimedOut, ReasonFailed
	// name the outcome (the phase).
	ReasonSucceeded      = "Succeeded"
	ReasonBlocked        = "Blocked"
	ReasonDeadlinePassed = "DeadlinePassed"
	ReasonTimedOut       = "TimedOut"
	ReasonFailed         = "Failed"
	// ReasonForced: finished by force (policy.onBlocked force deleted pods).
	ReasonForced = "FinishedByForce"
)

// outcome maps how a run ended to the phase and the Progressing reason, as the CLI maps
// the same error to its exit code (cmd/cli/exit.go).
func outcome(err error) (v1alpha1.Phase, string) {
	if err == nil {
		return v1alpha1.PhaseSucceeded, ReasonSucceeded
	}
	var be interface{ Blocked() bool }
	var ns interface{ NotStarted() bool }
	var ue *operation.UsageError
	var forced *drain.ForcedError
	switch {
	case errors.As(err, &forced):
		return v1alpha1.PhaseForced, ReasonForced
	case errors.As(err, &be) && be.Blocked():
		return v1alpha1.PhaseBlocked, ReasonBlocked
	case errors.As(err, &ue), drain.IsUsage(err):
		return v1alpha1.PhaseFailed, ReasonInvalid
	case errors.As(err, &ns) && ns.NotStarted():
		return v1alpha1.PhaseDeadlinePassed, ReasonDeadlinePassed
	case errors.Is(err, context.DeadlineExceeded):
		return v1alpha1.PhaseTimedOut, ReasonTimedOut
	}
	return v1alpha1.PhaseFailed, ReasonFailed
}

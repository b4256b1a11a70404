package operation

import (
	"context"
	"errors"

	"github.com/kubectl-maintenance/kubectl-maintenance/access"
	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
)

// The preflight of the opt-in paths that need rights a drain alone does not:
// --on-blocked=force (delete pods) and --clear-disruption-holds (update
// poddisruptionbudgets/status). A drain without them never asks for them.

// preflightForce checks, only under --on-blocked=force, that the user may delete pods
// (the force path's one DELETE): in every namespace, else in each namespace holding a pod
// the drain may evict.
func (o *Operator) preflightForce(ctx context.Context, req Request, names []string) error {
	if req.Drain.OnBlocked != drain.OnBlockedForce {
		return nil
	}
	return o.preflightOptIn(ctx, req, names, access.ForceDeletes)
}

// preflightClearHolds checks, only under --clear-disruption-holds and when the run will
// write (a dry run never clears a hold), that the user may update the status of the
// budgets: in every namespace, else in each namespace holding a pod the drain may evict
// (a budget covers pods of its own namespace). Without it the run would say so once, at
// the first hold, and wait the holds out: the user asked for the remedy, so it is refused
// before anything changes instead.
func (o *Operator) preflightClearHolds(ctx context.Context, req Request, names []string) error {
	if !req.Drain.ClearHolds || req.Drain.DryRun != drain.DryRunNone {
		return nil
	}
	return o.preflightOptIn(ctx, req, names, access.ClearHolds)
}

// preflightOptIn asks checks(nil) (every namespace), and when that is denied,
// checks(namespaces) for the namespaces of the pods the drain may evict.
func (o *Operator) preflightOptIn(ctx context.Context, req Request, names []string, checks func([]string) []access.Check) error {
	err := o.checkAccess(ctx, req.Drain.DryRun, checks(nil))
	var denied *access.Denied
	if !errors.As(err, &denied) {
		return err
	}
	namespaces, err := o.evictionNamespaces(ctx, names, req.Drain.PodSelector)
	if err != nil || len(namespaces) == 0 {
		return err
	}
	return o.checkAccess(ctx, req.Drain.DryRun, checks(namespaces))
}

package operation

import (
	"context"
	"errors"

	"github.com/kubectl-maintenance/kubectl-maintenance/access"
	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
)

// preflightForce checks, only under --on-blocked=force, that the user may delete pods
// (the force path's one DELETE): in every namespace, else in each namespace holding a pod
// the drain may evict. A drain without force never asks for it.
func (o *Operator) preflightForce(ctx context.Context, req Request, names []string) error {
	if req.Drain.OnBlocked != drain.OnBlockedForce {
		return nil
	}
	err := o.checkAccess(ctx, req.Drain.DryRun, access.ForceDeletes(nil))
	var denied *access.Denied
	if !errors.As(err, &denied) {
		return err
	}
	namespaces, err := o.evictionNamespaces(ctx, names, req.Drain.PodSelector)
	if err != nil || len(namespaces) == 0 {
		return err
	}
	return o.checkAccess(ctx, req.Drain.DryRun, access.ForceDeletes(namespaces))
}

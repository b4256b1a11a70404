package operation

import (
	"context"

	"github.com/kubectl-maintenance/kubectl-maintenance/access"
	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
)

// withOrigin fills req.origin, the command and the user recorded on the nodes a
// cordon, a drain, a move or a rollout changes (status shows them): nothing for a dry run that
// sends nothing. The command is the front end's (Request.Command); the user is the API
// server's answer to a SelfSubjectReview when it gives one, else Operator.User. This is
// the one place the origin is decided. A run on someone's behalf (Request.RequestedBy,
// the controller running a Maintenance) records both: "alice (via
// system:serviceaccount:kube-system:kubectl-maintenance-controller)".
func (o *Operator) withOrigin(ctx context.Context, req *Request) {
	switch {
	case req.Action == Cordon && req.Drain.DryRun != drain.DryRunClient:
	case (req.Action == Drain || req.Action == Move || req.Action == Rollout) && req.Drain.DryRun == drain.DryRunNone:
	default:
		return
	}
	user := o.whoAmI(ctx)
	if req.RequestedBy != "" && req.RequestedBy != user {
		user = req.RequestedBy + " (via " + user + ")"
	}
	req.origin = req.Origin()
	req.origin.User = user
}

// whoAmI asks the API server once who the user is (see access.WhoAmI); later calls
// reuse the answer. The question is asked outside the lock.
func (o *Operator) whoAmI(ctx context.Context) string {
	o.mu.Lock()
	user, known := o.user, o.userKnown
	o.mu.Unlock()
	if known {
		return user
	}
	user = access.WhoAmI(ctx, o.Kube, o.User)
	o.mu.Lock()
	o.user, o.userKnown = user, true
	o.mu.Unlock()
	return user
}

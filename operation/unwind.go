package operation

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/surge"
)

// ReasonSurgeSurplus qualifies a pod.evicted event of an uncordon: the pod was the
// surplus of a Deployment a --surge drain left at one more replica.
const ReasonSurgeSurplus = "SurgeSurplus"

// unwindSurges restores the Deployments a --surge drain left surged for pods of node
// (uncordon undoes what the drain left): a deployment.restored event for each (Message
// "restored to N replicas", or Reason Changed and "kept at N replicas ..."), a pod.evicted
// event (Reason SurgeSurplus) for each surplus Ready pod evicted first. It returns the
// failures, one line each. A user who may not list Deployments has no surge to restore as
// far as an uncordon can tell: that is not a failure.
func (o *Operator) unwindSurges(ctx context.Context, req Request, node string, events chan<- event.Event) []string {
	s := surge.New(o.Kube)
	pending, err := s.Pending(ctx, []string{node})
	if apierrors.IsForbidden(err) {
		o.logger().V(2).Info("cannot look for surged deployments", "err", err)
		return nil
	}
	if err != nil {
		return []string{oneLine(err)}
	}
	var failed []string
	for _, t := range pending {
		ev := event.Event{Type: event.EventDeploymentRestored, Node: node, Pod: t.Pod, Deployment: t.Key(), DryRun: dryRunLabel(req.Drain.DryRun)}
		if req.Drain.DryRun != drain.DryRunNone {
			ev.Message = fmt.Sprintf("restored to %d replicas", t.Replicas)
			o.emit(events, ev)
			continue
		}
		res, evicted, err := s.Unwind(ctx, t.Namespace, t.Name)
		for _, p := range evicted {
			o.emit(events, event.Event{Type: event.EventPodEvicted, Node: node, Pod: p, Deployment: t.Key(), Reason: ReasonSurgeSurplus,
				Message: fmt.Sprintf("surplus of deployment.apps/%s", t.Name)})
		}
		switch {
		case err != nil:
			failed = append(failed, oneLine(err))
		case res.Already:
		case res.Changed:
			ev.Reason = "Changed"
			ev.Message = fmt.Sprintf("kept at %d replicas (scaled by someone else during the surge); surge record removed", res.Replicas)
			o.emit(events, ev)
		default:
			ev.Message = fmt.Sprintf("restored to %d replicas", res.Replicas)
			o.emit(events, ev)
		}
	}
	return failed
}

// oneLine is err's message folded onto one line.
func oneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }

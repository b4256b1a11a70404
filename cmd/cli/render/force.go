package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
)

// Dead nodes and force (planned maintenance): the lines of a forced pod, a pod left on a
// dead node, a node deleted while it drained, and what a plan would force.

// forceEvent prints the human line of a dead-node or force event; it reports whether ev
// was one.
func (p *Human) forceEvent(ev event.Event) bool {
	switch {
	case ev.Type == event.EventPodForced:
		fmt.Fprintf(p.ErrOut, "Warning: %s\n", ev.Message)
	case ev.Type == event.EventPodLeft:
		fmt.Fprintf(p.ErrOut, "Warning: %s\n", ev.Message)
	case ev.Type == event.EventNodeGone:
		fmt.Fprintf(p.Out, "node/%s gone: %s\n", ev.Node, ev.Message)
	case ev.Type == event.EventPodEvicted && ev.Reason == event.ReasonForced:
		fmt.Fprintf(p.Out, "pod/%s deleted (forced)\n", PodName(ev.Pod))
	default:
		return false
	}
	return true
}

// forceSummary writes the pods forced, the pods left on dead nodes and the nodes gone.
func forceSummary(w io.Writer, sum drain.Summary) {
	if sum.PodsForced > 0 {
		fmt.Fprintf(w, "Forced pods (deleted below their budgets, --on-blocked=force): %d\n", sum.PodsForced)
		for _, f := range sum.Forced {
			b := f.Budget
			fmt.Fprintf(w, " %s on %s: pdb %s (healthy %d, desired %d, allowed %d)\n", f.Pod, f.Node, f.PDB, b.CurrentHealthy, b.DesiredHealthy, b.DisruptionsAllowed)
		}
	}
	if sum.PodsLeftOnDeadNodes > 0 {
		fmt.Fprintf(w, "Pods left on dead nodes (deletion started, left to the node's return or removal): %d\n", sum.PodsLeftOnDeadNodes)
	}
	if len(sum.NodesGone) > 0 {
		fmt.Fprintf(w, "Nodes deleted while they drained (their pods went with them): %s\n", strings.Join(sum.NodesGone, ", "))
	}
}

// planForce writes what a plan under --on-blocked=force would force.
func planForce(w io.Writer, plan *event.Plan) {
	if plan.ForceAfter == 0 {
		return
	}
	if len(plan.WouldForce) == 0 {
		fmt.Fprintf(w, "\nforce (--on-blocked=force --force-after %s): no pod's budget allows nothing now; none would be forced as things stand\n", plan.ForceAfter)
		return
	}
	fmt.Fprintf(w, "\nforce (--on-blocked=force --force-after %s): %d pod(s) whose budget allows nothing now would be deleted, not evicted, once blocked that long:\n", plan.ForceAfter, len(plan.WouldForce))
	for _, b := range plan.WouldForce {
		fmt.Fprintf(w, "  would force pod %s on %s: pdb %s: %s; forced once blocked %s\n", b.Pod, b.Node, b.PDB, b.Message, plan.ForceAfter)
	}
}

package operation

import (
	"fmt"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
)

// ReasonLeftToKarpenter is the warning's Reason for a node left to Karpenter.
const ReasonLeftToKarpenter = "LeftToKarpenter"

// leaveDisrupting takes out of names the nodes Karpenter is already disrupting (taint
// karpenter.sh/disrupted) for a drain or a move without IncludeDisrupting: Karpenter
// drains and deletes them itself, and a second drainer only races it. Each node left is one
// warning event; left lists them (nil when none is).
func (o *Operator) leaveDisrupting(req Request, names []string, disrupting map[string]bool, events chan<- event.Event) (keep []string, left *drain.DisruptingError) {
	if req.IncludeDisrupting || len(disrupting) == 0 || (req.Action != Drain && req.Action != Move) {
		return names, nil
	}
	for _, n := range names {
		if !disrupting[n] {
			keep = append(keep, n)
			continue
		}
		if left == nil {
			left = &drain.DisruptingError{}
		}
		left.Nodes = append(left.Nodes, n)
		o.emit(events, event.Event{Type: event.EventWarning, Node: n, Reason: ReasonLeftToKarpenter, DryRun: dryRunLabel(req.Drain.DryRun),
			Message: fmt.Sprintf("node/%s left to Karpenter, which is already disrupting it (taint %s): not cordoned, not drained", n, drain.KarpenterDisruptedTaint)})
	}
	return keep, left
}

package drain

import (
	"context"
	"fmt"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

// dryRun walks the plan without changing anything. Client: nothing is sent; the events
// say what would happen, in plan order. Server: the cordon and every eviction are sent
// with dryRun=All, so the API server validates and admits them without persisting; each
// eviction is judged against the same untouched budget, which is why the plan (not the
// server) says which pods would wait.
func (e *Engine) dryRun(ctx context.Context, pf *preflight) (Summary, error) {
	var sum Summary
	mode := string(e.cfg.DryRun)
	// Every node is cordoned before any is drained, as in the real run.
	failed := map[string]bool{}
	for _, np := range pf.plan.Nodes {
		already := np.AlreadyCordoned
		if e.cfg.DryRun == DryRunServer {
			var err error
			if already, err = Cordon(ctx, e.cfg.Client, pf.nodes[np.Name], true); err != nil {
				e.emit(event.Event{Type: event.EventNodeFailed, Node: np.Name, Message: err.Error(), DryRun: mode})
				sum.NodesFailed++
				failed[np.Name] = true
				continue
			}
		}
		e.emit(event.Event{Type: event.EventNodeCordoned, Node: np.Name, Already: already, DryRun: mode})
	}
	for _, np := range pf.plan.Nodes {
		if failed[np.Name] {
			continue
		}
		for _, s := range np.Steps {
			key := s.Pod.Namespace + "/" + s.Pod.Name
			e.emit(event.Event{Type: event.EventEvictionStarted, Node: np.Name, Pod: key, Wave: s.Wave, DryRun: mode})
			if s.Wave == 0 {
				e.emit(event.Event{Type: event.EventEvictionBlocked, Node: np.Name, Pod: key, PDB: pdb.JoinKeys(s.Decision.Budgets),
					Reason: string(s.Decision.Verdict), Message: s.Blocker, Cause: s.Cause, Remedy: s.Remedy, DryRun: mode})
				continue
			}
			if e.surgeDryRun(np.Name, s, mode) {
				sum.PodsEvicted++
				continue // --surge: said, not sent (surge.go)
			}
			if e.cfg.DryRun == DryRunServer {
				sum.Evictions++
				ans := classify(e.evict(ctx, s.Pod, true))
				if ans.outcome != accepted && ans.outcome != gone {
					sum.Refusals++
					e.emit(event.Event{Type: event.EventEvictionBlocked, Node: np.Name, Pod: key, PDB: ans.pdb, Reason: "DryRunRefused",
						Message: ans.message, RetryAfter: ans.retryAfter, DryRun: mode})
					continue
				}
			}
			e.emit(event.Event{Type: event.EventPodEvicted, Node: np.Name, Pod: key, Wave: s.Wave, DryRun: mode})
			sum.PodsEvicted++ // would be: the summary matches the lines above it
		}
		e.emit(event.Event{Type: event.EventNodeDrained, Node: np.Name, DryRun: mode})
		sum.NodesDrained++
	}
	if sum.NodesFailed > 0 {
		return sum, fmt.Errorf("%d of %d nodes failed the dry run", sum.NodesFailed, len(pf.plan.Nodes))
	}
	return sum, nil
}

package drain

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

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
	forced := map[string]bool{} // node/ns/pod: --on-blocked=force would delete it
	for _, b := range pf.plan.WouldForce {
		forced[b.Node+"/"+b.Pod] = true
	}
	var never []BlockedNode    // the nodes a real run would not empty as things stand
	var wouldForce []ForcedPod // the pods a real run would delete (--on-blocked=force)
	for _, np := range pf.plan.Nodes {
		if failed[np.Name] {
			continue
		}
		var left []event.Blocker
		for _, s := range np.Steps {
			key := s.Pod.Namespace + "/" + s.Pod.Name
			e.emit(event.Event{Type: event.EventEvictionStarted, Node: np.Name, Pod: key, Wave: s.Wave, DryRun: mode})
			if s.Wave == 0 {
				b := event.Blocker{Node: np.Name, Pod: key, PDB: pdb.JoinKeys(s.Decision.Budgets), Message: s.Blocker, Cause: s.Cause, Remedy: s.Remedy}
				e.emit(event.Event{Type: event.EventEvictionBlocked, Node: np.Name, Pod: key, PDB: b.PDB,
					Reason: string(s.Decision.Verdict), Message: s.Blocker, Cause: s.Cause, Remedy: s.Remedy, DryRun: mode})
				if e.cfg.OnBlocked == OnBlockedForce && forced[np.Name+"/"+key] {
					e.emit(event.Event{Type: event.EventPodForced, Node: np.Name, Pod: key, PDB: b.PDB, Reason: ReasonPodForced, DryRun: mode,
						Message: fmt.Sprintf("pod %s would be deleted below its budget once blocked for --force-after (--on-blocked=force)", key)})
					wouldForce = append(wouldForce, ForcedPod{Node: np.Name, Pod: key, PDB: b.PDB})
					continue
				}
				left = append(left, b)
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
		if len(left) > 0 {
			never = append(never, e.dryRunBlocked(np.Name, left, mode, &sum))
			continue
		}
		e.emit(event.Event{Type: event.EventNodeDrained, Node: np.Name, DryRun: mode})
		sum.NodesDrained++
	}
	switch {
	case sum.NodesFailed > 0:
		return sum, fmt.Errorf("%d of %d nodes failed the dry run", sum.NodesFailed, len(pf.plan.Nodes))
	case len(never) > 0:
		return sum, &WouldBlockError{Nodes: never}
	case len(wouldForce) > 0:
		return sum, &WouldForceError{Pods: wouldForce}
	}
	return sum, nil
}

// dryRunBlocked ends a dry run's node that holds pods no eviction can move as things
// stand. It is never drained. Under --on-blocked=skip, when every such pod waits on a
// budget (as the real run decides, nodeBlocked), it is said blocked (EventNodeBlocked): the
// real run would give it up after --blocked-after. Otherwise it is left pending: the real
// run would wait (a pod no budget holds, as one karpenter.sh/do-not-disrupt keeps, is
// never given up).
func (e *Engine) dryRunBlocked(node string, left []event.Blocker, mode string, sum *Summary) BlockedNode {
	budgets := map[string]bool{}
	onBudgets := true
	for _, b := range left {
		onBudgets = onBudgets && b.PDB != ""
		for _, k := range strings.Split(b.PDB, ",") {
			if k != "" {
				budgets[k] = true
			}
		}
	}
	keys := slices.Sorted(maps.Keys(budgets))
	reason := fmt.Sprintf("%d pod(s) no eviction can move", len(left))
	if len(keys) > 0 {
		reason += " (pdb " + strings.Join(keys, ", pdb ") + ")"
	}
	bn := BlockedNode{Node: node, Reason: reason, Blockers: left}
	if e.cfg.OnBlocked == OnBlockedSkip && onBudgets {
		bn.GivenUp = true
		e.emit(event.Event{Type: event.EventNodeBlocked, Node: node, Reason: "Blocked", PDB: strings.Join(keys, ","), DryRun: mode,
			Message: "would be given up after --blocked-after (--on-blocked=skip): " + reason})
	}
	sum.NodesPending++
	sum.PendingNodes = append(sum.PendingNodes, node)
	sum.PendingBlocks = append(sum.PendingBlocks, left...)
	sum.PodsPending += len(left)
	if sum.LeftOn == nil {
		sum.LeftOn = map[string]int{}
	}
	sum.LeftOn[node] = len(left)
	return bn
}

// WouldBlockError is a dry run whose nodes hold pods no eviction can move as things
// stand: the real run would wait for them (until --timeout, if set) or, under
// --on-blocked=skip, give those blocked by budgets up. Blocked by policy, as plan says for
// the same nodes (exit 3).
type WouldBlockError struct{ Nodes []BlockedNode }

func (e *WouldBlockError) Error() string {
	var parts []string
	for _, n := range e.Nodes {
		what := "would wait"
		if n.GivenUp {
			what = "would be given up"
		}
		var pods []string
		for _, b := range n.Blockers {
			pods = append(pods, fmt.Sprintf("pod %s: %s", b.Pod, b.Message))
		}
		parts = append(parts, fmt.Sprintf("node %s %s: %s", n.Node, what, strings.Join(pods, "; ")))
	}
	return fmt.Sprintf("%d node(s) would not drain as things stand: %s", len(e.Nodes), strings.Join(parts, "; "))
}

// Blocked marks a WouldBlockError as blocked by policy.
func (e *WouldBlockError) Blocked() bool { return true }

// WouldForceError is a dry run under --on-blocked=force that would finish only by
// deleting pods below their budgets: the real run's exit (5), nothing deleted.
type WouldForceError struct{ Pods []ForcedPod }

func (e *WouldForceError) Error() string {
	var parts []string
	for _, p := range e.Pods {
		parts = append(parts, fmt.Sprintf("%s on %s (pdb %s)", p.Pod, p.Node, p.PDB))
	}
	return fmt.Sprintf("would finish by force: %d pod(s) would be deleted below their budgets once blocked for --force-after: %s",
		len(e.Pods), strings.Join(parts, "; "))
}

// Forced marks the error for the exit-code mapping (a real run would have forced).
func (e *WouldForceError) Forced() bool { return true }

package drain

import (
	"context"
	"fmt"
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
	var never []BlockedNode // the nodes a real run would not empty as things stand
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
					e.emit(event.Event{Type: event.EventPodForced, Node: np.Name, Pod: key, PDB: b.PDB, DryRun: mode,
						Message: fmt.Sprintf("pod %s would be deleted below its budget once the node is blocked for --blocked-after (--on-blocked=force)", key)})
					sum.PodsForced++
					sum.Forced = append(sum.Forced, ForcedPod{Node: np.Name, Pod: key, PDB: b.PDB})
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
	case len(never) > 0 && e.cfg.OnBlocked == OnBlockedSkip:
		sum.Skipped = never
		return sum, &SkippedError{Nodes: never}
	case len(never) > 0:
		return sum, &WouldWaitError{Nodes: never}
	case sum.PodsForced > 0:
		return sum, &ForcedError{Pods: sum.Forced}
	}
	return sum, nil
}

// dryRunBlocked ends a dry run's node that holds pods no eviction can move as things
// stand: under --on-blocked=skip it is given up (EventNodeBlocked), as the real run would
// after --blocked-after; otherwise it is left pending, as the real run would wait. Either
// way it is not drained.
func (e *Engine) dryRunBlocked(node string, left []event.Blocker, mode string, sum *Summary) BlockedNode {
	var pods []string
	for _, b := range left {
		pods = append(pods, fmt.Sprintf("pod %s: %s", b.Pod, b.Message))
	}
	bn := BlockedNode{Node: node, Reason: strings.Join(pods, "; "), Blockers: left}
	if e.cfg.OnBlocked == OnBlockedSkip {
		e.emit(event.Event{Type: event.EventNodeBlocked, Node: node, Reason: "Blocked", DryRun: mode,
			Message: "would be given up after --blocked-after (--on-blocked=skip): " + bn.Reason})
	} else {
		sum.NodesPending++
		sum.PendingNodes = append(sum.PendingNodes, node)
		sum.PendingBlocks = append(sum.PendingBlocks, left...)
	}
	sum.PodsPending += len(left)
	if sum.LeftOn == nil {
		sum.LeftOn = map[string]int{}
	}
	sum.LeftOn[node] = len(left)
	return bn
}

// WouldWaitError is a dry run (--on-blocked=wait) whose nodes hold pods no eviction can
// move as things stand: the real run would wait for their budgets to change (or end at
// --timeout). Blocked by policy, as plan says for the same nodes (exit 3).
type WouldWaitError struct{ Nodes []BlockedNode }

func (e *WouldWaitError) Error() string {
	var parts []string
	for _, n := range e.Nodes {
		parts = append(parts, fmt.Sprintf("node %s: %s", n.Node, n.Reason))
	}
	return fmt.Sprintf("%d node(s) would not drain as things stand (a real run waits for the budgets to change, or --timeout): %s",
		len(e.Nodes), strings.Join(parts, "; "))
}

// Blocked marks a WouldWaitError as blocked by policy.
func (e *WouldWaitError) Blocked() bool { return true }

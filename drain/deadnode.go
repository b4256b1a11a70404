package drain

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

// Dead nodes and nodes deleted mid-drain. A node whose Ready condition is Unknown or
// False when the plan is made is dead: no kubelet confirms its pods' deletions, so a
// drain would wait for ever for pods that are already being deleted. Its pods are still
// evicted through the Eviction API (budgets honoured), with a short grace period unless
// the user set one, and a pod whose deletion started on it blocks the node for at most
// DeadNodeDeleteWait (kubectl's --skip-wait-for-delete-timeout, on by default for dead
// nodes, as Cluster API does for unreachable nodes). The pods left so are counted
// (Summary.PodsLeftOnDeadNodes): they go when the node comes back or is removed.
// A node deleted while it drains ends its drain at once, gone: neither drained nor failed.

// Defaults of dead nodes.
const (
	// DefaultDeadNodeDeleteWait is how long a pod whose deletion started on a dead node
	// still blocks it.
	DefaultDeadNodeDeleteWait = 10 * time.Second
	// DeadNodeGracePeriodSeconds is the grace period of the evictions of a dead node's
	// pods when the user set none (Cluster API's 1 s for unreachable nodes).
	DeadNodeGracePeriodSeconds = 1
)

// NodeDead says why n is dead, "" when it is not: its Ready condition is Unknown or
// False (with since when and the condition's reason).
func NodeDead(n *corev1.Node) string {
	for _, c := range n.Status.Conditions {
		if c.Type != corev1.NodeReady || c.Status == corev1.ConditionTrue {
			continue
		}
		why := fmt.Sprintf("Ready=%s", c.Status)
		if !c.LastTransitionTime.IsZero() {
			why += " since " + c.LastTransitionTime.UTC().Format(time.RFC3339)
		}
		if c.Reason != "" {
			why += " (" + c.Reason + ")"
		}
		return why
	}
	return ""
}

// deadNodeDeleteWait is the dead-node wait in force (<0: for ever).
func (c *Config) deadNodeDeleteWait() time.Duration {
	if c.DeadNodeDeleteWait == 0 {
		return DefaultDeadNodeDeleteWait
	}
	return c.DeadNodeDeleteWait
}

// planDeadAndForce marks the plan's dead nodes (with a warning said once, in plan and in
// the drain) and, under force, lists the pods that would be forced.
func (e *Engine) planDeadAndForce(pf *preflight, nodePlans map[string]*event.NodePlan) {
	for name, np := range nodePlans {
		n := pf.nodes[name]
		if n == nil {
			continue
		}
		if np.Dead = NodeDead(n); np.Dead == "" {
			continue
		}
		grace := fmt.Sprintf("a %ds grace period", DeadNodeGracePeriodSeconds)
		if e.cfg.GracePeriodSeconds >= 0 {
			grace = fmt.Sprintf("the %ds grace period of --grace-period", e.cfg.GracePeriodSeconds)
		}
		wait := fmt.Sprintf("a pod whose deletion started is not waited for after %s (--dead-node-delete-wait)", e.cfg.deadNodeDeleteWait())
		if e.cfg.deadNodeDeleteWait() < 0 {
			wait = "pods whose deletion started are waited for (--dead-node-delete-wait 0)"
		}
		np.Warnings = append(np.Warnings, fmt.Sprintf("node %s is not ready (%s): its pods are evicted with %s, budgets honoured; %s", name, np.Dead, grace, wait))
	}
	if e.cfg.OnBlocked != OnBlockedForce {
		return
	}
	never := map[string]bool{}
	for _, k := range e.cfg.NeverForce {
		never[k] = true
	}
	pf.plan.ForceAfter = e.cfg.ForceAfter
	var nodes []event.NodePlan
	for _, n := range pf.plan.Nodes {
		nodes = append(nodes, *nodePlans[n.Name])
	}
	pf.plan.WouldForce = wouldForce(nodes, never)
}

// graceLocked is the grace period of pod's eviction or deletion: the user's, else on a
// dead node DeadNodeGracePeriodSeconds, else the pod's own (-1).
func (r *run) graceLocked(p *corev1.Pod) int {
	if r.e.cfg.GracePeriodSeconds >= 0 {
		return r.e.cfg.GracePeriodSeconds
	}
	if r.planned.dead[p.Spec.NodeName] != "" {
		return DeadNodeGracePeriodSeconds
	}
	return -1
}

// skipWaitLocked is how long after its deletion started a pod of node still blocks it (0:
// for ever): --skip-wait-for-delete-timeout, or on a dead node the shorter dead-node wait.
// dead reports that the dead-node wait is the one in force.
func (r *run) skipWaitLocked(node string) (d time.Duration, dead bool) {
	d = time.Duration(r.e.cfg.SkipWaitForDeleteTimeoutSeconds) * time.Second
	if w := r.e.cfg.deadNodeDeleteWait(); w > 0 && r.planned.dead[node] != "" && (d == 0 || w < d) {
		return w, true
	}
	return d, false
}

// leftOnDeadLocked says and counts a pod of a dead node no longer waited for.
func (r *run) leftOnDeadLocked(st *podState, cur *corev1.Pod) {
	r.sum.PodsLeftOnDeadNodes++
	since := r.e.cfg.Clock.Since(cur.DeletionTimestamp.Time).Round(time.Second)
	r.e.emit(event.Event{Type: event.EventPodLeft, Node: st.node, Pod: st.key, Reason: "DeadNode",
		Message: fmt.Sprintf("pod %s on dead node %s: its grace period ended %s ago and no kubelet confirms its deletion; not waited for (left to the node's return or removal)", st.key, st.node, since)})
}

// nodeGone ends the node's drain at once because the node was deleted: its pods went
// with it. It is neither drained nor failed (Summary.NodesGone); nothing is written on
// it (it no longer exists).
func (r *run) nodeGone(name string) {
	r.lock()
	defer r.unlock()
	ns := r.nodes[name]
	if ns == nil || !ns.pol.held || ns.finished || ns.failing {
		return
	}
	ns.pol.held = false
	ns.finished = true
	left := 0
	for _, st := range ns.byUID {
		if st.phase == finished {
			continue
		}
		left++
		st.phase = finished
		r.budgets.leftLocked(st)
	}
	r.sum.NodesGone = append(r.sum.NodesGone, name)
	r.e.emit(event.Event{Type: event.EventNodeGone, Node: name, Reason: "NodeDeleted",
		Message: fmt.Sprintf("node %s was deleted while it drained: its drain ends, %d pod(s) not evicted went with it", name, left)})
	close(ns.finishedCh)
	r.checkAllDoneLocked()
}

// forceVerdict decides whether a pod of a node blocked for ForceAfter is forced: it must
// wait on a budget (parkedOn: pods a drain rule keeps and pods held back or in flight do
// not), and none of its budgets may be in never. It returns "" when the pod is forced,
// else why not.
func forceVerdict(parkedOn []string, never map[string]bool) string {
	if len(parkedOn) == 0 {
		return "not waiting on a budget"
	}
	for _, k := range parkedOn {
		if never[k] {
			return "pdb " + k + " is never forced (--never-force)"
		}
	}
	return ""
}

// wouldForce lists the plan's pods that would be forced if they stayed blocked: those
// whose budget allows nothing now (by the plan's verdict), not in never.
func wouldForce(nodes []event.NodePlan, never map[string]bool) []event.Blocker {
	var out []event.Blocker
	for _, n := range nodes {
		for _, s := range n.Steps {
			if s.Decision.Goes() || len(s.Decision.Budgets) == 0 {
				continue
			}
			switch s.Decision.Verdict {
			case pdb.Exhausted, pdb.Never, pdb.Multiple, pdb.Negative:
			default:
				continue
			}
			var keys []string
			for _, b := range s.Decision.Budgets {
				keys = append(keys, b.Key())
			}
			if forceVerdict(keys, never) != "" {
				continue
			}
			out = append(out, event.Blocker{Node: n.Name, Pod: s.Pod.Namespace + "/" + s.Pod.Name, PDB: pdb.JoinKeys(s.Decision.Budgets), Message: s.Decision.Reason})
		}
	}
	return out
}

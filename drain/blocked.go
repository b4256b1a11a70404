package drain

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

// The run's side of the Policy: --on-blocked=skip gives up a node blocked for
// BlockedAfter, --on-blocked=fail stops new nodes on a blocker that can never clear, and
// --not-after keeps nodes from starting after the deadline.

// gate applies the policy before anything is cordoned: --on-blocked=fail with a blocker
// the plan says can never clear, or a --not-after deadline already passed, stops the run
// with nothing changed.
func (e *Engine) gate(pf *preflight) (Summary, error) {
	if e.cfg.OnBlocked == OnBlockedFail {
		if bl := pf.plan.Blocked(); len(bl) > 0 {
			return Summary{NodesPending: len(pf.plan.Nodes)}, &StoppedError{Blockers: bl, BeforeCordon: true}
		}
	}
	if e.cfg.NotAfter.IsZero() || e.cfg.Clock.Now().Before(e.cfg.NotAfter) {
		return Summary{}, nil
	}
	var names []string
	for _, n := range pf.plan.Nodes {
		names = append(names, n.Name)
		e.emit(event.Event{Type: event.EventNodeNotStarted, Node: n.Name, Reason: "NotAfter",
			Message: fmt.Sprintf("not started: --not-after %s has passed", e.cfg.NotAfter.UTC().Format(time.RFC3339))})
	}
	return Summary{NotStarted: names}, &NotStartedError{NotAfter: e.cfg.NotAfter, Nodes: names}
}

// movedLocked records progress on the node (see nodePolicy.movedAt).
func (r *run) movedLocked(node string) {
	if ns := r.nodes[node]; ns != nil {
		ns.pol.movedAt = r.e.cfg.Clock.Now()
	}
}

// budgetMovedLocked records progress on the nodes of the pods waiting on a budget whose
// status numbers changed, and reports whether they did.
func (r *run) budgetMovedLocked(key string, p *policyv1.PodDisruptionBudget) bool {
	s := p.Status
	nums := fmt.Sprintf("%d/%d/%d/%d/%d", s.DisruptionsAllowed, s.CurrentHealthy, s.DesiredHealthy, s.ExpectedPods, len(s.DisruptedPods))
	if r.pol.numbers == nil {
		r.pol.numbers = map[string]string{}
	}
	old, seen := r.pol.numbers[key]
	moved := seen && old != nums
	if moved {
		for _, st := range r.budgets.parkedLocked(key) {
			r.movedLocked(st.node)
		}
	}
	r.pol.numbers[key] = nums
	// A budget that now never allows a disruption wakes nobody (it has no room): under
	// --on-blocked=fail its waiting pods stop the run here.
	if b := r.budgets.budgetLocked(key); b != nil && r.e.cfg.OnBlocked == OnBlockedFail {
		if never, why := b.NeverAllows(); never {
			for _, st := range r.budgets.parkedLocked(key) {
				if !r.nodes[st.node].finished {
					r.stopOnNeverLocked(st, string(pdb.Never), why)
				}
			}
		}
	}
	return moved
}

// skipNodeLocked gives the node up: first its state (noderecord.StateBlocked, with why) and its
// Event are written, then it is recorded as skipped, so that both are on the node before
// the run can end.
func (r *run) skipNodeLocked(ns *nodeState) {
	ns.pol.skipping = true
	bn := r.blockedNodeLocked(ns)
	r.later(func() {
		if err := r.hold.setState(r.ctx, ns, noderecord.StateBlocked, bn.Reason); err != nil {
			r.e.cfg.Logger.V(2).Info("could not record the blocked state", "node", ns.name, "err", err)
		}
		r.recordEvent(ns.name, corev1.EventTypeWarning, "DrainSkipped", fmt.Sprintf("kubectl-maintenance gave the node up (--on-blocked=skip): %s", bn.Reason))
		r.lock()
		defer r.unlock()
		if ns.finished {
			return
		}
		ns.finished, ns.pol.skipped = true, true
		for _, st := range ns.byUID {
			r.budgets.unparkLocked(st)
		}
		r.pol.skipped = append(r.pol.skipped, bn)
		var keys []string
		for _, b := range bn.Blockers {
			if b.PDB != "" && !contains(keys, b.PDB) {
				keys = append(keys, b.PDB)
			}
		}
		r.e.emit(event.Event{Type: event.EventNodeBlocked, Node: ns.name, PDB: strings.Join(keys, ","), Reason: "Blocked",
			Message: bn.Reason})
		close(ns.finishedCh)
		r.checkAllDoneLocked()
	})
}

// blockedNodeLocked describes what blocks the node: each pod left, as its wait stands
// now, and each budget with its current numbers, said once.
func (r *run) blockedNodeLocked(ns *nodeState) BlockedNode {
	bn := BlockedNode{Node: ns.name}
	budgets := map[string]bool{}
	var left []*podState
	for _, st := range ns.byUID {
		if st.phase != finished {
			left = append(left, st)
		}
	}
	sort.Slice(left, func(i, j int) bool { return left[i].key < left[j].key })
	said := map[string]bool{} // each cause said once, with the first pod
	for _, st := range left {
		keys := append([]string(nil), st.parkedOn...)
		sort.Strings(keys)
		b := event.Blocker{Node: ns.name, Pod: st.key, PDB: strings.Join(keys, ","), Message: st.blockMsg}
		if b.Message == "" {
			b.Message = "held back until the other pods are gone"
		}
		bn.Blockers = append(bn.Blockers, r.budgets.blockerLocked(st, b, said))
		for _, k := range keys {
			budgets[k] = true
		}
	}
	var parts, numbers []string
	for k := range budgets {
		if b := r.budgets.budgetLocked(k); b != nil {
			parts = append(parts, fmt.Sprintf("pdb %s (%s)", k, b.Numbers()))
			numbers = append(numbers, "pdb "+k+" "+b.Numbers())
		} else {
			parts = append(parts, "pdb "+k)
		}
	}
	sort.Strings(parts)
	bn.Reason = fmt.Sprintf("%d pod(s) blocked for %s by %s", len(bn.Blockers), r.e.cfg.BlockedAfter, strings.Join(parts, ", "))
	if len(bn.Blockers) > 0 {
		first := bn.Blockers[0]
		msg := first.Message
		for _, n := range numbers { // the numbers are said above: not a second time
			if rest, ok := strings.CutPrefix(msg, n); ok {
				msg = strings.TrimLeft(rest, ":; ")
			}
		}
		if msg == "" {
			bn.Reason += fmt.Sprintf("; pod %s waits on it", first.Pod)
		} else {
			bn.Reason += fmt.Sprintf("; pod %s: %s", first.Pod, msg)
		}
	}
	return bn
}

// stopOnNeverLocked is --on-blocked=fail meeting a blocker that can never clear during
// the run: the pod's node fails and no new node starts.
func (r *run) stopOnNeverLocked(st *podState, reason, message string) {
	if r.e.cfg.OnBlocked != OnBlockedFail || (reason != string(pdb.Never) && reason != string(pdb.Multiple)) {
		return
	}
	ns := r.nodes[st.node]
	if ns.pol.skipping || ns.finished {
		return // said once per node
	}
	ns.pol.skipping = true
	b := event.Blocker{Node: st.node, Pod: st.key, PDB: strings.Join(st.parkedOn, ","), Message: message}
	r.pol.stopped = append(r.pol.stopped, b) // from now on no node starts
	if w := r.roll; w != nil {
		r.later(w.stop) // a rolling drain waiting for room stops waiting
	}
	why := fmt.Sprintf("blocked (--on-blocked=fail): pod %s: %s", st.key, message)
	// As a skipped node: its state (noderecord.StateBlocked, with why) is on the node before the
	// node fails and the run can end, so that status says why it stays cordoned.
	r.later(func() {
		if err := r.hold.setState(r.ctx, ns, noderecord.StateBlocked, why); err != nil {
			r.e.cfg.Logger.V(2).Info("could not record the blocked state", "node", ns.name, "err", err)
		}
		r.lock()
		defer r.unlock()
		if !ns.finished {
			ns.pol.held = false // recorded blocked: not failed over it
			r.failNodeLocked(ns, why)
		}
	})
}

// mayStartLocked says why the node must not start ("" when it may): the --not-after
// deadline passed, or --on-blocked=fail stopped the run.
func (r *run) mayStartLocked() (reason, msg string) {
	switch {
	case len(r.pol.stopped) > 0:
		return "OnBlockedFail", "not started: --on-blocked=fail stopped the run"
	case !r.e.cfg.NotAfter.IsZero() && !r.e.cfg.Clock.Now().Before(r.e.cfg.NotAfter):
		return "NotAfter", fmt.Sprintf("not started: --not-after %s has passed", r.e.cfg.NotAfter.UTC().Format(time.RFC3339))
	}
	return "", ""
}

// stopUnstarted, for a run stopped (its context ended) before nodes started, records
// them as not started when the run could not have started them anyway (--not-after
// passed, --on-blocked=fail stopped it): a stop at the window's close (a controller's
// onWindowClose Stop, at the same instant as --not-after) lets them go as the deadline
// would, whichever of the two came first. Otherwise they stay as a pause leaves them.
func (r *run) stopUnstarted(nodes []event.NodePlan) {
	r.lock()
	defer r.unlock()
	if reason, msg := r.mayStartLocked(); reason != "" {
		r.notStartedLocked(nodes, reason, msg)
	}
}

// notStartedLocked records nodes that will not start, and lets go those the run holds
// (releaseNotStarted: a node it cordoned is uncordoned, or left cordoned to a run waiting
// for it; one another run took is left to it).
func (r *run) notStartedLocked(nodes []event.NodePlan, reason, msg string) {
	for _, np := range nodes {
		ns := r.nodes[np.Name]
		if ns.finished {
			continue
		}
		ns.finished, ns.pol.notStarted = true, true
		r.pol.notStarted = append(r.pol.notStarted, ns.name)
		r.e.emit(event.Event{Type: event.EventNodeNotStarted, Node: ns.name, Reason: reason, Message: msg})
		if ns.pol.held {
			name, here := ns.name, ns.pol.cordonedHere
			ns.pol.held = false
			r.releases.Add(1)
			r.later(func() {
				defer r.releases.Done()
				r.hold.releaseNotStarted(name, here)
			})
		}
		close(ns.finishedCh)
	}
	r.checkAllDoneLocked()
}

// policyResultLocked is the run's error when every node ended without a timeout or an
// interruption: --on-blocked=fail's stop, failed nodes, skipped nodes, nodes not started,
// in that order. It fills the summary's lists.
func (r *run) policyResultLocked() error {
	r.sum.Skipped = append([]BlockedNode(nil), r.pol.skipped...)
	sort.Slice(r.sum.Skipped, func(i, j int) bool { return r.sum.Skipped[i].Node < r.sum.Skipped[j].Node })
	r.sum.NotStarted = append([]string(nil), r.pol.notStarted...)
	switch {
	case len(r.pol.stopped) > 0:
		return &StoppedError{Blockers: r.pol.stopped}
	case r.sum.NodesFailed > 0:
		return r.steps.resultLocked()
	case len(r.sum.Skipped) > 0:
		return &SkippedError{Nodes: r.sum.Skipped}
	case len(r.sum.NotStarted) > 0:
		return &NotStartedError{NotAfter: r.e.cfg.NotAfter, Nodes: r.sum.NotStarted}
	}
	return nil
}

// pendingLocked drops the pods of skipped nodes from blockers (the summary lists them
// with their node).
func (r *run) pendingLocked(blockers []event.Blocker) []event.Blocker {
	out := blockers[:0:0]
	for _, b := range blockers {
		if ns := r.nodes[b.Node]; ns == nil || !ns.pol.skipped {
			out = append(out, b)
		}
	}
	return out
}

// leftLocked counts, by node, the pods the run leaves on its nodes: those still waiting
// (blockers: on nodes that failed, timed out or were interrupted) and those on the nodes
// it gave up. It fills Summary.LeftOn and returns the total (Summary.PodsPending).
// Call it after policyResultLocked (which lists the skipped nodes).
func (r *run) leftLocked(blockers []event.Blocker) int {
	left := map[string]int{}
	for _, b := range blockers {
		left[b.Node]++
	}
	for _, bn := range r.sum.Skipped {
		left[bn.Node] += len(bn.Blockers)
	}
	total := 0
	for _, c := range left {
		total += c
	}
	if len(left) > 0 {
		r.sum.LeftOn = left
	}
	return total
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// deadline fires at --not-after (never without one), so that a run waiting for a free
// slot stops waiting when it passes.
func (r *run) deadline() (<-chan time.Time, func()) {
	if r.e.cfg.NotAfter.IsZero() {
		return nil, func() {}
	}
	t := r.e.cfg.Clock.NewTimer(max(r.e.cfg.NotAfter.Sub(r.e.cfg.Clock.Now()), 0))
	return t.C(), func() { t.Stop() }
}

package drain

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

// Force at a deadline (--on-blocked=force --force-after D): a node whose pods have all
// been blocked for D by budgets whose current status did not move (the blocked clock of
// --on-blocked=skip, blockedclock.go: outages and statuses that are not current do not
// count) has its blocked pods deleted with a plain DELETE (UID precondition), not
// evicted. It is the one path of the tool that goes below a budget. Never forced: pods
// kubectl's filters keep (DaemonSet and mirror pods), pods a drain rule keeps (they
// never wait on a budget), and pods of a budget in NeverForce. Each forced pod is said
// (EventPodForced), recorded as a Warning Event on its budget and on its node, and
// counted apart; a run that forced anything ends with a *ForcedError.

// ReasonPodForced is the reason of the Warning Events recorded on a forced pod's budget
// and node.
const ReasonPodForced = "PodForced"

// ForcedError is a run that finished only by force: it deleted pods below their budgets
// under --on-blocked=force (exit 5); the nodes are drained.
type ForcedError struct{ Pods []ForcedPod }

func (e *ForcedError) Error() string {
	var parts []string
	for i, p := range e.Pods {
		if i == 5 {
			parts = append(parts, fmt.Sprintf("and %d more", len(e.Pods)-5))
			break
		}
		parts = append(parts, fmt.Sprintf("pod %s (pdb %s)", p.Pod, p.PDB))
	}
	return fmt.Sprintf("finished by force: %d pod(s) deleted below their budgets (--on-blocked=force): %s", len(e.Pods), strings.Join(parts, ", "))
}

// Forced marks the error for the exit-code mapping.
func (e *ForcedError) Forced() bool { return true }

func newPlannedState(pf *preflight, p Policy) plannedState {
	ps := plannedState{dead: map[string]string{}, never: map[string]bool{}, forcing: map[string]bool{}, forced: map[string]bool{}}
	for _, n := range pf.plan.Nodes {
		if n.Dead != "" {
			ps.dead[n.Name] = n.Dead
		}
	}
	for _, k := range p.NeverForce {
		ps.never[k] = true
	}
	return ps
}

// giveUpLocked is what a node blocked for the clock's limit comes to: skip gives it up,
// force deletes its blocked pods.
func (r *run) giveUpLocked(ns *nodeState) {
	if r.e.cfg.OnBlocked == OnBlockedForce {
		r.forceNodeLocked(ns)
		return
	}
	r.skipNodeLocked(ns)
}

// forceNodeLocked deletes every forceable pod of the node, each after a warning and a
// pod.forced event naming its budget and its numbers.
func (r *run) forceNodeLocked(ns *nodeState) {
	var pods []*podState
	for _, st := range ns.byUID {
		if st.phase == waiting && !r.planned.forcing[st.key] && forceVerdict(st.parkedOn, r.planned.never) == "" {
			pods = append(pods, st)
		}
	}
	pods = append(pods, r.blockedHeldBackLocked(ns)...) // past the deadline, whatever its tier
	sort.Slice(pods, func(i, j int) bool { return pods[i].key < pods[j].key })
	blockedFor := r.e.cfg.Clock.Since(ns.pol.movedAt).Round(time.Second)
	for _, st := range pods {
		keys := append([]string(nil), st.parkedOn...)
		if len(keys) == 0 { // held back (blockedHeldBackLocked): its budgets
			for _, b := range r.budgets.budgetsForLocked(st.pod) {
				keys = append(keys, b.Key())
			}
		}
		sort.Strings(keys)
		fp := ForcedPod{Node: st.node, Pod: st.key, PDB: strings.Join(keys, ","), BlockedFor: blockedFor}
		numbers := "pdb " + fp.PDB
		var budget *policyv1.PodDisruptionBudget
		if b := r.budgets.budgetLocked(keys[0]); b != nil {
			fp.Budget = budgetNumbers(b)
			numbers = fmt.Sprintf("pdb %s (%s)", keys[0], b.Numbers())
			budget = b.PDB
		}
		msg := fmt.Sprintf("forcing pod %s on node %s: blocked %s by %s; deleting it, not evicting it (--on-blocked=force --force-after %s)",
			st.key, st.node, blockedFor, numbers, r.e.cfg.ForceAfter)
		r.planned.forcing[st.key] = true
		r.budgets.unparkLocked(st)
		nb := fp.Budget
		r.e.emit(event.Event{Type: event.EventPodForced, Node: st.node, Pod: st.key, PDB: fp.PDB, Reason: ReasonPodForced, Message: msg, Budget: &nb})
		st, pod, grace := st, st.pod, r.forceGraceLocked(st.pod)
		r.later(func() {
			err := r.e.deletePod(r.ctx, pod, grace)
			if err == nil { // recorded once deleted: the Events say what was done
				note := fmt.Sprintf("kubectl-maintenance deleted pod %s below its budget: blocked %s by %s (--on-blocked=force)", st.key, blockedFor, numbers)
				if budget != nil {
					r.recordOn(budget, corev1.EventTypeWarning, ReasonPodForced, note)
				}
				r.recordEvent(st.node, corev1.EventTypeWarning, ReasonPodForced, note)
			}
			r.lock()
			defer r.unlock()
			r.forceAnsweredLocked(st, fp, err)
		})
	}
}

// blockedHeldBackLocked takes out of the node's held-back pods (order groups and tiers,
// order.go) those their budgets block as the parked ones are (exhausted, never, several
// or negative), none of them in NeverForce: a node past its force deadline has them
// forced at once with the others, not one tier after another.
func (r *run) blockedHeldBackLocked(ns *nodeState) []*podState {
	var out []*podState
	keep := ns.heldBack[:0]
	for _, st := range ns.heldBack {
		cur, exists := r.currentLocked(st)
		if !exists {
			keep = append(keep, st)
			continue
		}
		budgets := r.budgets.budgetsForLocked(cur)
		d := pdb.Decide(cur, budgets)
		var keys []string
		for _, b := range budgets {
			keys = append(keys, b.Key())
		}
		blocked := d.Verdict == pdb.Exhausted || d.Verdict == pdb.Never || d.Verdict == pdb.Multiple || d.Verdict == pdb.Negative
		if b := d.Budget(); b != nil && d.Consumes() && int(b.Allowed())-r.budgets.reservedLocked(b.Key()) <= 0 {
			blocked = true
		}
		if !blocked || len(keys) == 0 || forceVerdict(keys, r.planned.never) != "" || r.planned.forcing[st.key] {
			keep = append(keep, st)
			continue
		}
		out = append(out, st)
	}
	ns.heldBack = keep
	return out
}

// forceAnsweredLocked records the answer to a forced pod's DELETE.
func (r *run) forceAnsweredLocked(st *podState, fp ForcedPod, err error) {
	delete(r.planned.forcing, st.key)
	switch {
	case err == nil:
		r.planned.forced[st.key] = true
		r.sum.PodsForced++
		r.sum.Forced = append(r.sum.Forced, fp)
		if st.phase == finished {
			return
		}
		st.phase, st.acceptedAt = terminating, r.e.cfg.Clock.Now()
		r.movedLocked(st.node)
		r.addAfter(st.key, r.terminationCheckDelay(st.pod))
	case apierrors.IsNotFound(err):
		r.goneLocked(st)
	default:
		r.failNodeLocked(r.nodes[st.node], fmt.Sprintf("cannot delete pod %s (--on-blocked=force): %s", st.key, err))
	}
}

// forcedResultLocked is the run's result when nothing else went wrong: a *ForcedError
// when it forced pods, else nil.
func (r *run) forcedResultLocked() error {
	if len(r.sum.Forced) == 0 {
		return nil
	}
	sort.Slice(r.sum.Forced, func(i, j int) bool { return r.sum.Forced[i].Pod < r.sum.Forced[j].Pod })
	return &ForcedError{Pods: append([]ForcedPod(nil), r.sum.Forced...)}
}

// deletePod deletes pod with its UID as precondition (never a pod recreated under its
// name), with grace seconds when not negative: the force path's one DELETE.
func (e *Engine) deletePod(ctx context.Context, pod *corev1.Pod, grace int) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), evictionTimeout)
	defer cancel()
	opts := metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr.To(pod.UID)}}
	if grace >= 0 {
		opts.GracePeriodSeconds = ptr.To(int64(grace))
	}
	if err := e.cfg.Client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, opts); err != nil {
		return fmt.Errorf("delete pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return nil
}

func budgetNumbers(b *pdb.Budget) event.BudgetNumbers {
	s := b.PDB.Status
	return event.BudgetNumbers{CurrentHealthy: s.CurrentHealthy, DesiredHealthy: s.DesiredHealthy, ExpectedPods: s.ExpectedPods, DisruptionsAllowed: s.DisruptionsAllowed}
}

// forceGraceLocked is a forced deletion's grace in seconds: --grace-period's, else the
// pod's own (30 s when unset), never below 1 s (a grace of 0 removes the pod from etcd at
// once, before its kubelet stopped it: a StatefulSet could run two pods of one identity;
// Karpenter clamps likewise). With a --timeout, it is cut to the time left before it (less
// 2 s, at least 1 s), so that the pod is gone before the run gives up.
func (r *run) forceGraceLocked(p *corev1.Pod) int {
	grace := r.graceLocked(p)
	if grace < 0 {
		grace = 30
		if p.Spec.TerminationGracePeriodSeconds != nil {
			grace = int(*p.Spec.TerminationGracePeriodSeconds)
		}
	}
	if r.e.cfg.Timeout > 0 && !r.began.IsZero() {
		left := int((r.e.cfg.Timeout - r.e.cfg.Clock.Since(r.began) - 2*time.Second) / time.Second)
		grace = min(grace, left)
	}
	return max(grace, 1)
}

// reforceLocked deletes again, with the forced grace, a terminating pod past its force
// deadline (ForceAfter after its eviction, or after the run found it deleting) whose grace
// ends later than that: a pod terminating with 600 s of grace is not waited for past the
// force policy. It returns how long until the pod's deadline (0: passed, or no force).
func (r *run) reforceLocked(st *podState, cur *corev1.Pod) time.Duration {
	if r.e.cfg.OnBlocked != OnBlockedForce || st.reforced || cur.DeletionTimestamp == nil || r.planned.forcing[st.key] {
		return 0
	}
	now := r.e.cfg.Clock.Now()
	if wait := st.acceptedAt.Add(r.e.cfg.ForceAfter).Sub(now); wait > 0 {
		return wait
	}
	grace := r.forceGraceLocked(cur)
	left := cur.DeletionTimestamp.Sub(now)
	if left <= time.Duration(grace)*time.Second {
		return 0 // it ends sooner as it is
	}
	st.reforced = true
	r.planned.forcing[st.key] = true
	msg := fmt.Sprintf("forcing pod %s on node %s: still terminating %s after --force-after with %s of grace left; deleting it again with a grace of %ds (--on-blocked=force --force-after %s)",
		st.key, st.node, r.e.cfg.ForceAfter, left.Round(time.Second), grace, r.e.cfg.ForceAfter)
	r.e.emit(event.Event{Type: event.EventPodForced, Node: st.node, Pod: st.key, Reason: ReasonPodForced, Message: msg})
	fp := ForcedPod{Node: st.node, Pod: st.key, PDB: "", BlockedFor: r.e.cfg.Clock.Since(st.acceptedAt).Round(time.Second)}
	pod := cur
	r.later(func() {
		err := r.e.deletePod(r.ctx, pod, grace)
		if err == nil {
			r.recordEvent(st.node, corev1.EventTypeWarning, ReasonPodForced,
				fmt.Sprintf("kubectl-maintenance deleted pod %s again with a grace of %ds (--on-blocked=force)", st.key, grace))
		}
		r.lock()
		defer r.unlock()
		r.forceAnsweredLocked(st, fp, err)
	})
	return 0
}

package drain

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// The look at a node: when is it drained. A look lists the node's pods, registers the
// ones to evict, applies the drain rules' holds and, once nothing is left, waits for the
// node to be quiet (quiet.go) before it is recorded drained. These functions call each
// other in a ring (a look can ask for another), so they are one file.

// wakeAtLocked looks at h's node again once the duration of h's do-not-disrupt ends (once
// per held pod): the pod is then evicted as any other.
func (r *run) wakeAtLocked(ns *nodeState, h *heldPod) {
	until, _ := r.e.protected(h.pod)
	if until.IsZero() || h.woken {
		return
	}
	h.woken = true
	d := until.Sub(r.e.cfg.Clock.Now())
	r.later(func() {
		r.goroutine(func() {
			select {
			case <-r.e.cfg.Clock.After(d):
			case <-r.ctx.Done():
				return
			}
			r.lock()
			defer r.unlock()
			if !ns.finished {
				r.lookLocked(ns)
			}
		})
	})
}

// expiredLocked catches a pod left out while its do-not-disrupt duration protected it
// whose duration has ended before its node could finish (the node's other pods took
// longer): the node is looked at again, once per pod, so that the pod is evicted instead
// of left behind. It reports whether it asked for that look.
func (r *run) expiredLocked(ns *nodeState, p *corev1.Pod) bool {
	if !ns.ignored[p.UID] || ns.expired[p.UID] || p.Spec.NodeName != ns.name || r.e.cfg.IgnoreDoNotDisrupt || completed(p) {
		return false
	}
	if until, _ := protectedAt(p, r.e.cfg.Clock.Now); until.IsZero() || r.e.cfg.Clock.Now().Before(until) {
		return false
	}
	if ns.expired == nil {
		ns.expired = map[types.UID]bool{}
	}
	ns.expired[p.UID] = true
	delete(ns.ignored, p.UID)
	r.lookLocked(ns)
	return true
}

// lookLocked asks for a look at the node (one at a time; one more if asked meanwhile).
func (r *run) lookLocked(ns *nodeState) {
	if ns.looking {
		ns.lookAgain = true
		return
	}
	ns.looking = true
	r.later(func() { r.look(ns) })
}

// look lists the node's pods through kubectl's own filters (GetPodsForDeletion) and
// registers every pod to evict that the run does not know yet; with nothing left, the
// node is drained.
func (r *run) look(ns *nodeState) {
	list, errs := r.podsForDeletion(ns, ns.store) // pods.go
	r.lock()
	defer r.unlock()
	ns.looking = false
	if ns.finished || r.ctx.Err() != nil {
		return
	}
	if list == nil {
		// The list failed (the API server may be away): look again later.
		r.lookLaterLocked(ns)
		return
	}
	if len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, err := range errs {
			msgs[i] = err.Error()
		}
		sort.Strings(msgs) // kubectl builds them in map order
		r.failNodeLocked(ns, strings.Join(msgs, "; "))
		return
	}
	if !ns.started {
		ns.started = true
		ns.byUID, ns.ignored, ns.returned, ns.tolerating = map[types.UID]*podState{}, map[types.UID]bool{}, map[types.UID]bool{}, map[types.UID]string{}
	}
	toEvict := map[types.UID]bool{}
	var added []*podState
	for _, p := range list.Pods() {
		toEvict[p.UID] = true
		if ns.byUID[p.UID] != nil || ns.returned[p.UID] {
			continue
		}
		if r.returnedLocked(ns, &p) {
			continue
		}
		added = append(added, r.registerLocked(ns, &p))
	}
	for _, obj := range ns.store.List() {
		if p := obj.(*corev1.Pod); !toEvict[p.UID] && ns.byUID[p.UID] == nil {
			ns.ignored[p.UID] = true
		}
	}
	for _, st := range added {
		st.group = r.e.groupOf(st)
		if r.alreadyDeletingLocked(st, st.pod) {
			continue // waited for, never evicted (track.go)
		}
		ns.heldBack = append(ns.heldBack, st)
	}
	r.releaseGroupsLocked(ns)
	if ns.lookAgain {
		ns.lookAgain = false
		r.lookLocked(ns)
		return
	}
	if ns.remaining == 0 {
		r.finishNodeLocked(ns)
	}
}

// registerLocked makes p a pod the run evicts.
func (r *run) registerLocked(ns *nodeState, p *corev1.Pod) *podState {
	key := p.Namespace + "/" + p.Name
	wave := 1
	for _, s := range ns.plan.Steps {
		if s.Pod.UID == p.UID {
			wave = s.Wave
		}
	}
	st := &podState{pod: p, key: key, node: ns.name, wave: wave}
	if old := r.pods[key]; old != nil && old.phase != finished {
		r.goneLocked(old) // the pod of that name we knew is gone: this one is new
	}
	r.pods[key] = st
	ns.byUID[p.UID] = st
	ns.remaining++
	return st
}

// finishNodeLocked records the node drained (first the annotation, then the event).
func (r *run) finishNodeLocked(ns *nodeState) {
	if ns.finished || ns.finishing || ns.failing || r.holdLocked(ns) || !r.quietLocked(ns) {
		return
	}
	ns.finishing = true
	r.later(func() {
		state := noderecord.StateDrained
		if r.e.cfg.PodSelector != "" {
			state = noderecord.StateSelectedDrained // only the selected pods went
		}
		err := r.hold.setState(r.ctx, ns, state, "")
		var after []event.Event
		var stepErr error
		if err == nil && r.e.cfg.Steps != nil && r.readyForAfter(ns) {
			after, stepErr = r.e.cfg.Steps.After(r.ctx, ns.name) // Config.Steps (steps.go)
		}
		r.lock()
		ns.finishing = false
		switch {
		case ns.finished || r.ctx.Err() != nil:
		case err != nil && !transient(err):
			r.failNodeLocked(ns, err.Error())
		case err != nil || (stepErr != nil && stepTransient(stepErr)):
			r.lookLaterLocked(ns)
		case stepErr != nil:
			r.steps.failedLocked(ns, stepErr)
		case ns.remaining > 0 || ns.looking:
			// A pod arrived meanwhile; its eviction finishes the node.
		default:
			ns.finished = true
			r.sum.NodesDrained++
			r.e.emit(event.Event{Type: event.EventNodeDrained, Node: ns.name})
			for _, ev := range after {
				r.e.emit(ev)
			}
			close(ns.finishedCh)
			r.checkAllDoneLocked()
			r.later(func() {
				r.recordEvent(ns.name, corev1.EventTypeNormal, "Drained", "kubectl-maintenance evicted every pod")
			})
		}
		r.unlock()
	})
}

// quietLocked reports whether the node may be recorded drained now. Otherwise it starts,
// once, the settle and the volume wait, which finish the node when they end with nothing
// left on it.
func (r *run) quietLocked(ns *nodeState) bool {
	if ns.quiet {
		ns.quiet = false // taken by this finish; a later one waits again
		return true
	}
	if ns.quieting {
		return false
	}
	if r.e.cfg.Settle <= 0 && !r.e.cfg.WaitForVolumeDetach {
		return true
	}
	ns.quieting = true
	claims := removedClaimsLocked(ns)
	r.later(func() { r.goroutine(func() { r.quiet(ns, claims) }) })
	return false
}

// quiet runs the settle and the volume wait, then finishes the node if nothing arrived.
func (r *run) quiet(ns *nodeState, claims []string) {
	ctx := r.ctx
	r.lock()
	settleLeft := r.e.cfg.Settle - r.e.cfg.Clock.Since(ns.startedAt)
	r.unlock()
	if r.e.cfg.Settle > 0 {
		if settleLeft > 0 {
			select {
			case <-r.e.cfg.Clock.After(settleLeft):
			case <-ctx.Done():
				return
			}
		}
		if late, err := r.lastLook(ctx, ns); err != nil || late {
			r.lock()
			ns.quieting = false
			if err != nil {
				r.lookLaterLocked(ns) // the API server may be away: look again later
			}
			r.unlock()
			return
		}
	}
	if r.e.cfg.WaitForVolumeDetach && len(claims) > 0 {
		if err := r.waitVolumes(ctx, ns, claims); err != nil {
			r.lock()
			ns.quieting = false
			if ctx.Err() == nil {
				r.failNodeLocked(ns, err.Error())
			}
			r.unlock()
			return
		}
	}
	r.lock()
	defer r.unlock()
	ns.quieting = false
	if ns.finished || ctx.Err() != nil || ns.remaining > 0 || ns.looking {
		return // a pod arrived meanwhile: its eviction finishes the node
	}
	ns.quiet = true
	r.finishNodeLocked(ns)
}

// lastLook lists the node's pods from the API server and reports whether one the run has
// not judged is there (bound late). Such a pod is looked at once the node's informer has
// it (the look goes through the informer's store), at most a few seconds later.
func (r *run) lastLook(ctx context.Context, ns *nodeState) (late bool, err error) {
	sel := fields.OneTermEqualSelector("spec.nodeName", ns.name).String()
	list, err := r.e.cfg.Client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		return false, fmt.Errorf("list pods on node %s: %w", ns.name, err)
	}
	for i := range list.Items {
		p := &list.Items[i]
		r.lock()
		unknown := ns.byUID != nil && r.unknownLocked(ns, p)
		r.unlock()
		if !unknown {
			continue
		}
		r.waitInStore(ctx, ns, p)
		r.lock()
		r.lookLocked(ns)
		r.unlock()
		return true, nil
	}
	return false, nil
}

// lookLaterLocked takes another look at the node after retryDelay.
func (r *run) lookLaterLocked(ns *nodeState) {
	r.later(func() {
		r.goroutine(func() {
			select {
			case <-r.e.cfg.Clock.After(retryDelay):
			case <-r.ctx.Done():
				return
			}
			r.lock()
			if !ns.finished {
				r.lookLocked(ns)
			}
			r.unlock()
		})
	})
}

// holdLocked keeps ns from finishing while a pod on it is held by a rule (wait-completed
// not complete yet, do-not-disrupt), saying each such pod once (then every wait
// interval). It returns true when the node must wait.
func (r *run) holdLocked(ns *nodeState) bool {
	if ns.store == nil {
		return false
	}
	now := r.e.cfg.Clock.Now()
	held := false
	seen := map[string]bool{}
	for _, obj := range ns.store.List() {
		p := obj.(*corev1.Pod)
		if !r.e.selected(p) {
			continue // not part of the drain (--pod-selector, as kubectl): it holds nothing
		}
		if r.expiredLocked(ns, p) { // donotdisrupt.go
			held = true
			continue
		}
		ru, ok := r.e.holds(p)
		if !ok || p.Spec.NodeName != ns.name {
			continue
		}
		held = true
		key := p.Namespace + "/" + p.Name
		seen[key] = true
		if r.budgets.heldLocked(key) != nil {
			continue
		}
		h := &heldPod{node: ns.name, key: key, reason: ReasonWaitCompleted, since: now, pod: p}
		if ru == ruleDoNotDisrupt {
			h.reason = ReasonDoNotDisrupt
			r.wakeAtLocked(ns, h)
		}
		r.budgets.holdLocked(h)
	}
	r.budgets.letGoHeldLocked(ns.name, seen)
	return held
}

// goneLocked records that a pod left the node (evidence that frees its reservation), and
// takes a last look at the node when it was the last.
func (r *run) goneLocked(st *podState) {
	if st.phase == finished {
		return
	}
	st.phase = finished
	r.budgets.goneLocked(st)
	r.pace.sawGoneLocked(st)
	r.movedLocked(st.node)
	r.e.emit(r.goneEventLocked(st)) // counted as evicted, or as forced (force.go)
	ns := r.nodes[st.node]
	ns.remaining--
	if ns.finished {
		return
	}
	r.releaseGroupsLocked(ns)
	if ns.remaining == 0 {
		if r.storeHasUnknownLocked(ns) {
			r.lookLocked(ns)
		} else {
			r.finishNodeLocked(ns)
		}
	}
}

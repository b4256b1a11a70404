package drain

import (
	"context"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

// The disruption controller's holds, as the run sees them: a budget's status.disruptedPods
// entry whose name a replacement took (pdb.Holds) makes the budget allow one fewer until
// the entry is two minutes old. Each is said once, when the budget's pods are listed, as a
// warning: ReasonHoldCaused when the entry is this run's eviction (its pace outran the
// controller), ReasonHoldSeen otherwise. The wait line names the hold's end
// (diagnose.DisruptionHold), and no eviction of the budget is tried before it: the
// budget's status changes when the controller drops the entry, which wakes its pods.

const (
	// ReasonHoldCaused is a hold on an entry of this run's eviction.
	ReasonHoldCaused = "DisruptionControllerHoldCaused"
	// ReasonHoldSeen is a hold on an entry of someone else's eviction.
	ReasonHoldSeen = "DisruptionControllerHold"
)

// sawHoldsLocked says the holds among b's entries that pods (its pods as just listed)
// show, each once.
func (wd *waitDiag) sawHoldsLocked(b *pdb.Budget, pods []*corev1.Pod) {
	bs := wd.b
	if len(b.PDB.Status.DisruptedPods) == 0 {
		return
	}
	states := make(map[string]pdb.PodState, len(pods))
	for _, p := range pods {
		states[p.Name] = pdb.StateOf(p)
	}
	now := bs.now()
	for key, until := range wd.holds {
		if !until.After(now) {
			delete(wd.holds, key)
		}
	}
	for _, h := range pdb.HoldsOf(b.PDB, states, now) {
		id := b.Key() + "/" + h.Pod
		if _, said := wd.holds[id]; said {
			continue
		}
		if wd.holds == nil {
			wd.holds = map[string]time.Time{}
		}
		wd.holds[id] = h.Until
		pod := b.PDB.Namespace + "/" + h.Pod
		reason := ReasonHoldSeen
		if st := bs.host.podsLocked()[pod]; st != nil && st.attempts > 0 {
			reason = ReasonHoldCaused
		}
		bs.emit(event.Event{Type: event.EventWarning, Pod: pod, PDB: b.Key(), Reason: reason,
			RetryAfter: h.Until.Sub(now), Message: "pdb " + b.Key() + ": " + h.String()})
		bs.clearHoldLocked(b.Key(), h) // holdclear.go: only with Settings.ClearHolds
	}
}

// holdReadTimeout bounds the read of a budget after a refused eviction.
const holdReadTimeout = 10 * time.Second

// readHoldAfterLocked reads, once the lock is released, the budget of an eviction the
// server refused with 409. The API server writes the budget's disruptedPods entry for the
// name before it checks the eviction's UID precondition, so a 409 (the name is now another
// pod's) can leave an entry for a pod that is not going: the controller keeps it, counting
// that pod as disrupted, for two minutes. An entry written since the request was sent is
// such a hold, caused by this run, and said at once.
func (r *run) readHoldAfterLocked(ev *eviction) {
	if ev.budget == "" {
		return
	}
	key, ns, name, sent := ev.budget, ev.pod.Namespace, ev.pod.Name, ev.sentAt
	r.later(func() {
		_, pdbName, _ := strings.Cut(key, "/")
		ctx, cancel := context.WithTimeout(r.ctx, holdReadTimeout)
		p, err := r.e.cfg.Client.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, pdbName, metav1.GetOptions{})
		cancel()
		if err != nil {
			r.e.cfg.Logger.V(2).Info("could not read a budget after a refused eviction", "pdb", key, "err", err)
			return
		}
		at, ok := p.Status.DisruptedPods[name]
		if !ok || at.Time.Before(sent.Truncate(time.Second)) {
			return
		}
		r.lock()
		defer r.unlock()
		r.budgets.causedHoldLocked(key, pdb.Hold{Pod: name, Since: at.Time, Until: at.Add(pdb.DeletionTimeout)})
	})
}

// causedHoldLocked says a hold this run caused on the budget of key (a 409 after the
// server wrote its entry), once.
func (bs *budgets) causedHoldLocked(key string, h pdb.Hold) {
	wd := &bs.diag
	id := key + "/" + h.Pod
	if _, said := wd.holds[id]; said {
		return
	}
	if wd.holds == nil {
		wd.holds = map[string]time.Time{}
	}
	wd.holds[id] = h.Until
	ns, _, _ := strings.Cut(key, "/")
	bs.emit(event.Event{Type: event.EventWarning, Pod: ns + "/" + h.Pod, PDB: key, Reason: ReasonHoldCaused,
		RetryAfter: max(0, h.Until.Sub(bs.now())), Message: "pdb " + key + ": " + h.String() + "; written by this run's eviction, which the server then refused (409: the name is now another pod's)"})
}

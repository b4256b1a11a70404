package drain

import (
	"time"

	corev1 "k8s.io/api/core/v1"

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
	}
}

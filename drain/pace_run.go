package drain

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

// newPacing paces a run's evictions with margin (Config.PaceMargin).
func newPacing(c *core, run paceRun, margin time.Duration) pacing {
	return pacing{c: c, run: run, pacer: newPacer(margin)}
}

// turnLocked is the pacer's turn for an eviction the budget allows: 0 to send it now,
// else how long it waits (when the pace quickens or stops, it is woken sooner).
func (pc *pacing) turnLocked(st *podState, cur *corev1.Pod, d pdb.Decision) time.Duration {
	if d.Budget() == nil || !d.Consumes() {
		return 0 // no budget's allowance taken: the disruption controller does no work for it
	}
	return pc.turn(st.key, recreatedUnderItsName(cur), pc.c.cfg.Clock.Now()) // holdguard.go
}

// sendingLocked tells the hold guard an eviction is sent now (holdguard.go).
func (pc *pacing) sendingLocked(st *podState, cur *corev1.Pod) {
	pc.sending(st.key, recreatedUnderItsName(cur), pc.c.cfg.Clock.Now())
}

// answeredLocked ends an eviction's request, whatever the answer (holdguard.go).
func (pc *pacing) answeredLocked(st *podState) { pc.answered(st.key) }

// acceptedLocked follows an accepted eviction that took a budget's allowance.
func (pc *pacing) acceptedLocked(ev *eviction) {
	if ev.budget == "" {
		return
	}
	listed := false
	if b := pc.run.budgetLocked(ev.budget); b != nil {
		_, listed = b.PDB.Status.DisruptedPods[ev.pod.Name]
	}
	now := pc.c.cfg.Clock.Now()
	pc.acceptedEviction(ev.st.key, ev.pod.Name, ev.budget, recreatedUnderItsName(ev.pod), listed, now)
	if ev.st.phase == finished { // its informer saw it go before the answer came
		pc.gone(ev.st.key, now)
	}
}

// sawGoneLocked tells the pacer a pod is gone.
func (pc *pacing) sawGoneLocked(st *podState) {
	pc.gone(st.key, pc.c.cfg.Clock.Now())
}

// budgetSeenLocked tells the pacer a budget's status changed.
func (pc *pacing) budgetSeenLocked(p *policyv1.PodDisruptionBudget) {
	pc.sayLocked(pc.budgetSeen(p, pc.c.cfg.Clock.Now()))
}

// paceTicks looks every paceTick at entries that outlive their pods.
func (pc *pacing) paceTicks(ctx context.Context) {
	pc.c.every(ctx, paceTick, func() {
		pc.c.lock()
		pc.sayLocked(pc.check(pc.c.cfg.Clock.Now()))
		pc.c.unlock()
	})
}

// sayLocked says the pacer's changes in the event stream and the -v log; pacing that
// lasts is said once as a warning (the normal output).
func (pc *pacing) sayLocked(cs []paceChange) {
	for _, key := range pc.turns.woken() {
		pc.run.add(key) // its turn came sooner: ask again now
	}
	for _, c := range cs {
		msg := c.message()
		if c.lasts {
			pc.c.emit(event.Event{Type: event.EventWarning, Reason: "EvictionsPaced", Message: msg})
			continue
		}
		reason := map[paceMode]string{paceOpen: "PacingStopped", paceNames: "PacingStatefulSets", paceAll: "PacingAll"}[c.to]
		pc.c.cfg.Logger.V(1).Info("eviction pacing", "from", c.from.String(), "to", c.to.String(), "rate", c.rate,
			"pdb", c.budget, "pod", c.pod, "lag", c.lag, "termination", c.term, "averageLag", c.overallLag)
		pc.c.emit(event.Event{Type: event.EventPacing, Reason: reason, PDB: c.budget, Pod: c.pod, Lag: c.lag, Rate: c.rate, Message: msg})
	}
}

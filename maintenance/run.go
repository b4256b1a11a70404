package maintenance

import (
	"context"
	"reflect"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/operation"
)

// statusWriteTimeout bounds one status write of a run.
const statusWriteTimeout = 30 * time.Second

// execute runs req for name, folding its events into the status (written at most every
// StatusInterval, and only when it changed), and writes how it ended.
func (r *Reconciler) execute(ctx, base context.Context, rn *run, name string, counts v1alpha1.Counts, op *operation.Operator, req operation.Request, t *tracker) {
	defer r.wg.Done()
	defer close(rn.done)
	defer rn.cancel(nil)
	events := make(chan event.Event, 256)
	type result struct {
		sum operation.Summary
		err error
	}
	res := make(chan result, 1)
	obs := r.observer()
	obs.RunStarted(name)
	// The budgets' view every run of the process shares, and the batch of runs that start
	// with this one: each cordons before any evicts (admission.go).
	req.Ledger = r.ledger
	if r.admit != nil {
		adm := r.admit.join()
		defer adm.done()
		req.AfterCordon = adm.cordoned
	}
	go func() {
		sum, err := op.Run(ctx, req, events)
		res <- result{sum, err}
	}()
	ticker := r.Clock.NewTicker(r.StatusInterval)
	defer ticker.Stop()
	// last is the time of the run's last progress write: a tick that comes less than
	// about StatusInterval after it (the plan's write, made at once) writes nothing, so
	// that the progress writes stay StatusInterval apart; the budget keeps any minute of
	// the run's writes, the start's and the final one included, at 12 or fewer at 5 s.
	last := r.Clock.Now()
	budget := newWriteBudget(r.StatusInterval, last) // the start's write was made a moment ago
	progress := func() {
		last = r.Clock.Now()
		budget.record(last)
		wctx, cancel := context.WithTimeout(base, statusWriteTimeout)
		defer cancel()
		waits, nodes, c := t.waits(), t.take(), t.counts(counts, nil)
		if err := r.writeStatus(wctx, name, func(s *v1alpha1.MaintenanceStatus, gen int64) {
			s.Nodes, s.Counts = nodes, c
			setWaiting(s, gen, waits)
		}); err != nil {
			r.Logger.Error(err, "status write", "maintenance", name)
		}
	}
	closeC, stopClose := r.closeTimer(rn.win)
	defer stopClose()
	var out result
loop:
	for {
		select {
		case ev := <-events:
			t.apply(ev)
			obs.Observe(name, ev)
			r.recordReleased(name, ev)
			if ev.Type == event.EventPlan {
				// At once: each node's pods to evict are written before the evictions
				// start, so that a leader killed before its next write leaves counts the
				// next one can complete (tracker.inherit).
				progress()
			}
		case <-ticker.C():
			if t.dirty && r.Clock.Since(last) >= r.StatusInterval*9/10 && budget.allow(r.Clock.Now()) {
				progress()
			}
		case <-closeC: // policy.onWindowClose Stop
			closeC = nil
			r.stopAtClose(rn)
		case out = <-res:
			break loop
		}
	}
	for { // what Run sent before it returned
		select {
		case ev := <-events:
			t.apply(ev)
			obs.Observe(name, ev)
			continue
		default:
		}
		break
	}
	r.mu.Lock()
	why := rn.stop
	delete(r.runs, name)
	delete(r.uids, name)
	r.mu.Unlock()
	// Not cancelled with base: a clean shutdown (SIGTERM) writes its counts too, before
	// the manager, which waits for the runs, gives up the lease.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(base), statusWriteTimeout)
	defer cancel()
	nodes := t.take()
	var err error
	endPhase := v1alpha1.PhaseRunning // stopped (deleted, the leader's end): the object stays Running
	switch {
	case why == stopPaused:
		endPhase = v1alpha1.PhasePaused
		c := t.counts(counts, &out.sum.Summary)
		err = r.writeStatus(wctx, name, func(s *v1alpha1.MaintenanceStatus, gen int64) {
			s.Phase, s.Nodes, s.Counts = v1alpha1.PhasePaused, nodes, c
			setCondition(s, gen, v1alpha1.ConditionProgressing, metav1.ConditionFalse, "Paused", "spec.paused is true: no new eviction, no new node")
		})
	case why != stopDeleted && base.Err() == nil && rn.win.closedBy(out.err, why):
		r.release(name) // a Stop's nodes: the object's hold (hold.go) keeps them while it waits
		err = r.afterWindow(wctx, name, rn.win, nodes, t.counts(counts, &out.sum.Summary))
		r.Logger.Info("maintenance run ended: its window closed", "maintenance", name)
	case why != stopDeleted && base.Err() != nil && r.Stop != nil && r.Stop.Err() == nil:
		// The manager stopped the runs without a signal: its Lease was lost. Another leader
		// may run the object already, so nothing is written; the next leader resumes from
		// the last write and the pods it finds terminating (inherit.go).
		r.release(name)
		r.Logger.Info("maintenance run stopped: the Lease was lost; its last counts are left to the next leader", "maintenance", name)
	case why == stopDeleted || base.Err() != nil:
		r.release(name)
		c := t.counts(counts, &out.sum.Summary)
		// Written on a shutdown too: the next leader resumes from these counts and the
		// pods shown terminating (inherit.go), and asks none of them again.
		err = r.writeStatus(wctx, name, func(s *v1alpha1.MaintenanceStatus, _ int64) { s.Nodes, s.Counts = nodes, c })
	default:
		r.release(name)
		phase, reason := phaseOf(out.err)
		endPhase = phase
		msg := ""
		if out.err != nil {
			msg = SpecWording(oneLine(out.err.Error()))
		}
		c := t.counts(counts, &out.sum.Summary)
		now := metav1.NewTime(r.Clock.Now())
		err = r.writeStatus(wctx, name, func(s *v1alpha1.MaintenanceStatus, gen int64) {
			s.Phase, s.Message, s.Nodes, s.Counts, s.CompletionTime = phase, msg, nodes, c, &now
			setCondition(s, gen, v1alpha1.ConditionProgressing, metav1.ConditionFalse, reason, msgOr(msg, "the run finished"))
		})
		r.Logger.Info("maintenance run ended", "maintenance", name, "phase", phase)
	}
	obs.RunEnded(name, string(endPhase))
	if err != nil {
		r.Logger.Error(err, "final status write", "maintenance", name)
	}
}

// recordReleased records a Warning Event on the Maintenance for a node someone took from
// its run (uncordon --force, kubectl uncordon, another run): who or what, and when.
func (r *Reconciler) recordReleased(name string, ev event.Event) {
	if ev.Type != event.EventNodeFailed || ev.Reason != drain.ReasonReleased || r.Recorder == nil {
		return
	}
	r.mu.Lock()
	uid := r.uids[name]
	r.mu.Unlock()
	obj := &v1alpha1.Maintenance{ObjectMeta: metav1.ObjectMeta{Name: name, UID: uid}}
	r.Recorder.Event(obj, corev1.EventTypeWarning, "NodeReleased", ev.Message)
}

// setWaiting sets WaitingForNodes from waits (who holds the nodes the run waits for).
func setWaiting(s *v1alpha1.MaintenanceStatus, gen int64, waits string) {
	if waits == "" {
		setCondition(s, gen, v1alpha1.ConditionWaitingForNodes, metav1.ConditionFalse, "NodesFree", "no other run holds the nodes")
		return
	}
	setCondition(s, gen, v1alpha1.ConditionWaitingForNodes, metav1.ConditionTrue, drain.ReasonHeld, waits)
}

func msgOr(msg, dflt string) string {
	if msg == "" {
		return dflt
	}
	return msg
}

// oneLine folds a multi-line message into one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(strings.TrimSpace(s), "\n", "; ")), " ")
}

// equalStatus reports whether a write would change nothing (condition times aside:
// SetStatusCondition keeps them when nothing else changed).
func equalStatus(a, b *v1alpha1.MaintenanceStatus) bool {
	return equality.Semantic.DeepEqual(a, b) || reflect.DeepEqual(a, b)
}

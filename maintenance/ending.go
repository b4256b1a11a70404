package maintenance

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/operation"
)

// runResult is how one run ended, the one value its ending folds (as Cluster API's drain
// returns a result its caller acts on): why the controller stopped it, whether the
// manager stopped it (and whether that was the Lease lost), what Run returned and the
// run's window.
type runResult struct {
	// stop is why the controller cancelled the run (stopPaused, stopDeleted, stopWindow);
	// "" when it did not.
	stop string
	// shutdown: the manager stopped the runs (its context ended); leaseLost: it did so
	// while the process's own context (Reconciler.Stop) was not done.
	shutdown, leaseLost bool
	sum                 operation.Summary
	err                 error
	win                 windowRun
}

// ending is which of a run's endings a runResult is.
type ending int

const (
	// endFinished: Run returned on its own; the object takes the phase of its error.
	endFinished ending = iota
	// endPaused: spec.paused stopped it; the object is Paused, its nodes held (hold.go).
	endPaused
	// endWindow: its window closed (afterWindow).
	endWindow
	// endLeaseLost: the manager lost its Lease; nothing is written.
	endLeaseLost
	// endStopped: deleted, or a clean shutdown; the counts are written, the phase kept.
	endStopped
)

// ending says which ending res is; the order of the cases decides between them.
func (res runResult) ending() ending {
	switch {
	case res.stop == stopPaused:
		return endPaused
	case res.stop != stopDeleted && !res.shutdown && res.win.closedBy(res.err, res.stop):
		return endWindow
	case res.stop != stopDeleted && res.shutdown && res.leaseLost:
		return endLeaseLost
	case res.stop == stopDeleted || res.shutdown:
		return endStopped
	default:
		return endFinished
	}
}

// end makes the final write of name's run that ended as res, nodes and the counts from
// t, and returns the phase the run ended in for the observer (Running when the object
// keeps its phase).
func (r *Reconciler) end(ctx context.Context, name string, res runResult, counts v1alpha1.Counts, t *tracker) (v1alpha1.Phase, error) {
	nodes := t.take()
	c := t.counts(counts, &res.sum.Summary)
	switch res.ending() {
	case endPaused:
		// The nodes stay the object's: its hold (hold.go) keeps them while it is paused.
		return v1alpha1.PhasePaused, r.writeStatus(ctx, name, func(s *v1alpha1.MaintenanceStatus, gen int64) {
			s.Phase, s.Nodes, s.Counts = v1alpha1.PhasePaused, nodes, c
			setCondition(s, gen, v1alpha1.ConditionProgressing, metav1.ConditionFalse, "Paused", "spec.paused is true: no new eviction, no new node")
			endWaiting(s, gen) // the resumed run says again what it waits for
		})
	case endWindow:
		r.release(name) // a Stop's nodes: the object's hold (hold.go) keeps them while it waits
		err := r.afterWindow(ctx, name, res.win, nodes, c)
		r.Logger.Info("maintenance run ended: its window closed", "maintenance", name)
		return v1alpha1.PhaseRunning, err
	case endLeaseLost:
		// Another leader may run the object already, so nothing is written; the next
		// leader resumes from the last write and the pods it finds terminating (inherit.go).
		r.release(name)
		r.Logger.Info("maintenance run stopped: the Lease was lost; its last counts are left to the next leader", "maintenance", name)
		return v1alpha1.PhaseRunning, nil
	case endStopped:
		r.release(name)
		// Written on a shutdown too: the next leader resumes from these counts and the
		// pods shown terminating (inherit.go), and asks none of them again.
		return v1alpha1.PhaseRunning, r.writeStatus(ctx, name, func(s *v1alpha1.MaintenanceStatus, _ int64) { s.Nodes, s.Counts = nodes, c })
	}
	r.release(name)
	return r.finished(ctx, name, res.err, nodes, c)
}

// finished writes the phase of a run that ended on its own with err.
func (r *Reconciler) finished(ctx context.Context, name string, runErr error, nodes []v1alpha1.NodeStatus, c v1alpha1.Counts) (v1alpha1.Phase, error) {
	phase, reason := phaseOf(runErr)
	msg := ""
	if runErr != nil {
		msg = SpecWording(oneLine(runErr.Error()))
	}
	now := metav1.NewTime(r.Clock.Now())
	err := r.writeStatus(ctx, name, func(s *v1alpha1.MaintenanceStatus, gen int64) {
		s.Phase, s.Message, s.Nodes, s.Counts, s.CompletionTime = phase, msg, nodes, c, &now
		setCondition(s, gen, v1alpha1.ConditionProgressing, metav1.ConditionFalse, reason, msgOr(msg, "the run finished"))
		endWaiting(s, gen)
	})
	r.Logger.Info("maintenance run ended", "maintenance", name, "phase", phase)
	return phase, err
}

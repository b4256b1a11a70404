package maintenance

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/operation"
	"github.com/kubectl-maintenance/kubectl-maintenance/outcome"
	"github.com/kubectl-maintenance/kubectl-maintenance/schedule"
)

// Windows (planned maintenance): spec.window says when a run may start nodes. Before it
// opens the object is Scheduled, with status.nextStart, and its nodes carry the Node
// condition MaintenancePlanned=True; the controller comes back at the start (RequeueAfter),
// it does not poll. An open window's end is the engine's not-after deadline (no node starts
// after it); with policy.onWindowClose Stop the run is also stopped then, as a pause stops
// it (nodes in progress stay cordoned, held under the object's RunID). A recurring window
// then goes back to Scheduled and its next run goes on from the nodes' records; a one-shot
// window that closed with work left ends DeadlinePassed (reason WindowClosed).

// stopWindow: the run was stopped because its window closed (policy.onWindowClose Stop).
const stopWindow = "window"

// ReasonWindowClosed is the Progressing reason of a Maintenance whose one-shot window
// closed with nodes not started (phase DeadlinePassed).
const ReasonWindowClosed = "WindowClosed"

// reasonScheduled is the Progressing reason of a Scheduled object.
const reasonScheduled = "Scheduled"

// Window reads m's spec.window (ok false when it has none); an error names the field.
func Window(m *v1alpha1.Maintenance) (w schedule.Window, ok bool, err error) {
	sw := m.Spec.Window
	if sw == nil {
		return w, false, nil
	}
	if sw.Start != nil {
		w.NotBefore = sw.Start.Time
	}
	if sw.End != nil {
		w.NotAfter = sw.End.Time
	}
	if !w.NotBefore.IsZero() && !w.NotAfter.IsZero() && !w.NotBefore.Before(w.NotAfter) {
		return w, true, fmt.Errorf("spec.window: %s", schedule.MsgEndAfterStart)
	}
	if rw := sw.Recurring; rw != nil {
		if w.Recurring, err = schedule.NewRecurring("spec.window.recurring", rw.Days, rw.Start, rw.End, rw.TimeZone); err != nil {
			return w, true, err
		}
	}
	switch m.Spec.Policy.OnWindowClose {
	case "", v1alpha1.WindowCloseFinish, v1alpha1.WindowCloseStop:
	default:
		return w, true, fmt.Errorf("spec.policy.onWindowClose: %q: onWindowClose must be Finish or Stop", m.Spec.Policy.OnWindowClose)
	}
	return w, true, nil
}

// windowRun is what a run started in a window knows of it.
type windowRun struct {
	closes time.Time // zero: never (or no window)
	stop   bool      // policy.onWindowClose Stop
	// notAfter is policy.notAfter (zero: none): a deadline of its own, not the window's.
	notAfter time.Time
}

// closesAt is when the window closes, for the status (nil: never, or no window).
func (wr windowRun) closesAt() *metav1.Time {
	if wr.closes.IsZero() {
		return nil
	}
	return &metav1.Time{Time: wr.closes}
}

// limit makes the window's end the engine's not-after deadline (no node starts after
// it), unless policy.notAfter is earlier.
func (wr windowRun) limit(cfg *drain.Settings) {
	if !wr.closes.IsZero() && (cfg.NotAfter.IsZero() || wr.closes.Before(cfg.NotAfter)) {
		cfg.NotAfter = wr.closes
	}
}

// gateWindow decides, for m about to start on names at now, whether its window lets it:
// done is true when it does not (the object was made Scheduled, or it ended), with the
// result to return; otherwise wr is the run's window.
func (r *Reconciler) gateWindow(ctx, base context.Context, m *v1alpha1.Maintenance, names []string, now time.Time) (wr windowRun, res ctrl.Result, done bool, err error) {
	w, ok, err := Window(m)
	if err != nil {
		return wr, res, true, r.finish(ctx, m.Name, outcome.Invalid, err.Error())
	}
	if !ok {
		return wr, res, false, nil
	}
	st := w.At(now)
	switch {
	case st.Over:
		end := w.NotAfter.UTC().Format(time.RFC3339)
		if m.Status.NextStart != nil { // it was Scheduled: the plan is off
			msg := fmt.Sprintf("maintenance/%s: the window closed at %s before it started", m.Name, end)
			if err := r.planned(ctx, notDone(m, names), operation.PlannedCondition(false, operation.ReasonWindowClosed, msg)); err != nil {
				return wr, res, true, err
			}
		}
		return wr, res, true, r.finishWith(ctx, m.Name, outcome.NotStarted, ReasonWindowClosed,
			fmt.Sprintf("the window closed at %s; node(s) not started: %s", end, strings.Join(notDone(m, names), ", ")))
	case !st.Open:
		res, err = r.schedule(ctx, base, m, names, st.Opens, now)
		return wr, res, true, err
	}
	wr = windowRun{closes: st.Closes, stop: m.Spec.Policy.OnWindowClose == v1alpha1.WindowCloseStop}
	if m.Spec.Policy.NotAfter != nil {
		wr.notAfter = m.Spec.Policy.NotAfter.Time
	}
	return wr, res, false, nil
}

// schedule makes m Scheduled until opens: its status says when, and its nodes not done
// yet carry MaintenancePlanned=True (written when the start changes, not at each look).
// Nodes a stopped run left in progress stay held (hold.go) until the window opens.
func (r *Reconciler) schedule(ctx, base context.Context, m *v1alpha1.Maintenance, names []string, opens, now time.Time) (ctrl.Result, error) {
	at := opens.UTC().Format(time.RFC3339)
	if m.Status.Phase != v1alpha1.PhaseScheduled || m.Status.NextStart == nil || !m.Status.NextStart.Time.Equal(opens) {
		msg := fmt.Sprintf("maintenance/%s (%s) starts at %s", m.Name, strings.ToLower(string(m.Spec.Action)), at)
		if err := r.planned(ctx, notDone(m, names), operation.PlannedCondition(true, operation.ReasonScheduled, msg)); err != nil {
			return ctrl.Result{}, err
		}
		t := newTracker(m.Status.Nodes, names, m.Spec.Action)
		nodes := t.take()
		if err := r.writeStatus(ctx, m.Name, func(s *v1alpha1.MaintenanceStatus, gen int64) {
			ts := metav1.NewTime(opens)
			s.Phase, s.NextStart, s.WindowCloses, s.Message = v1alpha1.PhaseScheduled, &ts, nil, "scheduled: the window opens at "+at
			s.Nodes = nodes
			setCondition(s, gen, v1alpha1.ConditionProgressing, metav1.ConditionFalse, reasonScheduled, s.Message)
		}); err != nil {
			return ctrl.Result{}, err
		}
	}
	if inProgress(m.Status.Nodes, m.Spec.Action) {
		r.keep(base, m) // a stopped run's nodes stay this object's until it goes on
	}
	return ctrl.Result{RequeueAfter: max(opens.Sub(now), time.Millisecond)}, nil
}

// planned writes cond on each of nodes, each write bounded; the first error is returned
// after all were tried (a node that is gone is none).
func (r *Reconciler) planned(ctx context.Context, nodes []string, cond corev1.NodeCondition) error {
	var first error
	for _, n := range nodes {
		wctx, cancel := context.WithTimeout(ctx, statusWriteTimeout)
		err := operation.PatchNodeConditions(wctx, r.Kube, n, r.Clock.Now(), cond)
		cancel()
		if err != nil && first == nil {
			first = err
		}
	}
	return first
}

// notDone is names less the nodes m's status has finished.
func notDone(m *v1alpha1.Maintenance, names []string) []string {
	done := map[string]bool{}
	for _, n := range m.Status.Nodes {
		if v1alpha1.NodeStateDone(n.State, m.Spec.Action) {
			done[n.Name] = true
		}
	}
	var out []string
	for _, n := range names {
		if !done[n] {
			out = append(out, n)
		}
	}
	return out
}

// inProgress reports a node a run left between its start and its end.
func inProgress(nodes []v1alpha1.NodeStatus, action v1alpha1.Action) bool {
	for _, n := range nodes {
		if !v1alpha1.NodeStateDone(n.State, action) && n.State != NodePending && n.State != NodeNotStarted {
			return true
		}
	}
	return false
}

// closeTimer fires when a Stop window closes (nil channel when it never does).
func (r *Reconciler) closeTimer(wr windowRun) (<-chan time.Time, func()) {
	if !wr.stop || wr.closes.IsZero() {
		return nil, func() {}
	}
	t := r.Clock.NewTimer(max(wr.closes.Sub(r.Clock.Now()), 0))
	return t.C(), func() { t.Stop() }
}

// stopAtClose stops rn as a pause does (its nodes stay held, cordoned with their state),
// marked as stopped by its window.
func (r *Reconciler) stopAtClose(rn *run) {
	r.mu.Lock()
	if rn.stop == "" {
		rn.stop = stopWindow
	}
	r.mu.Unlock()
	rn.cancel(drain.ErrPaused)
}

// closedBy reports whether err, a run's end, is its window's close: nodes not started
// because the window's end (not policy.notAfter) passed, or a Stop at the close.
func (wr windowRun) closedBy(err error, why string) bool {
	if why == stopWindow {
		return true
	}
	var ns *drain.NotStartedError
	if wr.closes.IsZero() || !errors.As(err, &ns) {
		return false
	}
	return wr.notAfter.IsZero() || wr.closes.Before(wr.notAfter)
}

// afterWindow writes how a run its window closed ended: a recurring window (one that
// opens again) back to Scheduled, its nodes not started back to Pending; otherwise
// DeadlinePassed naming the nodes not started and those stopped in progress.
func (r *Reconciler) afterWindow(ctx context.Context, name string, wr windowRun, nodes []v1alpha1.NodeStatus, c v1alpha1.Counts) error {
	m := &v1alpha1.Maintenance{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Name: name}, m); err != nil {
		return fmt.Errorf("get maintenance %s: %w", name, err)
	}
	w, _, _ := Window(m)
	closed := wr.closes.UTC().Format(time.RFC3339)
	st := w.At(wr.closes)
	if !st.Over && !st.Opens.IsZero() {
		for i := range nodes {
			if nodes[i].State == NodeNotStarted {
				nodes[i].State, nodes[i].Message, nodes[i].Since = NodePending, "", nil
			}
		}
		c.NodesPending += c.NodesNotStarted
		c.NodesNotStarted = 0
		// The next Reconcile (this write's) makes the object Scheduled, with its nodes'
		// MaintenancePlanned, and comes back at the next start.
		return r.writeStatus(ctx, name, func(s *v1alpha1.MaintenanceStatus, gen int64) {
			// drain.timeout bounds each window's run: the next one counts from its own start.
			s.Phase, s.Nodes, s.Counts, s.WindowCloses, s.StartTime = v1alpha1.PhasePending, nodes, c, nil, nil
			s.Message = fmt.Sprintf("the window closed at %s; the run goes on when it opens again", closed)
			setCondition(s, gen, v1alpha1.ConditionProgressing, metav1.ConditionFalse, ReasonWindowClosed, s.Message)
			endWaiting(s, gen) // this window's run ended; the next says again what it waits for
		})
	}
	var notStarted, stopped []string
	for i, n := range nodes {
		switch {
		case n.State == NodeNotStarted:
			nodes[i].Message = "not started: the window closed at " + closed
			notStarted = append(notStarted, n.Name)
		case n.State == NodePending:
			notStarted = append(notStarted, n.Name)
		case !v1alpha1.NodeStateDone(n.State, m.Spec.Action) && n.State != NodeFailed && n.State != NodeBlocked && n.State != NodeReleased:
			stopped = append(stopped, n.Name)
		}
	}
	msg := "the window closed at " + closed
	if len(notStarted) > 0 {
		msg += "; node(s) not started: " + strings.Join(notStarted, ", ")
	}
	if len(stopped) > 0 {
		msg += "; node(s) stopped in progress, left cordoned: " + strings.Join(stopped, ", ")
	}
	now := metav1.NewTime(r.Clock.Now())
	return r.writeStatus(ctx, name, func(s *v1alpha1.MaintenanceStatus, gen int64) {
		s.Phase, s.Message, s.Nodes, s.Counts, s.CompletionTime, s.WindowCloses = v1alpha1.PhaseDeadlinePassed, msg, nodes, c, &now, nil
		setCondition(s, gen, v1alpha1.ConditionProgressing, metav1.ConditionFalse, ReasonWindowClosed, msg)
		endWaiting(s, gen)
	})
}

// statusNames are the nodes m's status lists.
func statusNames(m *v1alpha1.Maintenance) []string {
	out := make([]string, 0, len(m.Status.Nodes))
	for _, n := range m.Status.Nodes {
		out = append(out, n.Name)
	}
	return out
}

// planStarted moves MaintenancePlanned on for m's nodes when m was Scheduled: its run
// starts now. A write that fails is logged: the run does not wait on it.
func (r *Reconciler) planStarted(ctx context.Context, m *v1alpha1.Maintenance, names []string, now time.Time) {
	if m.Status.NextStart == nil {
		return
	}
	msg := fmt.Sprintf("maintenance/%s started at %s", m.Name, now.UTC().Format(time.RFC3339))
	if err := r.planned(ctx, notDone(m, names), operation.PlannedCondition(false, operation.ReasonStarted, msg)); err != nil {
		r.Logger.Error(err, "MaintenancePlanned not written", "maintenance", m.Name)
	}
}

// planCancelled sets MaintenancePlanned False on the nodes of m, deleted while Scheduled.
func (r *Reconciler) planCancelled(ctx context.Context, m *v1alpha1.Maintenance) error {
	if m.Status.Phase != v1alpha1.PhaseScheduled {
		return nil
	}
	msg := fmt.Sprintf("maintenance/%s was cancelled before it started", m.Name)
	return r.planned(ctx, notDone(m, statusNames(m)), operation.PlannedCondition(false, operation.ReasonCancelled, msg))
}

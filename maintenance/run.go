package maintenance

import (
	"context"
	"reflect"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/operation"
)

// statusWriteTimeout bounds one status write of a run.
const statusWriteTimeout = 30 * time.Second

// execute runs req for name, folding its events into the status (written at most every
// StatusInterval, and only when it changed), and writes how it ended (end, ending.go).
func (r *Reconciler) execute(ctx, base context.Context, rn *run, name string, counts v1alpha1.Counts, op *operation.Operator, req operation.Request, t *tracker) {
	defer r.wg.Done()
	defer close(rn.done)
	defer rn.cancel(nil)
	events := make(chan event.Event, 256)
	ran := make(chan runResult, 1)
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
		ran <- runResult{sum: sum, err: err}
	}()
	res := r.loop(base, rn, name, counts, t, events, ran)
	r.mu.Lock()
	res.stop, rn.ending = rn.stop, true
	r.mu.Unlock()
	// The run stays in runs until its end is written: a Reconcile in between (an event of
	// its progress) sees it ending and comes back, not an object to start again.
	defer func() {
		r.mu.Lock()
		delete(r.runs, name)
		delete(r.uids, name)
		r.mu.Unlock()
	}()
	res.win = rn.win
	// The manager stopped the runs without a signal: its Lease was lost.
	res.shutdown = base.Err() != nil
	res.leaseLost = res.shutdown && r.Stop != nil && r.Stop.Err() == nil
	// Not cancelled with base: a clean shutdown (SIGTERM) writes its counts too, before
	// the manager, which waits for the runs, gives up the lease.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(base), statusWriteTimeout)
	defer cancel()
	phase, err := r.end(wctx, name, res, counts, t)
	obs.RunEnded(name, string(phase))
	if err != nil {
		r.Logger.Error(err, "final status write", "maintenance", name)
	}
}

// loop folds the run's events into t, writes its progress and stops it when a Stop
// window closes, until Run returns (on ran); then it folds what Run sent before it
// returned and returns Run's result.
func (r *Reconciler) loop(base context.Context, rn *run, name string, counts v1alpha1.Counts, t *tracker, events <-chan event.Event, ran <-chan runResult) runResult {
	obs := r.observer()
	ticker := r.Clock.NewTicker(r.StatusInterval)
	defer ticker.Stop()
	p := r.newPacer(base, name, counts, t)
	closeC, stopClose := r.closeTimer(rn.win)
	defer stopClose()
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
				p.write()
			}
		case <-ticker.C():
			if t.dirty && p.due() {
				p.write()
			}
		case <-closeC: // policy.onWindowClose Stop
			closeC = nil
			r.stopAtClose(rn)
		case res := <-ran:
			for { // what Run sent before it returned
				select {
				case ev := <-events:
					t.apply(ev)
					obs.Observe(name, ev)
					continue
				default:
				}
				return res
			}
		}
	}
}

// pacer makes a run's progress writes. last is the time of the last one: a tick that
// comes less than about StatusInterval after it (the plan's write, made at once) writes
// nothing, so that the progress writes stay StatusInterval apart; the budget keeps any
// minute of the run's writes, the start's and the final one included, at 12 or fewer at
// 5 s.
type pacer struct {
	r      *Reconciler
	base   context.Context
	name   string
	counts v1alpha1.Counts
	t      *tracker
	last   time.Time
	budget *writeBudget
}

func (r *Reconciler) newPacer(base context.Context, name string, counts v1alpha1.Counts, t *tracker) *pacer {
	last := r.Clock.Now()
	// The start's write was made a moment ago.
	return &pacer{r: r, base: base, name: name, counts: counts, t: t, last: last, budget: newWriteBudget(r.StatusInterval, last)}
}

// due reports whether a tick may write: about StatusInterval since the last write, and
// room in the budget.
func (p *pacer) due() bool {
	return p.r.Clock.Since(p.last) >= p.r.StatusInterval*9/10 && p.budget.allow(p.r.Clock.Now())
}

// write writes the run's progress: its nodes, counts and who holds the nodes it waits for.
func (p *pacer) write() {
	r, t := p.r, p.t
	p.last = r.Clock.Now()
	p.budget.record(p.last)
	wctx, cancel := context.WithTimeout(p.base, statusWriteTimeout)
	defer cancel()
	waits, nodes, c := t.waits(), t.take(), t.counts(p.counts, nil)
	if err := r.writeStatus(wctx, p.name, func(s *v1alpha1.MaintenanceStatus, gen int64) {
		s.Nodes, s.Counts = nodes, c
		setWaiting(s, gen, waits)
	}); err != nil {
		r.Logger.Error(err, "status write", "maintenance", p.name)
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

// endWaiting sets WaitingForNodes False when the run ends: an ended run waits for no node
// (a held node's wait, said while it ran, would otherwise stay True on a Succeeded
// object). An object that never had the condition gets none.
func endWaiting(s *v1alpha1.MaintenanceStatus, gen int64) {
	if c := meta.FindStatusCondition(s.Conditions, v1alpha1.ConditionWaitingForNodes); c != nil && c.Status != metav1.ConditionFalse {
		setCondition(s, gen, v1alpha1.ConditionWaitingForNodes, metav1.ConditionFalse, "RunEnded", "the run ended: it waits for no node")
	}
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

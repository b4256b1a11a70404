package maintenance

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/operation"
	"github.com/kubectl-maintenance/kubectl-maintenance/outcome"
)

// Finalizer keeps a Maintenance until its run has stopped.
const Finalizer = "maintenance.kubectl-maintenance.io/run"

// LeaseName names the leader election Lease of the controller that runs NodePools and
// Maintenances in one manager ("kubectl maintenance controller", package manager); follow
// reads it to tell whether a controller leads.
const LeaseName = "kubectl-maintenance-controller"

// DefaultStatusInterval is the least time between two status writes of one object.
const DefaultStatusInterval = 5 * time.Second

// waitRetry is how often an object waiting for nodes another holds looks again.
const waitRetry = 3 * time.Second

// Why a run was stopped.
const (
	stopPaused  = "paused"
	stopDeleted = "deleted"
)

// Reconciler runs Maintenances. Add it to a manager with SetupWithManager; it is also the
// manager's Runnable that owns the runs (they end when the manager stops or loses the
// lease).
type Reconciler struct {
	// Client reads Maintenances (the manager's cache) and writes them.
	Client client.Client
	// APIReader reads an object afresh before a status write.
	APIReader client.Reader
	// Kube is the clientset the runs use (evictions, nodes, budgets).
	Kube kubernetes.Interface
	// Recorder writes the object's Events (what a deleted object left).
	Recorder record.EventRecorder
	// Clock paces status writes. Default: the real clock.
	Clock clock.WithTicker
	// Logger receives diagnostics.
	Logger klog.Logger
	// StatusInterval is the least time between two status writes of one object.
	StatusInterval time.Duration
	// Observer, when set, is told each run's events and each status write (metrics).
	Observer Observer
	// AdmissionWindow gathers the runs that start within it of one another into a batch
	// whose runs all cordon before any evicts (admission.go). Default
	// DefaultAdmissionWindow; negative: no batches.
	AdmissionWindow time.Duration
	// Stop, when set, is the process's own context (its signals). A run stopped while it
	// is done stopped cleanly (SIGTERM) and writes its last counts before the Lease is
	// released; a run the manager stopped while Stop is not done (leader election lost)
	// writes nothing, since another leader may already run the object. Unset: every
	// stop writes.
	Stop context.Context

	mu     sync.Mutex
	base   context.Context // the manager's, once Start ran; the runs' parent
	runs   map[string]*run
	holder map[string]string    // node -> the Maintenance whose run holds it
	uids   map[string]types.UID // a running Maintenance's UID, for its Events
	kept   map[string]*keeper   // a paused Maintenance's hold on its nodes (hold.go)
	// ledger is the view of the budgets every run of the process shares (drain.Ledger);
	// admit batches the runs that start together (admission.go; nil: no batches).
	ledger *drain.Ledger
	admit  *admission
	wg     sync.WaitGroup
}

// run is one object's operation in progress.
type run struct {
	nodes  []string
	cancel context.CancelCauseFunc
	done   chan struct{}
	stop   string // why it was cancelled (stopPaused, stopDeleted, stopWindow); "" for a shutdown
	ending bool   // Run returned: its end is being written
	win    windowRun
}

// Start holds the runs' parent context until ctx ends, then stops every run and waits for
// them (manager.Runnable; it needs the lease like the controller).
func (r *Reconciler) Start(ctx context.Context) error {
	r.mu.Lock()
	r.base = ctx
	r.mu.Unlock()
	<-ctx.Done()
	r.wg.Wait()
	return nil
}

// Reconcile moves one Maintenance on: finalizer, pause, start, stop on delete.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	m := &v1alpha1.Maintenance{}
	if err := r.Client.Get(ctx, req.NamespacedName, m); err != nil {
		if apierrors.IsNotFound(err) {
			r.unkeep(req.Name)
			r.stopRun(req.Name, stopDeleted)
			r.release(req.Name)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("get maintenance %s: %w", req.Name, err)
	}
	if m.DeletionTimestamp != nil {
		return ctrl.Result{}, r.finalize(ctx, m)
	}
	if !controllerutil.ContainsFinalizer(m, Finalizer) {
		if err := patchFinalizers(ctx, r.Client, m, func(o client.Object) { controllerutil.AddFinalizer(o, Finalizer) }); err != nil {
			return ctrl.Result{}, fmt.Errorf("add the finalizer to maintenance %s: %w", m.Name, err)
		}
	}
	if m.Status.Phase.Done() {
		r.unkeep(m.Name)
		r.release(m.Name)
		return ctrl.Result{}, nil
	}
	r.mu.Lock()
	rn, base := r.runs[m.Name], r.base
	r.mu.Unlock()
	if m.Spec.Paused {
		if rn != nil {
			r.stopRun(m.Name, stopPaused) // the run's end writes Paused
		}
		if base != nil {
			r.keep(base, m) // the paused object's nodes stay its own
		}
		if rn != nil {
			return ctrl.Result{}, nil
		}
		if m.Status.Phase != v1alpha1.PhasePaused {
			return ctrl.Result{}, r.writeStatus(ctx, m.Name, func(s *v1alpha1.MaintenanceStatus, gen int64) {
				s.Phase = v1alpha1.PhasePaused
				setCondition(s, gen, v1alpha1.ConditionProgressing, metav1.ConditionFalse, "Paused", "spec.paused is true: no new eviction, no new node")
			})
		}
		return ctrl.Result{}, nil
	}
	switch {
	case rn != nil && rn.stop == "" && !rn.ending:
		return ctrl.Result{}, nil // running
	case rn != nil, base == nil:
		return ctrl.Result{RequeueAfter: time.Second}, nil // a run stopping or ending, or runs not yet allowed
	}
	return r.start(ctx, base, m)
}

// start starts m's run unless another run holds some of its nodes.
func (r *Reconciler) start(ctx, base context.Context, m *v1alpha1.Maintenance) (ctrl.Result, error) {
	if behind, err := r.cacheBehind(ctx, m); behind || err != nil {
		return ctrl.Result{}, err
	}
	req, err := Request(m)
	if err != nil {
		return ctrl.Result{}, r.finish(ctx, m.Name, outcome.Invalid, err.Error())
	}
	op := &operation.Operator{Kube: r.Kube, Pools: r.Client, Logger: r.Logger.WithValues("maintenance", m.Name)}
	rz, err := op.Resolve(ctx, req)
	if err != nil {
		if drain.IsUsage(err) {
			return ctrl.Result{}, r.finish(ctx, m.Name, outcome.Invalid, err.Error())
		}
		return ctrl.Result{}, err
	}
	names := rz.Nodes
	wr, res, done, err := r.gateWindow(ctx, base, m, names, r.Clock.Now())
	if done || err != nil {
		return res, err
	}
	if na := m.Spec.Policy.NotAfter; na != nil && req.Action != operation.Drain && req.Action != operation.Move && !r.Clock.Now().Before(na.Time) {
		// A drain's engine starts no node after notAfter; a cordon has no engine to ask.
		return ctrl.Result{}, r.finish(ctx, m.Name, outcome.NotStarted, fmt.Sprintf("not started: policy.notAfter %s has passed", na.UTC().Format(time.RFC3339)))
	}
	if res, waiting, err := r.waitIfHeld(ctx, m.Name, names); waiting || err != nil {
		return res, err
	}
	now := r.Clock.Now()
	start := now
	if m.Status.StartTime != nil {
		start = m.Status.StartTime.Time
	}
	left, ok := remaining(req.Drain.Timeout, start, now)
	if !ok {
		return ctrl.Result{}, r.finish(ctx, m.Name, outcome.TimedOut, fmt.Sprintf("the drain's timeout of %s passed", req.Drain.Timeout))
	}
	req.Drain.Timeout = left
	wr.limit(&req.Drain)
	req.Resolved = rz // the nodes held are the nodes run, read once
	t := newTracker(m.Status.Nodes, names, m.Spec.Action)
	if err := r.writeStatus(ctx, m.Name, func(s *v1alpha1.MaintenanceStatus, gen int64) {
		s.Phase, s.Message = v1alpha1.PhaseRunning, ""
		if s.StartTime == nil {
			ts := metav1.NewTime(now)
			s.StartTime = &ts
		}
		s.Nodes = t.take()
		s.NextStart, s.WindowCloses = nil, wr.closesAt()
		setCondition(s, gen, v1alpha1.ConditionWaitingForNodes, metav1.ConditionFalse, "NodesFree", "no other maintenance holds the nodes")
		setCondition(s, gen, v1alpha1.ConditionProgressing, metav1.ConditionTrue, "Running", "the run is in progress")
	}); err != nil {
		return ctrl.Result{}, err
	}
	r.unkeep(m.Name) // a paused object's hold (hold.go) ends: its run holds the nodes now
	r.planStarted(ctx, m, names, now)
	r.launch(base, m, names, wr, op, req, t)
	return ctrl.Result{}, nil
}

// launch starts m's run on names in a goroutine of its own (execute), its nodes held by
// it until it ends.
func (r *Reconciler) launch(base context.Context, m *v1alpha1.Maintenance, names []string, wr windowRun, op *operation.Operator, req operation.Request, t *tracker) {
	runCtx, cancel := context.WithCancelCause(base)
	rn := &run{nodes: names, cancel: cancel, done: make(chan struct{}), win: wr}
	r.mu.Lock()
	r.runs[m.Name] = rn
	r.uids[m.Name] = m.UID
	for _, n := range names {
		r.holder[n] = m.Name
	}
	r.wg.Add(1)
	r.mu.Unlock()
	r.Logger.Info("maintenance run started", "maintenance", m.Name, "nodes", len(names))
	go r.execute(runCtx, base, rn, m.Name, m.Status.Counts, op, req, t)
}

// waitIfHeld reports whether another Maintenance holds some of names (heldBy); if so,
// name waits for it: Pending, with WaitingForNodes naming it and the nodes, looking again
// after waitRetry.
func (r *Reconciler) waitIfHeld(ctx context.Context, name string, names []string) (ctrl.Result, bool, error) {
	other, held, err := r.heldBy(ctx, name, names)
	if err != nil || other == "" {
		return ctrl.Result{}, false, err
	}
	msg := fmt.Sprintf("waiting for maintenance/%s, which holds node(s) %s", other, strings.Join(held, ", "))
	return ctrl.Result{RequeueAfter: waitRetry}, true, r.writeStatus(ctx, name, func(s *v1alpha1.MaintenanceStatus, gen int64) {
		s.Phase, s.Message = v1alpha1.PhasePending, msg
		setCondition(s, gen, v1alpha1.ConditionWaitingForNodes, metav1.ConditionTrue, "HeldByAnother", msg)
	})
}

// stopRun cancels name's run, if any, for why, and waits until it has ended.
func (r *Reconciler) stopRun(name, why string) {
	r.mu.Lock()
	rn := r.runs[name]
	if rn != nil && rn.stop == "" {
		rn.stop = why
	}
	r.mu.Unlock()
	if rn == nil {
		return
	}
	var cause error
	if why == stopPaused {
		cause = drain.ErrPaused // the nodes stay held (hold.go keeps them)
	}
	rn.cancel(cause)
	<-rn.done
}

// release frees the nodes name holds.
func (r *Reconciler) release(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for n, h := range r.holder {
		if h == name {
			delete(r.holder, n)
		}
	}
}

// cacheBehind reports whether the API server has a newer m than the cache gave: a run that
// ended at once wrote its end after the event that brought this call, and starting again
// from the older copy would run the object twice. The newer version's event calls again.
func (r *Reconciler) cacheBehind(ctx context.Context, m *v1alpha1.Maintenance) (bool, error) {
	fresh := &v1alpha1.Maintenance{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(m), fresh); err != nil {
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, fmt.Errorf("get maintenance %s: %w", m.Name, err)
	}
	return fresh.ResourceVersion != m.ResourceVersion, nil
}

// finalize stops a deleted object's run, says in an Event what it left, and lets the
// object go.
func (r *Reconciler) finalize(ctx context.Context, m *v1alpha1.Maintenance) error {
	if !controllerutil.ContainsFinalizer(m, Finalizer) {
		return nil
	}
	r.unkeep(m.Name)
	r.stopRun(m.Name, stopDeleted)
	r.release(m.Name)
	fresh := &v1alpha1.Maintenance{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(m), fresh); err != nil {
		return client.IgnoreNotFound(err)
	}
	if err := r.planCancelled(ctx, fresh); err != nil {
		return err
	}
	if left := leftOver(fresh.Status.Nodes, fresh.Spec.Action); left != "" && !fresh.Status.Phase.Done() && r.Recorder != nil {
		r.Recorder.Eventf(fresh, corev1.EventTypeWarning, "Stopped", "deleted: the run stopped; nodes left cordoned with their state: %s", left)
	}
	if err := patchFinalizers(ctx, r.Client, fresh, func(o client.Object) { controllerutil.RemoveFinalizer(o, Finalizer) }); err != nil {
		return fmt.Errorf("remove the finalizer of maintenance %s: %w", m.Name, err)
	}
	return nil
}

// finish ends name with phase without a run (a spec that can't run, a timeout spent).
func (r *Reconciler) finish(ctx context.Context, name string, o outcome.Outcome, msg string) error {
	return r.finishWith(ctx, name, o, o.Reason(), msg)
}

// finishWith is finish with a Progressing reason that says more than the outcome's own
// (a window that closed: phase DeadlinePassed, reason WindowClosed).
func (r *Reconciler) finishWith(ctx context.Context, name string, o outcome.Outcome, reason, msg string) error {
	now := metav1.NewTime(r.Clock.Now())
	return r.writeStatus(ctx, name, func(s *v1alpha1.MaintenanceStatus, gen int64) {
		s.Phase, s.Message, s.CompletionTime = v1alpha1.Phase(o.Phase()), msg, &now
		setCondition(s, gen, v1alpha1.ConditionProgressing, metav1.ConditionFalse, reason, msg)
		endWaiting(s, gen)
	})
}

// writeStatus reads name afresh, applies mutate and writes the status when it changed,
// again on a conflict.
func (r *Reconciler) writeStatus(ctx context.Context, name string, mutate func(*v1alpha1.MaintenanceStatus, int64)) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		m := &v1alpha1.Maintenance{}
		if err := r.APIReader.Get(ctx, client.ObjectKey{Name: name}, m); err != nil {
			return err
		}
		before := m.Status.DeepCopy()
		mutate(&m.Status, m.Generation)
		m.Status.ObservedGeneration = m.Generation
		setHealth(&m.Status, m.Generation)
		setSummary(&m.Status)
		if equalStatus(before, &m.Status) {
			return nil
		}
		err := r.Client.Status().Update(ctx, m)
		r.observer().StatusWritten(writeResult(err))
		return err
	})
	if err != nil {
		return fmt.Errorf("write the status of maintenance %s: %w", name, client.IgnoreNotFound(err))
	}
	return nil
}

func setCondition(s *v1alpha1.MaintenanceStatus, gen int64, typ string, status metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&s.Conditions, metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg, ObservedGeneration: gen})
}

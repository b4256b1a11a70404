package maintenance

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

func (r *Reconciler) defaults() {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	if r.StatusInterval <= 0 {
		r.StatusInterval = DefaultStatusInterval
	}
	if r.Logger.GetSink() == nil {
		r.Logger = klog.Background()
	}
	if r.ledger == nil {
		r.ledger = drain.NewLedger()
	}
	if r.admit == nil && r.AdmissionWindow >= 0 {
		w := r.AdmissionWindow
		if w == 0 {
			w = DefaultAdmissionWindow
		}
		r.admit = &admission{clock: r.Clock, window: w}
	}
	if r.runs == nil {
		r.runs, r.holder, r.uids, r.kept = map[string]*run{}, map[string]string{}, map[string]types.UID{}, map[string]*keeper{}
	}
}

// SetupWithManager adds the reconciler (and its runs' owner) to mgr.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.mu.Lock()
	r.defaults()
	r.mu.Unlock()
	if err := mgr.Add(r); err != nil {
		return fmt.Errorf("add the maintenance runs: %w", err)
	}
	return ctrl.NewControllerManagedBy(mgr).For(&v1alpha1.Maintenance{}).Named("maintenance").Complete(r)
}

// Setup adds a Reconciler to mgr on its client, API reader and event recorder, the runs on
// kube (package manager calls it for the controller command).
func Setup(mgr ctrl.Manager, kube kubernetes.Interface) error {
	return setup(mgr, kube, nil, nil)
}

func setup(mgr ctrl.Manager, kube kubernetes.Interface, obs Observer, stop context.Context) error {
	r := &Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Kube: kube, Observer: obs, Stop: stop,
		Logger:   klog.NewKlogr().WithName("maintenance"),
		Recorder: mgr.GetEventRecorderFor("kubectl-maintenance"), //nolint:staticcheck // core/v1 Events, which config/rbac grants; the events.k8s.io recorder is a follow-up
	}
	if err := r.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("set up the maintenance controller: %w", err)
	}
	return nil
}

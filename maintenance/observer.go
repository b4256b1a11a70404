package maintenance

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
)

// Observer is told what the runs do: each run's start, events and end (its phase), and
// each status write sent (package metrics' Recorder). Its methods must not block.
type Observer interface {
	RunStarted(name string)
	Observe(name string, ev event.Event)
	RunEnded(name, phase string)
	StatusWritten(result string)
}

// nopObserver observes nothing.
type nopObserver struct{}

func (nopObserver) RunStarted(string)           {}
func (nopObserver) Observe(string, event.Event) {}
func (nopObserver) RunEnded(string, string)     {}
func (nopObserver) StatusWritten(string)        {}

// observer returns r's Observer, or one that observes nothing.
func (r *Reconciler) observer() Observer {
	if r.Observer == nil {
		return nopObserver{}
	}
	return r.Observer
}

// SetupObserved is Setup with obs told what the runs do (a controller for
// operation.ControllerConfig's Controllers).
func SetupObserved(obs Observer, stop context.Context) func(mgr ctrl.Manager, kube kubernetes.Interface) error {
	return func(mgr ctrl.Manager, kube kubernetes.Interface) error {
		return setup(mgr, kube, obs, stop)
	}
}

// writeResult is a status write's result as metrics.StatusWritten counts it.
func writeResult(err error) string {
	switch {
	case err == nil:
		return "ok"
	case apierrors.IsConflict(err):
		return "conflict"
	}
	return "error"
}

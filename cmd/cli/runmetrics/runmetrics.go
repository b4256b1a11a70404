// Package runmetrics serves a local run's Prometheus metrics while it lasts (drain's
// --metrics-bind-address): the run's events counted by a metrics recorder on their way.
package runmetrics

import (
	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/exitcode"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/event/relay"
	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/metrics"
	"github.com/kubectl-maintenance/kubectl-maintenance/operation"
)

// Observed returns run with its events counted in the metrics, served on addr
// until stop is called (run unchanged, stop a no-op, without the flag). The address is
// bound here, before the run changes anything: a bad one is a usage error.
func Observed(addr string, run func(chan<- event.Event) (operation.Summary, error)) (func(chan<- event.Event) (operation.Summary, error), func(), error) {
	if addr == "" {
		return run, func() {}, nil
	}
	rec := metrics.NewRecorder(nil)
	if err := metrics.Register(metrics.Registry, rec, nil); err != nil {
		return nil, nil, err
	}
	_, stop, err := metrics.Serve(addr)
	if err != nil {
		return nil, nil, exitcode.With(exitcode.Usage, exitcode.UsageErrorf("--metrics-bind-address: %v", err))
	}
	const name = "drain"
	return func(out chan<- event.Event) (operation.Summary, error) {
		rec.RunStarted(name)
		r := relay.Start(out, 256, func(ev event.Event) { rec.Observe(name, ev) })
		sum, err := run(r.In())
		r.Close() // every event counted and passed on before the run is over
		phase := v1alpha1.PhaseSucceeded
		if err != nil {
			phase = v1alpha1.PhaseFailed
		}
		rec.RunEnded(name, string(phase))
		return sum, err
	}, stop, nil
}

package cli

import (
	"net"

	"github.com/spf13/cobra"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/event/relay"
	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/metrics"
	"github.com/kubectl-maintenance/kubectl-maintenance/operation"
)

// metricsFlags is drain's --metrics-bind-address: the run's metrics served while it lasts.
type metricsFlags struct {
	// MetricsAddr, when set, serves the kubectl_maintenance_* families on its /metrics.
	MetricsAddr string
}

func (m *metricsFlags) addMetricsFlag(cmd *cobra.Command) {
	cmd.Flags().StringVar(&m.MetricsAddr, "metrics-bind-address", "", `serve the run's Prometheus metrics on this address's /metrics while it lasts, e.g. :8080 or 127.0.0.1:0 (default: none; with --server-side the controller serves them)`)
}

// validateMetrics refuses the flag where it would serve nothing.
func (m *metricsFlags) validateMetrics(serverSide bool) error {
	if m.MetricsAddr == "" {
		return nil
	}
	if serverSide {
		return UsageErrorf("--metrics-bind-address serves a local run's metrics; with --server-side the controller's metrics endpoint serves them")
	}
	if _, port, err := net.SplitHostPort(m.MetricsAddr); err != nil || port == "" {
		return UsageErrorf("invalid --metrics-bind-address %q: want host:port, e.g. 127.0.0.1:8080 or :8080", m.MetricsAddr)
	}
	return nil
}

// observed returns run with its events counted in the metrics, served on MetricsAddr
// until stop is called (run unchanged, stop a no-op, without the flag). The address is
// bound here, before the run changes anything: a bad one is a usage error.
func (m *metricsFlags) observed(run func(chan<- event.Event) (operation.Summary, error)) (func(chan<- event.Event) (operation.Summary, error), func(), error) {
	if m.MetricsAddr == "" {
		return run, func() {}, nil
	}
	rec := metrics.NewRecorder(nil)
	if err := metrics.Register(metrics.Registry, rec, nil); err != nil {
		return nil, nil, err
	}
	_, stop, err := metrics.Serve(m.MetricsAddr)
	if err != nil {
		return nil, nil, WithExitCode(ExitUsage, UsageErrorf("--metrics-bind-address: %v", err))
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

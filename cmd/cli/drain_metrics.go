package cli

import (
	"net"

	"github.com/spf13/cobra"
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

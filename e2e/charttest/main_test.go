// Package charttest installs, upgrades and uninstalls the Helm chart
// (charts/kubectl-maintenance) with Helm's Go SDK (hack/chart's helmchart, a module of its
// own) on the real local cluster, and drains with a controller started with the chart's
// arguments and rights. It has a cluster of its own: the chart owns the CRDs and the
// cluster-wide objects that other packages install with the plugin.
package charttest

import (
	"os"
	"testing"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/cluster"
	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

var (
	shared *cluster.Cluster
	plugin string
)

func TestMain(m *testing.M) { os.Exit(fixture.TestMain(m, &shared, &plugin)) }

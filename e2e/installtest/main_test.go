// Package installtest runs "kubectl maintenance install --controller" and "uninstall"
// against the real local cluster. It has a cluster of its own because uninstall deletes
// the CRDs, which every other package's tests need installed.
package installtest

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

// Package drainedtest checks when a node is drained, on the real local cluster: its
// volumes detached, a settle after its cordon that catches a pod bound late, force with a
// real grace, and pods already terminating (issue 40).
package drainedtest

import (
	"os"
	"testing"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/cluster"
	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

var (
	shared *cluster.Cluster
	plugin string // path of the built kubectl-maintenance
)

func TestMain(m *testing.M) { os.Exit(fixture.TestMain(m, &shared, &plugin)) }

func newEnv(t *testing.T, nodes ...string) *fixture.Env {
	return fixture.NewEnv(t, shared, plugin, nodes...)
}

var mustContain = fixture.MustContain

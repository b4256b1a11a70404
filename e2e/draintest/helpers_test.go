package draintest

import (
	"os"
	"testing"
	"time"

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

// oneNodeUnderMaxUnavailableOne is node a running a Deployment "web" of replicas pods,
// each Ready readyDelay after it starts, under a budget of maxUnavailable 1, and node b
// for the replacements; the guard is on.
func oneNodeUnderMaxUnavailableOne(t *testing.T, replicas int32, readyDelay time.Duration) (*fixture.Env, *fixture.Guard) {
	t.Helper()
	e := newEnv(t, "a", "b")
	e.AddNodes(0)
	slow := e.Here(fixture.PodOptions{ReadyDelay: readyDelay})
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", replicas, slow); err != nil {
		t.Fatal(err)
	}
	e.Ready("web", int(replicas))
	e.PDB("web", fixture.PDBSpec{App: "web", MaxUnavailable: fixture.Int(1)}, 1)
	e.AddNodes(1)
	return e, e.Guard()
}

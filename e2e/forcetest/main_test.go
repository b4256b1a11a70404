package forcetest

import (
	"fmt"
	"os"
	"testing"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/cluster"
	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

var (
	shared *cluster.Cluster
	plugin string // path of the built kubectl-maintenance
)

// deadAnnotation is the value of fixture.KwokNodeAnnotation that takes a node from kwok:
// kwok here manages only the nodes annotated "fake", so a node annotated this way gets no
// heartbeat and no kubelet: its pods' deletions are never confirmed, as on a dead node.
const deadAnnotation = "dead"

// TestMain starts one cluster for the package whose kwok manages only the nodes annotated
// kwok.x-k8s.io/node=fake (a test kills a node by changing it), and without the taint
// eviction controller, which would delete the pods of a node tainted unreachable without
// the Eviction API (the guard would count the control plane's deletions as ours).
func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	path, cleanup, err := fixture.BuildPlugin()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer cleanup()
	plugin = path
	return cluster.Main(m, cluster.Options{ExtraArgs: map[string][]string{
		"kwok":                    {"--manage-all-nodes=false", "--manage-nodes-with-annotation-selector=" + fixture.KwokNodeAnnotation + "=fake"},
		"kube-controller-manager": {"--controllers=*,-taint-eviction-controller"},
	}}, &shared)
}

func newEnv(t *testing.T, nodes ...string) *fixture.Env {
	return fixture.NewEnv(t, shared, plugin, nodes...)
}

var mustContain = fixture.MustContain

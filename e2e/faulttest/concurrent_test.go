package faulttest

import (
	"sync"
	"testing"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

// Issue 10, test 6: two drain processes over overlapping nodes at once. Both end (0, or
// naming the other's work, and then a re-run ends 0), no budget is violated, and every
// node is empty.
func TestTwoDrainsOverOverlappingNodes(t *testing.T) {
	t.Parallel()
	e := fixture.NewEnv(t, shared, plugin, "a", "b", "c", "d")
	e.AddNodes(0, 1, 2)
	const pods = 6
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", pods, e.Here(fixture.PodOptions{})); err != nil {
		t.Fatal(err)
	}
	e.Ready("web", pods)
	e.PDB("web", fixture.PDBSpec{App: "web", MaxUnavailable: fixture.Int(1)}, 1)
	e.AddNodes(3) // where the replacements go once a, b and c are cordoned
	for _, n := range e.Nodes[:3] {
		t.Logf("node %s runs %v", n, appPodsOn(e, "web", n))
	}
	e.Guard()

	drains := [][]string{{e.Nodes[0], e.Nodes[1]}, {e.Nodes[1], e.Nodes[2]}}
	results := make([]fixture.Result, len(drains))
	var wg sync.WaitGroup
	for i, nodes := range drains {
		wg.Add(1)
		go func() {
			defer wg.Done()
			args := append([]string{"drain", "--progress=plain", "--timeout", "3m"}, nodes...)
			results[i] = start(t, e.Ctx, shared.Kubeconfig, nil, args...).wait()
		}()
	}
	wg.Wait()
	for i, res := range results {
		switch {
		case res.Code == 0:
		case mentions(res.Stdout+res.Stderr, "another", "already being drained", "in progress", "concurrent"):
			again := run(t, e.Ctx, shared.Kubeconfig, append([]string{"drain", "--progress=plain", "--timeout", "3m"}, drains[i]...)...)
			if again.Code != 0 {
				t.Errorf("re-run of drain %v after it named the other drain: exit %d, want 0", drains[i], again.Code)
			}
		default:
			t.Errorf("drain %v beside another: exit %d, want 0 or a message naming the other drain", drains[i], res.Code)
		}
	}
	for _, n := range e.Nodes[:3] {
		if left := appPodsOn(e, "web", n); len(left) > 0 {
			t.Errorf("node %s still runs %v after both drains", n, left)
		}
		if !e.Node(n).Spec.Unschedulable {
			t.Errorf("node %s is schedulable after the drains", n)
		}
	}
	e.Ready("web", pods)
}

package draintest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

// Eight nodes drained at once (the engine's threshold for one shared pod informer): one
// pod watch for the whole drain, whatever the node count; the budget holds (the Guard);
// a pod bound by name to a node while the drain waits on the budget there goes through
// kubectl's filters, served from the shared informer, and is evicted; every node ends
// empty.
func TestManyNodesAtOnceShareOnePodWatch(t *testing.T) {
	t.Parallel()
	names := []string{"spare1", "spare2"}
	for i := range 8 {
		names = append(names, fmt.Sprintf("d%d", i))
	}
	e := newEnv(t, names...)
	drain := e.Nodes[2:]
	idx := []int{}
	for i := range drain {
		idx = append(idx, i+2)
	}
	e.AddNodes(idx...)
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", 16, e.Here(fixture.PodOptions{ReadyDelay: time.Second})); err != nil {
		t.Fatal(err)
	}
	e.Ready("web", 16)
	e.PDB("web", fixture.PDBSpec{App: "web", MaxUnavailable: fixture.Int(2)}, 2)
	e.AddNodes(0, 1)
	g := e.Guard() // fails the test if the budget ever has fewer than 14 healthy pods

	created := false
	bind := func(ev map[string]any) bool {
		// On a node whose pod waits on the budget: its drain is not over.
		if node, _ := ev["node"].(string); !created && ev["type"] == "pod.eviction_blocked" && node != "" {
			created = true
			if _, err := fixture.BarePod(e.Ctx, e.C, e.NS, "bound", fixture.PodOptions{NodeName: node}); err != nil {
				t.Error(err)
			}
		}
		return false
	}
	args := append([]string{"drain"}, drain...)
	r, lines := stream(t, e, 0, bind, append(args, "--max-parallel-nodes", "8", "--force", "--timeout", "3m", "-v=6")...)
	if r.Code != 0 || !created {
		t.Fatalf("drain exit %d (pod bound during the drain: %v), want 0", r.Code, created)
	}
	drained, evictedBound := 0, false
	for _, ev := range lines {
		switch {
		case ev["type"] == "node.drained":
			drained++
		case ev["type"] == "pod.evicted" && ev["pod"] == e.NS+"/bound":
			evictedBound = true
		}
	}
	if drained != 8 || !evictedBound {
		t.Errorf("%d nodes drained (want 8); the pod bound during the drain evicted: %v", drained, evictedBound)
	}
	for _, n := range drain {
		if left := e.PodsOn(n); len(left) != 0 {
			t.Errorf("%d pods left on %s", len(left), n)
		}
	}
	podWatches := 0
	for _, l := range strings.Split(r.Stderr, "\n") {
		if strings.Contains(l, `"Response"`) && strings.Contains(l, "/api/v1/pods?") && strings.Contains(l, "watch=true") {
			podWatches++
		}
	}
	if podWatches != 1 {
		t.Errorf("%d pod watches for 8 nodes, want 1 (one shared informer)", podWatches)
	}
	if g.Deleted < 17 {
		t.Errorf("guard saw %d pods evicted, want 17", g.Deleted)
	}
}

// More than ten named nodes are found in one list of the nodes, not a GET each; a name
// among them that is no node is one line, exit 2, and nothing is cordoned. With it
// removed, the same names drain (the shared pod informer, built during the cordons).
func TestManyNamedNodesAreFoundInOneList(t *testing.T) {
	t.Parallel()
	var names []string
	for i := range 11 {
		names = append(names, fmt.Sprintf("n%d", i))
	}
	e := newEnv(t, names...)
	e.AddNodes()
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", 11, e.Here(fixture.PodOptions{})); err != nil {
		t.Fatal(err)
	}
	e.Ready("web", 11)
	missing := e.NS + "-gone"
	args := append(append([]string{"drain"}, e.Nodes...), missing, "--max-parallel-nodes", "11", "--timeout", "2m", "-v=6")
	r := e.Run(args...)
	if r.Code != 2 {
		t.Fatalf("drain with a missing node: exit %d, want 2", r.Code)
	}
	mustContain(t, "stderr", r.Stderr, fmt.Sprintf("error: node %q not found", missing))
	gets, lists := 0, 0
	for _, l := range strings.Split(r.Stderr, "\n") {
		switch {
		case strings.Contains(l, `"Response" verb="GET"`) && strings.Contains(l, "/api/v1/nodes/"):
			gets++
		case strings.Contains(l, `"Response" verb="GET"`) && strings.Contains(l, `/api/v1/nodes"`):
			lists++
		}
	}
	if gets != 0 || lists != 1 {
		t.Errorf("%d node GETs and %d node lists, want 0 and 1", gets, lists)
	}
	for _, n := range e.Nodes {
		if e.Node(n).Spec.Unschedulable {
			t.Errorf("%s cordoned by a drain that named a missing node", n)
		}
	}
	args = append(append([]string{"drain"}, e.Nodes...), "--max-parallel-nodes", "11", "--timeout", "2m")
	if r := e.Run(args...); r.Code != 0 {
		t.Fatalf("drain of the 11 nodes: exit %d, want 0: %s", r.Code, r.Stderr)
	}
	for _, n := range e.Nodes {
		if left := e.PodsOn(n); len(left) != 0 {
			t.Errorf("%d pods left on %s", len(left), n)
		}
	}
}

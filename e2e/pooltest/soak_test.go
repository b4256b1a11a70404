package pooltest

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

// Issue 22's policy.soak, from the CLI (--soak): in a rolling drain of a pool with
// maxUnavailable 1, a drained node keeps its slot for the soak: the next node is cordoned
// no sooner than the soak after the previous one drained.
func TestDrainPoolSoaksEachDrainedNode(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a", "b", "s")
	blue := e.NS + "-blue"
	applyPool(e, poolYAML(blue, blue, blue, ""))
	poolNodes(e, blue, 0, 1)
	applyPool(e, poolYAML(blue, blue, blue, ""))
	o := fixture.PodOptions{NodeSelector: map[string]string{"test": e.NS}, Tolerations: tolerateAll}
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", 4, o); err != nil {
		t.Fatal(err)
	}
	e.Ready("web", 4)
	e.AddNodes(2) // a spare outside the pool takes the replacements
	e.Guard()
	const soak = 3 * time.Second
	r := e.Run("drain", "--pool", blue, "--ignore-daemonsets", "--soak", soak.String(), "-o", "json")
	if r.Code != 0 {
		t.Fatalf("drain --pool --soak: exit %d", r.Code)
	}
	var order []string
	at := map[string]time.Time{}
	for _, l := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		var ev struct {
			Type string    `json:"type"`
			Node string    `json:"node"`
			TS   time.Time `json:"ts"`
		}
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("not NDJSON: %q: %v", l, err)
		}
		if ev.Type == "node.cordoned" || ev.Type == "node.drained" {
			k := ev.Type + " " + ev.Node
			order = append(order, k)
			at[k] = ev.TS
		}
	}
	if len(order) != 4 {
		t.Fatalf("events %q, want each node cordoned then drained", order)
	}
	first, second := strings.TrimPrefix(order[0], "node.cordoned "), strings.TrimPrefix(order[2], "node.cordoned ")
	if order[1] != "node.drained "+first || !strings.HasPrefix(order[2], "node.cordoned ") {
		t.Fatalf("events %q, want one node at a time (maxUnavailable 1)", order)
	}
	if gap := at["node.cordoned "+second].Sub(at["node.drained "+first]); gap < soak {
		t.Errorf("%s was cordoned %s after %s drained, want at least the soak (%s)", second, gap, first, soak)
	}
	for _, n := range e.Nodes[:2] {
		if left := len(e.PodsOn(n)); left != 0 {
			t.Errorf("%d pods left on %s", left, n)
		}
	}
}

package draintest

import (
	"bufio"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

// A StatefulSet of 6 under maxUnavailable 1, spread over the 3 nodes drained at once: its
// pods come back under their own names, the case a late disruption controller makes pay
// (a budget held 2 minutes by a disruptedPods entry). The drain finishes, the budget is
// never below what it needs, and whatever the pacer changed is in the NDJSON stream as
// drain.pacing events (none is expected of a cluster that keeps up; no timing asserted).
func TestStatefulSetDrainedUnderPacing(t *testing.T) {
	e := newEnv(t, "a", "b", "c", "d", "e")
	e.AddNodes(0, 1, 2)
	// Pods that take 2 s to terminate, as most do: the disruption controller has that long
	// to see each one go before its replacement of the same name exists.
	opts := e.Here(fixture.PodOptions{ReadyDelay: time.Second, DeleteDelay: 2 * time.Second})
	if _, err := fixture.StatefulSet(e.Ctx, e.C, e.NS, "db", 6, opts); err != nil {
		t.Fatal(err)
	}
	e.Ready("db", 6)
	e.PDB("db", fixture.PDBSpec{App: "db", MaxUnavailable: fixture.Int(1)}, 1)
	e.AddNodes(3, 4)
	g := e.Guard()

	r := e.Run("drain", e.Nodes[0], e.Nodes[1], e.Nodes[2], "--max-parallel-nodes", "3", "-o", "json", "--timeout", "5m")
	if r.Code != 0 {
		t.Fatalf("drain exit %d, want 0; stderr:\n%s", r.Code, r.Stderr)
	}
	if evicted := r.Summary(t)["pods_evicted"]; evicted != 6.0 {
		t.Errorf("pods_evicted = %v, want 6", evicted)
	}
	for _, n := range e.Nodes[:3] {
		if left := e.PodsOn(n); len(left) != 0 {
			t.Errorf("%d pods still on drained node %s", len(left), n)
		}
	}
	if g.Deleted != 6 {
		t.Errorf("guard saw %d pods deleted through the Eviction API, want 6", g.Deleted)
	}
	var changes []string
	sc := bufio.NewScanner(strings.NewReader(r.Stdout))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil || ev["type"] != "drain.pacing" {
			continue
		}
		reason, _ := ev["reason"].(string)
		switch reason {
		case "PacingStatefulSets", "PacingAll":
			if rate, _ := ev["rate_per_second"].(float64); rate <= 0 || ev["pdb"] == nil || ev["message"] == nil {
				t.Errorf("pacing event without its rate, budget or message: %v", ev)
			}
		case "PacingStopped":
		default:
			t.Errorf("pacing event with reason %q, want PacingStatefulSets, PacingAll or PacingStopped: %v", reason, ev)
		}
		changes = append(changes, reason)
	}
	if strings.Contains(r.Stderr, "paced") && len(changes) == 0 {
		t.Errorf("the human output speaks of pacing the NDJSON stream never said:\n%s", r.Stderr)
	}
	t.Logf("FIGURE pace: StatefulSet of 6 under maxUnavailable 1 on 3 nodes drained at once: wall %s, pacer changes %v",
		r.Elapsed.Round(time.Millisecond), changes)
}

package mnttest

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

// The soak's workload and the bound each drain must finish within, derived from the pods'
// readiness: web's budget lets one pod go at a time, so its pods leave one after the
// other, each once the replacement of the one before is Ready (readyDelay) and the
// disruption controller has counted it (a few seconds on a loaded 2-core machine):
// perPod; plus a fixed allowance for the object's creation, the controller's start of the
// run, the cordons and the follower's last poll.
const (
	soakRounds   = 20
	soakWebPods  = 6
	soakReady    = time.Second
	soakPerPod   = soakReady + 4*time.Second
	soakFixed    = 20 * time.Second
	soakBoundPer = soakWebPods*soakPerPod + soakFixed
)

// Issue 34, test 4: 20 server-side drains in a row (two nodes each, a binding budget) on a
// cluster that already carries other work, a NodePool the controller reconciles included:
// each finishes (exit 0) within the bound derived from its pods' readiness; none stalls.
func TestSoakServerSideDrains(t *testing.T) {
	e := newEnv(t, "a", "b", "c", "d", "p1", "p2")
	e.AddNodes(0, 1)
	slow := e.Here(fixture.PodOptions{ReadyDelay: soakReady})
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", soakWebPods, slow); err != nil {
		t.Fatal(err)
	}
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "bg", 2, e.Here(fixture.PodOptions{})); err != nil {
		t.Fatal(err)
	}
	e.Ready("web", soakWebPods)
	e.Ready("bg", 2)
	e.PDB("web", fixture.PDBSpec{App: "web", MaxUnavailable: fixture.Int(1)}, 1)
	e.AddNodes(2, 3, 4, 5)
	pool := taintedPool(e, names(e, 4, 5)...)
	e.Guard()
	startController(e)
	pairs := [][]string{names(e, 0, 1), names(e, 2, 3)}
	var took []time.Duration
	for i := range soakRounds {
		pair := pairs[i%2]
		name := fmt.Sprintf("%s-%02d", e.NS, i)
		r := e.Run("drain", "--server-side", "--name", name, pair[0], pair[1])
		_ = e.Run("cancel", name)
		if r.Code != 0 {
			t.Fatalf("round %d (%s): exit %d", i, name, r.Code)
		}
		took = append(took, r.Elapsed)
		if r.Elapsed > soakBoundPer {
			t.Errorf("round %d: %s, want at most %s (%d pods x %s + %s)", i, r.Elapsed.Round(100*time.Millisecond), soakBoundPer, soakWebPods, soakPerPod, soakFixed)
		}
		if u := e.Run("uncordon", pair[0], pair[1]); u.Code != 0 {
			t.Fatalf("round %d: uncordon exit %d", i, u.Code)
		}
	}
	sorted := append([]time.Duration(nil), took...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	var sum time.Duration
	for _, d := range took {
		sum += d
	}
	t.Logf("FIGURE soak: %d server-side drains of 2 nodes (%d pods under a one-at-a-time budget, 2 free) beside NodePool %s: median %s, max %s, mean %s; bound %s",
		soakRounds, soakWebPods, pool, sorted[len(sorted)/2].Round(100*time.Millisecond), sorted[len(sorted)-1].Round(100*time.Millisecond),
		(sum / time.Duration(len(took))).Round(100*time.Millisecond), soakBoundPer)
}

// taintedPool makes members a NodePool (named for the test) with a NoSchedule taint,
// applied by the controller the test runs: other work the cluster carries.
func taintedPool(e *fixture.Env, members ...string) string {
	e.T.Helper()
	pool := e.NS
	for _, n := range members {
		patchNodeLabel(e, n, "node-role.kubernetes.io/"+pool, "")
	}
	manifest := fmt.Sprintf(`apiVersion: maintenance.kubectl-maintenance.io/v1alpha1
kind: NodePool
metadata:
  name: %s
spec:
  labels:
    example.com/tier: soak
  taints:
  - key: example.com/pool
    value: soak
    effect: NoSchedule
  maxUnavailable: 1
`, pool)
	path := filepath.Join(e.T.TempDir(), "pool.yaml")
	if err := os.WriteFile(path, []byte(manifest), 0o600); err != nil {
		e.T.Fatal(err)
	}
	if r := e.Run("pool", "apply", "-f", path); r.Code != 0 {
		e.T.Fatalf("pool apply: exit %d", r.Code)
	}
	e.T.Cleanup(func() { _ = e.Run("pool", "delete", pool) })
	return pool
}

// patchNodeLabel sets one label on a node.
func patchNodeLabel(e *fixture.Env, node, key, value string) {
	e.T.Helper()
	body := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, key, value)
	if _, err := e.C.CoreV1().Nodes().Patch(e.Ctx, node, types.MergePatchType, []byte(body), metav1.PatchOptions{}); err != nil {
		e.T.Fatal(err)
	}
}

// plainPool makes members a NodePool (named for the test) with a label and nothing else.
func plainPool(e *fixture.Env, members ...string) {
	e.T.Helper()
	for _, n := range members {
		patchNodeLabel(e, n, "node-role.kubernetes.io/"+e.NS, "")
	}
	manifest := fmt.Sprintf("apiVersion: maintenance.kubectl-maintenance.io/v1alpha1\nkind: NodePool\nmetadata:\n  name: %s\nspec:\n  labels:\n    example.com/tier: plain\n  maxUnavailable: 1\n", e.NS)
	path := filepath.Join(e.T.TempDir(), "pool.yaml")
	if err := os.WriteFile(path, []byte(manifest), 0o600); err != nil {
		e.T.Fatal(err)
	}
	if r := e.Run("pool", "apply", "-f", path); r.Code != 0 {
		e.T.Fatalf("pool apply: exit %d", r.Code)
	}
	e.T.Cleanup(func() { _ = e.Run("pool", "delete", e.NS) })
}

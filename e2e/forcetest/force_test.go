package forcetest

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

// Force at a deadline. Node a holds two pods of "web" (maxUnavailable 1) and the one pod of
// "ledger-a", whose budget never allows a disruption (minAvailable 1 of 1 replica).
// --on-blocked=force without --force-after is refused (exit 2, one line, nothing
// cordoned). With --force-after 5s the web pods are evicted and only the ledger pod is
// deleted, not evicted, no earlier than 5 s after it was first blocked: a warning naming
// its budget and numbers, the pod.forced event, Warning Events on the budget and on the
// node, the summary's forced pods, and exit 5 (finished by force). No guard here: the
// test asserts instead exactly which pods were deleted without the Eviction API.
func TestForceDeletesOnlyTheBlockedPodAfterForceAfter(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a", "b", "c")
	e.AddNodes(0)
	a, c := e.Nodes[0], e.Nodes[2]
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", 2, e.Here(fixture.PodOptions{})); err != nil {
		t.Fatal(err)
	}
	e.Ready("web", 2)
	e.PDB("web", fixture.PDBSpec{App: "web", MaxUnavailable: fixture.Int(1)}, 1)
	ledger(t, e, "ledger-a", a)
	e.AddNodes(1) // for web's replacements
	del := watchDeletions(t, e)

	r := e.Run("drain", a, "--on-blocked=force")
	if r.Code != 2 || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 {
		t.Fatalf("drain --on-blocked=force without --force-after: exit %d, stderr %q; want exit 2 and one line", r.Code, r.Stderr)
	}
	mustContain(t, "stderr", r.Stderr, "--on-blocked=force needs an explicit --force-after")
	if n := e.Node(a); n.Spec.Unschedulable {
		t.Fatalf("the refused drain cordoned node %s", a)
	}

	pod := podsOf(t, e, "ledger-a")[0]
	key := e.NS + "/" + pod.Name
	r = e.Run("drain", a, "--on-blocked=force", "--force-after", "5s", "--timeout", "3m")
	if r.Code != 5 {
		t.Fatalf("drain exit %d, want 5 (finished by force)", r.Code)
	}
	mustContain(t, "stderr", r.Stderr, "Warning: forcing pod "+key+" on node "+a+": blocked ",
		"by pdb "+e.NS+"/ledger-a (needs 1 healthy pods, has 1, allows 0); deleting it, not evicting it (--on-blocked=force --force-after 5s)",
		"Forced pods (deleted below their budgets, --on-blocked=force): 1", " "+key+" on "+a+": pdb "+e.NS+"/ledger-a (healthy 1, desired 1, allowed 0)",
		"error: finished by force: 1 pod(s) deleted below their budgets")
	mustContain(t, "stdout", r.Stdout, "pod/"+pod.Name+" deleted (forced)", "node/"+a+" drained")

	var forced, evicted []string
	for _, d := range del.all() {
		if d.Evicted {
			evicted = append(evicted, d.Name)
		} else {
			forced = append(forced, d.Name)
		}
	}
	if len(forced) != 1 || forced[0] != pod.Name {
		t.Errorf("pods deleted without the Eviction API: %v, want exactly %s", forced, pod.Name)
	}
	if len(evicted) != 2 {
		t.Errorf("pods evicted: %v, want the two web pods", evicted)
	}

	// The Warning Events, on the budget and on the node.
	evs, err := e.C.CoreV1().Events(e.NS).List(e.Ctx, metav1.ListOptions{FieldSelector: "reason=PodForced"})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs.Items) != 1 || evs.Items[0].Type != "Warning" || evs.Items[0].InvolvedObject.Kind != "PodDisruptionBudget" ||
		evs.Items[0].InvolvedObject.Name != "ledger-a" || !strings.Contains(evs.Items[0].Message, "deleted pod "+key) {
		t.Errorf("PodForced events in the namespace: %+v", evs.Items)
	}
	evs, err = e.C.CoreV1().Events(metav1.NamespaceDefault).List(e.Ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + a + ",reason=PodForced"})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs.Items) != 1 || evs.Items[0].Type != "Warning" || !strings.Contains(evs.Items[0].Message, "pdb "+e.NS+"/ledger-a") {
		t.Errorf("PodForced events on node %s: %+v", a, evs.Items)
	}

	t.Run("the NDJSON stream: pod.forced with the budget's numbers, no earlier than --force-after", func(t *testing.T) {
		e.AddNodes(2)
		ledger(t, e, "ledger-c", c)
		pod := podsOf(t, e, "ledger-c")[0]
		key := e.NS + "/" + pod.Name
		r := e.Run("drain", c, "--on-blocked=force", "--force-after", "5s", "--timeout", "3m", "-o", "json")
		if r.Code != 5 {
			t.Fatalf("drain exit %d, want 5", r.Code)
		}
		evs := fixture.NDJSON(t, r.Stdout)
		blocked, f := fixture.FirstEvent(evs, "pod.eviction_blocked", key), fixture.FirstEvent(evs, "pod.forced", key)
		if blocked == nil || f == nil {
			t.Fatalf("no pod.eviction_blocked or pod.forced event for %s", key)
		}
		b, _ := f["budget"].(map[string]any)
		if f["pdb"] != e.NS+"/ledger-c" || f["level"] != "warn" || b["current_healthy"] != 1.0 || b["desired_healthy"] != 1.0 || b["disruptions_allowed"] != 0.0 {
			t.Errorf("pod.forced = %v", f)
		}
		var seen time.Time
		for _, d := range del.all() {
			if d.UID == string(pod.UID) {
				seen = d.SeenAt
				if d.Evicted {
					t.Errorf("pod %s was evicted, want deleted", key)
				}
			}
		}
		if seen.IsZero() {
			t.Fatalf("pod %s was not deleted", key)
		}
		if firstBlocked := timeOf(t, blocked); seen.Before(firstBlocked.Add(5 * time.Second)) {
			t.Errorf("pod %s deleted at %s, less than 5s after it was first blocked at %s", key, seen.Format(time.RFC3339Nano), firstBlocked.Format(time.RFC3339Nano))
		}
		sum := r.Summary(t)
		forced, _ := sum["forced"].([]any)
		if sum["pods_forced"] != 1.0 || len(forced) != 1 || forced[0].(map[string]any)["pod"] != key || forced[0].(map[string]any)["pdb"] != e.NS+"/ledger-c" {
			t.Errorf("summary = %v", sum)
		}
	})
}

// ledger runs app, one pod pinned to node, under a budget that never allows a disruption
// (minAvailable 1 of 1).
func ledger(t *testing.T, e *fixture.Env, app, node string) {
	t.Helper()
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, app, 1, fixture.PodOptions{NodeSelector: map[string]string{"kubernetes.io/hostname": node}}); err != nil {
		t.Fatal(err)
	}
	e.Ready(app, 1)
	e.PDB(app, fixture.PDBSpec{App: app, MinAvailable: fixture.Int(1)}, 0)
}

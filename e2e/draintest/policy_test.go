package draintest

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// --on-blocked=skip: three nodes, one holding the pods of a budget that never allows a
// disruption. The other two drain; that one is given up after --blocked-after, stays
// cordoned in state blocked (label and annotation) with a Warning Event naming the
// budget, and the run ends with exit 3 and a summary naming it. Then --on-blocked=fail:
// exit 3 with nothing cordoned.
func TestOnBlockedSkipGivesUpTheBlockedNodeAndFailChangesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "held", "b", "c", "spare")
	e.AddNodes(0)
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "ledger", 2, e.Here(fixture.PodOptions{})); err != nil {
		t.Fatal(err)
	}
	e.Ready("ledger", 2)
	e.PDB("ledger", fixture.PDBSpec{App: "ledger", MaxUnavailable: fixture.Int(0)}, 0)
	// One web pod pinned to each other node by a label the spare node carries too, so its
	// replacement has somewhere to go.
	e.AddNodes(1, 2, 3)
	for i, app := range []string{"web-b", "web-c"} {
		for _, n := range []string{e.Nodes[i+1], e.Nodes[3]} {
			if _, err := e.C.CoreV1().Nodes().Patch(e.Ctx, n, types.MergePatchType, []byte(`{"metadata":{"labels":{"`+app+`":"yes"}}}`), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := e.C.CoreV1().Nodes().Patch(e.Ctx, e.Nodes[3], types.MergePatchType, []byte(`{"spec":{"unschedulable":true}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	for i, app := range []string{"web-b", "web-c"} {
		if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, app, 1, fixture.PodOptions{NodeSelector: map[string]string{app: "yes"}}); err != nil {
			t.Fatal(err)
		}
		if p := e.Ready(app, 1); p[0].Spec.NodeName != e.Nodes[i+1] {
			t.Fatalf("%s runs on %s, want %s", app, p[0].Spec.NodeName, e.Nodes[i+1])
		}
	}
	if _, err := e.C.CoreV1().Nodes().Patch(e.Ctx, e.Nodes[3], types.MergePatchType, []byte(`{"spec":{"unschedulable":false}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	g := e.Guard()
	held, nodes := e.Nodes[0], e.Nodes[:3]

	r := e.Run(append([]string{"drain", "--on-blocked=skip", "--blocked-after", "10s", "--timeout", "3m"}, nodes...)...)
	if r.Code != 3 {
		t.Fatalf("drain exit %d, want 3", r.Code)
	}
	mustContain(t, "stdout", r.Stdout, "node/"+e.Nodes[1]+" drained", "node/"+e.Nodes[2]+" drained", "node/"+held+" given up, left cordoned in state blocked",
		"evicting pod "+e.NS+"/web-b-", "evicting pod "+e.NS+"/web-c-")
	mustContain(t, "stderr", r.Stderr, "Skipped nodes (blocked; left cordoned, state blocked):", " "+held+": 2 pod(s) blocked for 10s by pdb "+e.NS+"/ledger (needs 2 healthy pods, has 2, allows 0)",
		"error: 1 node(s) skipped, blocked")
	for _, n := range e.Nodes[1:3] {
		if left := e.PodsOn(n); len(left) != 0 {
			t.Errorf("%d pods left on drained node %s", len(left), n)
		}
		if got := e.Node(n).Labels[noderecord.LabelState]; got != noderecord.StateDrained {
			t.Errorf("node %s state label %q, want drained", n, got)
		}
	}
	n := e.Node(held)
	if !n.Spec.Unschedulable || n.Labels[noderecord.LabelState] != noderecord.StateBlocked || n.Annotations[noderecord.AnnotationDrain] != noderecord.StateBlocked ||
		!strings.Contains(n.Annotations[noderecord.AnnotationBlocked], e.NS+"/ledger") || !strings.Contains(n.Annotations[noderecord.AnnotationCommand], "--on-blocked=skip") ||
		n.Annotations[noderecord.AnnotationUser] == "" {
		t.Errorf("blocked node: unschedulable %v, labels %v, annotations %v", n.Spec.Unschedulable, n.Labels, n.Annotations)
	}
	if len(e.PodsOn(held)) != 2 {
		t.Errorf("the ledger pods left the blocked node")
	}
	evs, err := e.C.CoreV1().Events(metav1.NamespaceDefault).List(e.Ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + held + ",reason=DrainSkipped"})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs.Items) != 1 || evs.Items[0].Type != "Warning" || !strings.Contains(evs.Items[0].Message, "pdb "+e.NS+"/ledger (needs 2 healthy pods, has 2, allows 0)") {
		t.Errorf("DrainSkipped events on the blocked node: %+v", evs.Items)
	}

	st := e.Run(append([]string{"status"}, nodes...)...)
	if st.Code != 0 {
		t.Errorf("status exit %d", st.Code)
	}
	left := -1 // the PODS-LEFT column, found by its header
	for _, line := range strings.Split(st.Stdout, "\n") {
		f := strings.Fields(line)
		if left < 0 {
			left = slices.Index(f, "PODS-LEFT")
			continue
		}
		switch {
		case len(f) <= left:
		case f[0] == held && (f[1] != noderecord.StateBlocked || f[left] != "2"):
			t.Errorf("status of the blocked node: %q", line)
		case (f[0] == e.Nodes[1] || f[0] == e.Nodes[2]) && (f[1] != noderecord.StateDrained || f[left] != "0"):
			t.Errorf("status of a drained node: %q", line)
		}
	}
	if left < 0 {
		t.Errorf("status has no PODS-LEFT column:\n%s", st.Stdout)
	}
	mustContain(t, "status", st.Stdout, held, e.Nodes[1], e.Nodes[2], "never allows a disruption")

	t.Run("the NDJSON summary names the skipped node", func(t *testing.T) {
		r := e.Run("drain", held, "--on-blocked=skip", "--blocked-after", "3s", "-o", "json")
		if r.Code != 3 {
			t.Fatalf("exit %d, want 3", r.Code)
		}
		mustContain(t, "events", r.Stdout, `"type":"node.blocked"`, `"pdb":"`+e.NS+`/ledger"`)
		sum := r.Summary(t)
		skipped, _ := sum["skipped"].([]any)
		if len(skipped) != 1 || skipped[0].(map[string]any)["node"] != held {
			t.Errorf("summary skipped = %v", sum["skipped"])
		}
	})

	t.Run("fail: exit 3 and nothing cordoned", func(t *testing.T) {
		if r := e.Run(append([]string{"uncordon"}, nodes...)...); r.Code != 0 {
			t.Fatalf("uncordon exit %d", r.Code)
		}
		for _, name := range nodes {
			if n := e.Node(name); n.Spec.Unschedulable || noderecord.Touched(n) {
				t.Fatalf("uncordon left node %s: unschedulable %v labels %v annotations %v", name, n.Spec.Unschedulable, n.Labels, n.Annotations)
			}
		}
		r := e.Run(append([]string{"drain", "--on-blocked=fail"}, nodes...)...)
		if r.Code != 3 {
			t.Errorf("exit %d, want 3", r.Code)
		}
		mustContain(t, "stderr", r.Stderr, "nothing was changed (--on-blocked=fail)", e.NS+"/ledger", "never allows a disruption")
		for _, name := range nodes {
			if n := e.Node(name); n.Spec.Unschedulable || noderecord.Touched(n) {
				t.Errorf("node %s touched: unschedulable %v labels %v annotations %v", name, n.Spec.Unschedulable, n.Labels, n.Annotations)
			}
		}
	})
	if g.Deleted != 2 {
		t.Errorf("the guard saw %d pods evicted, want the 2 web pods", g.Deleted)
	}
}

// --not-after: four nodes one at a time, with a deadline that passes while the first
// drains: the first finishes, the other three are listed as not started (exit 4) and
// left as they were (the cordon this run made is undone).
func TestNotAfterStopsNodesFromStarting(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a", "b", "c", "d", "spare")
	e.AddNodes(0)
	// Three pods that each take 3 s to be Ready, one at a time: the first node takes ~10 s.
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "slow", 3, e.Here(fixture.PodOptions{ReadyDelay: 3 * time.Second})); err != nil {
		t.Fatal(err)
	}
	e.Ready("slow", 3)
	e.PDB("slow", fixture.PDBSpec{App: "slow", MaxUnavailable: fixture.Int(1)}, 1)
	e.AddNodes(1, 2, 3, 4)
	e.Guard()
	nodes := e.Nodes[:4]

	r := e.Run(append([]string{"drain", "--max-parallel-nodes", "1", "--not-after", "4s", "-o", "json"}, nodes...)...)
	if r.Code != 4 {
		t.Fatalf("drain exit %d, want 4", r.Code)
	}
	sum := r.Summary(t)
	if sum["nodes_drained"].(float64) != 1 {
		t.Errorf("nodes_drained = %v, want 1", sum["nodes_drained"])
	}
	notStarted, _ := sum["not_started"].([]any)
	if len(notStarted) != 3 {
		t.Fatalf("not_started = %v, want the 3 other nodes", sum["not_started"])
	}
	for i, name := range e.Nodes[1:4] {
		if notStarted[i] != name {
			t.Errorf("not_started[%d] = %v, want %s", i, notStarted[i], name)
		}
		mustContain(t, "events", r.Stdout, `"type":"node.not_started","level":"warn","message":"not started: --not-after`)
		if n := e.Node(name); n.Spec.Unschedulable || noderecord.Touched(n) {
			t.Errorf("node %s not restored: unschedulable %v labels %v annotations %v", name, n.Spec.Unschedulable, n.Labels, n.Annotations)
		}
	}
	if left := e.PodsOn(e.Nodes[0]); len(left) != 0 {
		t.Errorf("%d pods left on the first node", len(left))
	}

	t.Run("the human summary lists them", func(t *testing.T) {
		r := e.Run("drain", e.Nodes[1], e.Nodes[2], "--not-after", time.Now().Add(-time.Minute).UTC().Format(time.RFC3339))
		if r.Code != 4 {
			t.Errorf("exit %d, want 4", r.Code)
		}
		mustContain(t, "stderr", r.Stderr, "Nodes not started:\n "+e.Nodes[1]+"\n "+e.Nodes[2]+"\n", "node(s) not started")
		for _, name := range e.Nodes[1:3] {
			if e.Node(name).Spec.Unschedulable {
				t.Errorf("node %s cordoned after a deadline already passed", name)
			}
		}
	})
}

// statusOf runs "status -o json" and returns each node's status by name.
func statusOf(t *testing.T, e *fixture.Env, names ...string) map[string]map[string]any {
	t.Helper()
	r := e.Run(append([]string{"status", "-o", "json"}, names...)...)
	if r.Code != 0 {
		t.Fatalf("status exit %d", r.Code)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatalf("status -o json: %v\n%s", err, r.Stdout)
	}
	items := []any{doc}
	if doc["kind"] == "List" {
		items = doc["items"].([]any)
	}
	out := map[string]map[string]any{}
	for _, it := range items {
		m := it.(map[string]any)
		out[m["metadata"].(map[string]any)["name"].(string)] = m["status"].(map[string]any)
	}
	return out
}

// waitFor polls cond (the test's own deadline bounds it).
func waitFor(t *testing.T, e *fixture.Env, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		if e.Ctx.Err() != nil {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// status, in a second process, while a drain runs and after the drain is killed with
// SIGKILL: the table and the JSON show the node draining, since when, who started it and
// the pods left with what blocks them; the node label shows the state; "status --watch"
// follows the node from draining to untouched (after uncordon).
func TestStatusFromASecondProcessWhileADrainRunsAndAfterKill9(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a", "b")
	e.AddNodes(0)
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "frozen", 2, e.Here(fixture.PodOptions{})); err != nil {
		t.Fatal(err)
	}
	e.Ready("frozen", 2)
	e.PDB("frozen", fixture.PDBSpec{App: "frozen", MaxUnavailable: fixture.Int(0)}, 0)
	e.AddNodes(1)
	e.Guard()
	node := e.Nodes[0]

	var watchOut, watchErr fixture.SyncBuffer
	watch := exec.CommandContext(e.Ctx, plugin, "--kubeconfig", shared.Kubeconfig, "status", "--watch", "-o", "json", node)
	watch.Stdout, watch.Stderr = &watchOut, &watchErr
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = watch.Process.Kill()
		_ = watch.Wait()
		t.Logf("$ kubectl maintenance status --watch -o json %s\n%s%s", node, watchOut.String(), watchErr.String())
	}()

	drainCmd := make(chan *exec.Cmd, 1)
	drained := make(chan fixture.Result, 1)
	go func() {
		drained <- e.RunCtx(e.Ctx, func(c *exec.Cmd) { drainCmd <- c }, "drain", node, "--timeout", "3m")
	}()
	proc := <-drainCmd
	waitFor(t, e, "the node to be draining", func() bool { return e.Node(node).Labels[noderecord.LabelState] == noderecord.StateDraining })

	check := func(when string) {
		r := e.Run("status")
		if r.Code != 0 {
			t.Fatalf("%s: status exit %d", when, r.Code)
		}
		mustContain(t, when+": status", r.Stdout, "NAME", "STATE", "PODS-LEFT", "BLOCKED-BY", node, "draining", "never allows a disruption")
		st := statusOf(t, e, node)[node]
		if st == nil || st["state"] != "draining" || st["podsLeft"].(float64) != 2 || st["user"] == "" || st["since"] == "" ||
			!strings.Contains(st["command"].(string), "drain "+node) || !st["cordonedByUs"].(bool) {
			t.Errorf("%s: status -o json = %v", when, st)
		}
		for _, p := range st["pods"].([]any) {
			if pm := p.(map[string]any); pm["pdb"] != e.NS+"/frozen" || !strings.Contains(pm["blockedBy"].(string), "never allows a disruption") {
				t.Errorf("%s: pod status %v", when, pm)
			}
		}
		r = e.Run("status", "-o", "wide", node)
		mustContain(t, when+": status -o wide", r.Stdout, "COMMAND", "CORDONED-BY-US", "drain "+node+" --timeout 3m")
	}
	check("while the drain runs")
	if kubectl, err := exec.LookPath("kubectl"); err == nil {
		out, err := exec.CommandContext(e.Ctx, kubectl, "--kubeconfig", shared.Kubeconfig, "get", "nodes", node, "-L", noderecord.LabelState).CombinedOutput()
		t.Logf("$ kubectl get nodes %s -L %s\n%s", node, noderecord.LabelState, out)
		if err != nil || !strings.Contains(string(out), "STATE") || !strings.Contains(string(out), "draining") {
			t.Errorf("kubectl get nodes -L: %v\n%s", err, out)
		}
	}

	if err := proc.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-drained
	check("after kill -9 of the drain")
	waitFor(t, e, "the watch to show the node draining", func() bool {
		return strings.Contains(watchOut.String(), `"state": "draining"`)
	})

	if r := e.Run("uncordon", node); r.Code != 0 {
		t.Fatalf("uncordon exit %d", r.Code)
	}
	if n := e.Node(node); noderecord.Touched(n) {
		t.Errorf("uncordon left labels %v annotations %v", n.Labels, n.Annotations)
	}
	if r := e.Run("status", node); r.Stdout != "" || !strings.Contains(r.Stderr, "No nodes touched") {
		t.Errorf("status after uncordon: %q %q", r.Stdout, r.Stderr)
	}
	waitFor(t, e, "the watch to show the node untouched", func() bool {
		return strings.Contains(watchOut.String(), `"state": ""`)
	})
}

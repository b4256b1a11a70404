// Package draintest runs the plugin's cordon, plan and drain commands, as a user would,
// against the real local cluster, with a guard that fails any test in which a pod leaves
// without the Eviction API or a PodDisruptionBudget drops below its desired healthy pods.
package draintest

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

// Test 1 runs first and alone (not parallel), so its figures are not mixed with others'.
func TestDrainOneNodeUnderMaxUnavailableOne(t *testing.T) {
	e := newEnv(t, "a", "b")
	e.addNodes(0)
	slow := e.here(fixture.PodOptions{ReadyDelay: 2 * time.Second})
	if _, err := fixture.Deployment(e.ctx, e.c, e.ns, "web", 4, slow); err != nil {
		t.Fatal(err)
	}
	e.ready("web", 4)
	e.pdb("web", fixture.PDBSpec{App: "web", MaxUnavailable: fixture.Int(1)}, 1)
	e.addNodes(1)
	g := e.guard()

	r := e.run("drain", e.nodes[0], "-o", "json")
	if r.code != 0 {
		t.Fatalf("drain exit %d, want 0", r.code)
	}
	sum := r.summary(t)
	evicted, requests, api := sum["pods_evicted"].(float64), sum["eviction_requests"].(float64), sum["api_requests"].(float64)
	if evicted != 4 {
		t.Errorf("pods_evicted = %v, want 4", evicted)
	}
	t.Logf("FIGURE test1: drain of 1 node, 4 pods under maxUnavailable 1, 2 s readiness: wall %s; %v eviction requests, %v API requests in all (%.1f per evicted pod)",
		r.elapsed.Round(time.Millisecond), requests, api, api/evicted)
	if left := e.podsOn(e.nodes[0]); len(left) != 0 {
		t.Errorf("%d pods still on the drained node", len(left))
	}
	for _, p := range e.ready("web", 4) {
		if p.Spec.NodeName != e.nodes[1] {
			t.Errorf("replacement %s on %s, want %s", p.Name, p.Spec.NodeName, e.nodes[1])
		}
	}
	n := e.node(e.nodes[0])
	if !n.Spec.Unschedulable || n.Annotations[drain.AnnotationDrain] != drain.StateDrained || n.Annotations[drain.AnnotationCordoned] != "true" {
		t.Errorf("node after drain: unschedulable=%v annotations=%v", n.Spec.Unschedulable, n.Annotations)
	}
	if g.deleted != 4 {
		t.Errorf("guard saw %d pods deleted through the Eviction API, want 4", g.deleted)
	}

	t.Run("a re-run on the drained node has nothing to do", func(t *testing.T) {
		r := e.run("drain", e.nodes[0])
		if r.code != 0 {
			t.Fatalf("re-run exit %d, want 0", r.code)
		}
		mustContain(t, "stdout", r.stdout, "node/"+e.nodes[0]+" already cordoned", "node/"+e.nodes[0]+" drained")
		if strings.Contains(r.stdout, "evicting") {
			t.Errorf("re-run evicted something:\n%s", r.stdout)
		}
	})
}

func TestNeverAllowingBudgetIsNamedAndARerunFinishes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a", "b")
	e.addNodes(0)
	if _, err := fixture.Deployment(e.ctx, e.c, e.ns, "ledger", 2, e.here(fixture.PodOptions{})); err != nil {
		t.Fatal(err)
	}
	e.ready("ledger", 2)
	e.pdb("ledger", fixture.PDBSpec{App: "ledger", MaxUnavailable: fixture.Int(0)}, 0)
	e.addNodes(1)
	e.guard()

	r := e.run("plan", e.nodes[0])
	if r.code != 3 {
		t.Errorf("plan exit %d, want 3", r.code)
	}
	mustContain(t, "plan", r.stdout, "pdb "+e.ns+"/ledger has maxUnavailable 0: it never allows a disruption", "never")

	r = e.run("drain", e.nodes[0], "--timeout", "10s")
	if r.code != 124 {
		t.Errorf("drain exit %d, want 124", r.code)
	}
	mustContain(t, "stderr", r.stderr, "timed out after 10s", e.ns+"/ledger", "never allows a disruption")

	// Relax the budget; the same command now finishes.
	if _, err := e.c.PolicyV1().PodDisruptionBudgets(e.ns).Patch(e.ctx, "ledger", types.MergePatchType,
		[]byte(`{"spec":{"maxUnavailable":1}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	r = e.run("drain", e.nodes[0], "--timeout", "2m")
	if r.code != 0 {
		t.Fatalf("re-run exit %d, want 0", r.code)
	}
	if left := e.podsOn(e.nodes[0]); len(left) != 0 {
		t.Errorf("%d pods left on the node", len(left))
	}
}

func TestPodUnderTwoBudgetsIsReportedWithoutAHotLoop(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a", "b")
	e.addNodes()
	if _, err := fixture.Deployment(e.ctx, e.c, e.ns, "shared", 2, e.here(fixture.PodOptions{})); err != nil {
		t.Fatal(err)
	}
	e.ready("shared", 2)
	e.pdb("one", fixture.PDBSpec{App: "shared", MaxUnavailable: fixture.Int(1)}, 1)
	e.pdb("two", fixture.PDBSpec{App: "shared", MinAvailable: fixture.Int(1)}, 1)
	e.guard()
	node := e.ready("shared", 2)[0].Spec.NodeName

	r := e.run("plan", node)
	if r.code != 3 {
		t.Errorf("plan exit %d, want 3", r.code)
	}
	mustContain(t, "plan", r.stdout, "pdb "+e.ns+"/one and pdb "+e.ns+"/two", "more than one PodDisruptionBudget")

	r = e.run("drain", node, "--timeout", "8s", "-o", "json")
	if r.code != 124 {
		t.Errorf("drain exit %d, want 124", r.code)
	}
	mustContain(t, "events", r.stdout, `"reason":"MultiplePDBs"`, e.ns+"/one", e.ns+"/two")
	sum := r.summary(t)
	// Nothing changes the budgets while it waits, so the engine asks the server at most
	// once per pod on the node: no retry loop.
	if req := sum["eviction_requests"].(float64); req > 2 {
		t.Errorf("%v eviction requests in 8 s for pods under two budgets, want at most 2 (no hot loop)", req)
	}
}

func TestTwoNodesOfOneBudgetDrainTogether(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a", "b", "c")
	e.addNodes(0, 1)
	if _, err := fixture.Deployment(e.ctx, e.c, e.ns, "web", 6, e.here(fixture.PodOptions{ReadyDelay: time.Second})); err != nil {
		t.Fatal(err)
	}
	e.ready("web", 6)
	e.pdb("web", fixture.PDBSpec{App: "web", MaxUnavailable: fixture.Int(1)}, 1)
	e.addNodes(2)
	g := e.guard() // fails the test if the budget ever has fewer than 5 healthy pods

	r := e.run("drain", e.nodes[0], e.nodes[1], "-o", "json")
	if r.code != 0 {
		t.Fatalf("drain exit %d, want 0", r.code)
	}
	for _, n := range e.nodes[:2] {
		if left := e.podsOn(n); len(left) != 0 {
			t.Errorf("%d pods left on %s", len(left), n)
		}
	}
	mustContain(t, "events", r.stdout, `"type":"node.drained","level":"info","node":"`+e.nodes[0], `"type":"node.drained","level":"info","node":"`+e.nodes[1])
	if g.deleted != 6 {
		t.Errorf("guard saw %d evictions, want 6", g.deleted)
	}
}

func TestIndependentBudgetsDrainInParallel(t *testing.T) {
	t.Parallel()
	// Four slots, each a node to drain plus a spare: app i runs only on slot i's nodes,
	// so its budget is independent of every other node's.
	e := newEnv(t, "a0", "a1", "a2", "a3", "s0", "s1", "s2", "s3")
	for i := range 4 {
		if _, err := fixture.CreateNodes(e.ctx, e.c, fixture.NodeSpec{Names: e.nodes[i : i+1],
			Labels: map[string]string{"slot": e.ns + "-" + strconv.Itoa(i)}}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 4 {
		app := "app" + strconv.Itoa(i)
		o := fixture.PodOptions{ReadyDelay: 2 * time.Second, NodeSelector: map[string]string{"slot": e.ns + "-" + strconv.Itoa(i)}}
		if _, err := fixture.Deployment(e.ctx, e.c, e.ns, app, 3, o); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 4 {
		app := "app" + strconv.Itoa(i)
		e.ready(app, 3)
		e.pdb(app, fixture.PDBSpec{App: app, MaxUnavailable: fixture.Int(1)}, 1)
		if _, err := fixture.CreateNodes(e.ctx, e.c, fixture.NodeSpec{Names: e.nodes[4+i : 5+i],
			Labels: map[string]string{"slot": e.ns + "-" + strconv.Itoa(i)}}); err != nil {
			t.Fatal(err)
		}
	}
	e.guard()
	one := e.run("drain", e.nodes[0])
	if one.code != 0 {
		t.Fatalf("drain of one node exit %d", one.code)
	}
	three := e.run("drain", e.nodes[1], e.nodes[2], e.nodes[3])
	if three.code != 0 {
		t.Fatalf("drain of three nodes exit %d", three.code)
	}
	t.Logf("FIGURE test5: drain of 1 node %s, of 3 nodes at once %s (3 pods per node under its own maxUnavailable 1, 2 s readiness)",
		one.elapsed.Round(time.Millisecond), three.elapsed.Round(time.Millisecond))
}

func TestKubectlFilterSemantics(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a", "b")
	e.addNodes()
	on := fixture.PodOptions{NodeName: e.nodes[0]}
	if _, err := fixture.DaemonSet(e.ctx, e.c, e.ns, "agent", e.here(fixture.PodOptions{})); err != nil {
		t.Fatal(err)
	}
	if _, err := fixture.BarePod(e.ctx, e.c, e.ns, "bare", on); err != nil {
		t.Fatal(err)
	}
	// Not bound by nodeName: a replacement must not come back to the cordoned node.
	withData := fixture.PodOptions{EmptyDir: true, NodeSelector: map[string]string{"kubernetes.io/hostname": e.nodes[0]}}
	if _, err := fixture.Deployment(e.ctx, e.c, e.ns, "scratch", 1, withData); err != nil {
		t.Fatal(err)
	}
	if _, err := fixture.Job(e.ctx, e.c, e.ns, "batch", on); err != nil {
		t.Fatal(err)
	}
	mirror, mirrorErr := fixture.MirrorPod(e.ctx, e.c, e.ns, "static", e.nodes[0])
	e.ready("agent", 2)
	e.ready("bare", 1)
	e.ready("scratch", 1)
	if _, err := fixture.WaitPods(e.ctx, e.c, e.ns, "app=batch", func(ps []*corev1.Pod) bool {
		return len(ps) == 1 && ps[0].Status.Phase == corev1.PodSucceeded
	}); err != nil {
		t.Fatal(err)
	}
	e.guard()

	r := e.run("drain", e.nodes[0])
	if r.code != 3 {
		t.Errorf("drain without flags exit %d, want 3", r.code)
	}
	mustContain(t, "stderr", r.stderr,
		"cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore)",
		"cannot delete Pods with local storage (use --delete-emptydir-data to override)",
		"cannot delete Pods that declare no controller (use --force to override)",
		"nothing was changed")
	if e.node(e.nodes[0]).Spec.Unschedulable {
		t.Error("a refused drain left the node cordoned")
	}

	r = e.run("drain", e.nodes[0], "--ignore-daemonsets", "--delete-emptydir-data", "--force")
	if r.code != 0 {
		t.Fatalf("drain with flags exit %d, want 0", r.code)
	}
	// kubectl joins its warnings on one line: "Warning: ignoring ...; deleting ...".
	mustContain(t, "stderr", r.stderr, "Warning: ignoring DaemonSet-managed Pods", "deleting Pods with local storage", "deleting Pods that declare no controller")
	mustContain(t, "stdout", r.stdout, "pod/bare evicted", "evicting pod "+e.ns+"/batch-")
	left := map[string]bool{}
	for _, p := range e.podsOn(e.nodes[0]) {
		left[p.Labels["app"]] = true
	}
	if !left["agent"] || left["bare"] || left["scratch"] || left["batch"] {
		t.Errorf("pods left on the node: %v; want only the DaemonSet's (and the mirror pod)", left)
	}
	if mirrorErr != nil {
		t.Logf("mirror pod not created (%v): its case is covered by kubectl's filter only", mirrorErr)
	} else if !left["static"] || strings.Contains(r.stdout, mirror.Name) {
		t.Errorf("mirror pod %s was touched: left=%v", mirror.Name, left)
	}
}

func TestDryRunChangesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a", "b")
	e.addNodes()
	if _, err := fixture.Deployment(e.ctx, e.c, e.ns, "web", 2, e.here(fixture.PodOptions{})); err != nil {
		t.Fatal(err)
	}
	e.ready("web", 2)
	e.pdb("web", fixture.PDBSpec{App: "web", MaxUnavailable: fixture.Int(1)}, 1)
	node := e.ready("web", 2)[0].Spec.NodeName
	before := e.versions(node)
	for _, mode := range []string{"client", "server"} {
		r := e.run("drain", node, "--dry-run="+mode)
		if r.code != 0 {
			t.Errorf("--dry-run=%s exit %d", mode, r.code)
		}
		want := map[string]string{"client": "(dry run)", "server": "(server dry run)"}[mode]
		mustContain(t, "stdout", r.stdout, "node/"+node+" cordoned "+want, "node/"+node+" drained "+want)
		if after := e.versions(node); after != before {
			t.Errorf("--dry-run=%s changed the cluster:\nbefore %s\nafter  %s", mode, before, after)
		}
	}
}

// versions renders the resourceVersions of the node, the namespace's pods and PDBs.
func (e *env) versions(node string) string {
	e.t.Helper()
	var b strings.Builder
	b.WriteString("node=" + e.node(node).ResourceVersion)
	pods, err := e.c.CoreV1().Pods(e.ns).List(e.ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, p := range pods.Items {
		b.WriteString(" " + p.Name + "=" + p.ResourceVersion)
	}
	pdbs, err := e.c.PolicyV1().PodDisruptionBudgets(e.ns).List(e.ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, p := range pdbs.Items {
		b.WriteString(" pdb/" + p.Name + "=" + p.ResourceVersion)
	}
	return b.String()
}

func TestInterruptedDrainThenUncordonRestoresTheNode(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a", "b", "c")
	e.addNodes()
	// Cordon b by hand first: the tool must leave it cordoned on uncordon.
	if _, err := e.c.CoreV1().Nodes().Patch(e.ctx, e.nodes[1], types.MergePatchType, []byte(`{"spec":{"unschedulable":true}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	for i, n := range e.nodes[:2] {
		app := "frozen" + strconv.Itoa(i)
		if _, err := fixture.BarePod(e.ctx, e.c, e.ns, app, fixture.PodOptions{NodeName: n}); err != nil {
			t.Fatal(err)
		}
		e.ready(app, 1)
		e.pdb(app, fixture.PDBSpec{App: app, MaxUnavailable: fixture.Int(0)}, 0)
	}
	e.guard()
	ctx, cancel := context.WithTimeout(e.ctx, time.Minute)
	defer cancel()
	r := e.runCtx(ctx, func(cmd *exec.Cmd) {
		// Interrupt once both nodes are cordoned and the drain is waiting.
		for !e.node(e.nodes[0]).Spec.Unschedulable || e.node(e.nodes[0]).Annotations[drain.AnnotationDrain] == "" ||
			e.node(e.nodes[1]).Annotations[drain.AnnotationDrain] == "" {
			time.Sleep(100 * time.Millisecond)
		}
		_ = cmd.Process.Signal(syscall.SIGINT)
	}, "drain", e.nodes[0], e.nodes[1], "--force")
	if r.code != 130 {
		t.Errorf("interrupted drain exit %d, want 130", r.code)
	}
	mustContain(t, "stderr", r.stderr, "run the same command again")
	r = e.run("uncordon", e.nodes[0], e.nodes[1])
	if r.code != 0 {
		t.Fatalf("uncordon exit %d", r.code)
	}
	a, b := e.node(e.nodes[0]), e.node(e.nodes[1])
	if a.Spec.Unschedulable {
		t.Error("the node the tool cordoned is still cordoned after uncordon")
	}
	if !b.Spec.Unschedulable {
		t.Error("the node cordoned by hand before the drain was uncordoned")
	}
	for _, n := range []*corev1.Node{a, b} {
		if _, ok := n.Annotations[drain.AnnotationDrain]; ok {
			t.Errorf("node %s keeps the drain annotation", n.Name)
		}
	}
	mustContain(t, "stdout", r.stdout, "node/"+e.nodes[0]+" uncordoned", "node/"+e.nodes[1]+" left cordoned")
}

func TestEvictionOfARecreatedStatefulSetPodIsRefusedByUID(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a")
	e.addNodes()
	if _, err := fixture.StatefulSet(e.ctx, e.c, e.ns, "db", 1, e.here(fixture.PodOptions{})); err != nil {
		t.Fatal(err)
	}
	old := e.ready("db", 1)[0]
	if err := e.c.CoreV1().Pods(e.ns).Delete(e.ctx, old.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The StatefulSet recreates db-0 under the same name with a new UID.
	fresh, err := fixture.WaitPods(e.ctx, e.c, e.ns, "app=db", func(ps []*corev1.Pod) bool {
		return len(ps) == 1 && ps[0].UID != old.UID && fixture.PodReady(ps[0])
	})
	if err != nil {
		t.Fatal(err)
	}
	err = e.c.PolicyV1().Evictions(e.ns).Evict(e.ctx, evictionFor(old))
	if !isConflict(err) {
		t.Fatalf("eviction with the old pod's UID: got %v, want 409 Conflict", err)
	}
	still, err := e.c.CoreV1().Pods(e.ns).Get(e.ctx, fresh[0].Name, metav1.GetOptions{})
	if err != nil || still.UID != fresh[0].UID || still.DeletionTimestamp != nil {
		t.Fatalf("the recreated pod was touched: %v %v", err, still)
	}
}

// evictionFor builds the same eviction the engine sends: the pod's UID as precondition.
func evictionFor(p *corev1.Pod) *policyv1.Eviction {
	return &policyv1.Eviction{
		ObjectMeta:    metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace},
		DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &p.UID}},
	}
}

func isConflict(err error) bool { return apierrors.IsConflict(err) }

// Package draintest runs the plugin's cordon, plan and drain commands, as a user would,
// against the real local cluster, with a guard that fails any test in which a pod leaves
// without the Eviction API or a PodDisruptionBudget drops below its desired healthy pods.
package draintest

import (
	"context"
	"fmt"
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

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// Test 1 runs first and alone (not parallel), so its figures are not mixed with others'.
func TestDrainOneNodeUnderMaxUnavailableOne(t *testing.T) {
	e, g := oneNodeUnderMaxUnavailableOne(t, 4, 2*time.Second)

	r := e.Run("drain", e.Nodes[0], "-o", "json")
	if r.Code != 0 {
		t.Fatalf("drain exit %d, want 0", r.Code)
	}
	sum := r.Summary(t)
	evicted, requests, api := sum["pods_evicted"].(float64), sum["eviction_requests"].(float64), sum["api_requests"].(float64)
	if evicted != 4 {
		t.Errorf("pods_evicted = %v, want 4", evicted)
	}
	t.Logf("FIGURE test1: drain of 1 node, 4 pods under maxUnavailable 1, 2 s readiness: wall %s; %v eviction requests, %v API requests in all (%.1f per evicted pod)",
		r.Elapsed.Round(time.Millisecond), requests, api, api/evicted)
	if left := e.PodsOn(e.Nodes[0]); len(left) != 0 {
		t.Errorf("%d pods still on the drained node", len(left))
	}
	for _, p := range e.Ready("web", 4) {
		if p.Spec.NodeName != e.Nodes[1] {
			t.Errorf("replacement %s on %s, want %s", p.Name, p.Spec.NodeName, e.Nodes[1])
		}
	}
	n := e.Node(e.Nodes[0])
	if !n.Spec.Unschedulable || n.Annotations[noderecord.AnnotationDrain] != noderecord.StateDrained || n.Annotations[noderecord.AnnotationCordoned] != "true" {
		t.Errorf("node after drain: unschedulable=%v annotations=%v", n.Spec.Unschedulable, n.Annotations)
	}
	if g.Deleted != 4 {
		t.Errorf("guard saw %d pods deleted through the Eviction API, want 4", g.Deleted)
	}

	t.Run("a re-run on the drained node has nothing to do", func(t *testing.T) {
		r := e.Run("drain", e.Nodes[0])
		if r.Code != 0 {
			t.Fatalf("re-run exit %d, want 0", r.Code)
		}
		mustContain(t, "stdout", r.Stdout, "node/"+e.Nodes[0]+" already cordoned", "node/"+e.Nodes[0]+" drained")
		if strings.Contains(r.Stdout, "evicting") {
			t.Errorf("re-run evicted something:\n%s", r.Stdout)
		}
	})
}

func TestNeverAllowingBudgetIsNamedAndARerunFinishes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a", "b")
	e.AddNodes(0)
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "ledger", 2, e.Here(fixture.PodOptions{})); err != nil {
		t.Fatal(err)
	}
	e.Ready("ledger", 2)
	e.PDB("ledger", fixture.PDBSpec{App: "ledger", MaxUnavailable: fixture.Int(0)}, 0)
	e.AddNodes(1)
	e.Guard()

	r := e.Run("plan", e.Nodes[0])
	if r.Code != 3 {
		t.Errorf("plan exit %d, want 3", r.Code)
	}
	mustContain(t, "plan", r.Stdout, "pdb "+e.NS+"/ledger has maxUnavailable 0: it never allows a disruption", "never")

	// A dry run says what plan says: the node would not drain (exit 3), never "drained".
	for _, args := range [][]string{{"--dry-run=client"}, {"--dry-run=server"}, {"--dry-run=client", "--on-blocked=skip"}, {"--dry-run=server", "-o", "json"}} {
		r = e.Run(append([]string{"drain", e.Nodes[0]}, args...)...)
		if r.Code != 3 {
			t.Errorf("drain %v: exit %d, want 3 (blocked, as plan)", args, r.Code)
		}
		if strings.Contains(r.Stdout, " drained") || strings.Contains(r.Stdout, `"node.drained"`) {
			t.Errorf("drain %v says the node drained:\n%s", args, r.Stdout)
		}
		mustContain(t, fmt.Sprint(args), r.Stderr, e.NS+"/ledger", "never allows a disruption")
	}
	if n := e.Node(e.Nodes[0]); n.Spec.Unschedulable {
		t.Fatalf("a dry run cordoned node %s", n.Name)
	}

	r = e.Run("drain", e.Nodes[0], "--timeout", "10s")
	if r.Code != 124 {
		t.Errorf("drain exit %d, want 124", r.Code)
	}
	mustContain(t, "stderr", r.Stderr, "timed out after 10s", e.NS+"/ledger", "never allows a disruption")

	// Relax the budget; the same command now finishes.
	if _, err := e.C.PolicyV1().PodDisruptionBudgets(e.NS).Patch(e.Ctx, "ledger", types.MergePatchType,
		[]byte(`{"spec":{"maxUnavailable":1}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	r = e.Run("drain", e.Nodes[0], "--timeout", "2m")
	if r.Code != 0 {
		t.Fatalf("re-run exit %d, want 0", r.Code)
	}
	if left := e.PodsOn(e.Nodes[0]); len(left) != 0 {
		t.Errorf("%d pods left on the node", len(left))
	}
}

func TestPodUnderTwoBudgetsIsReportedWithoutAHotLoop(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a", "b")
	e.AddNodes()
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "shared", 2, e.Here(fixture.PodOptions{})); err != nil {
		t.Fatal(err)
	}
	e.Ready("shared", 2)
	e.PDB("one", fixture.PDBSpec{App: "shared", MaxUnavailable: fixture.Int(1)}, 1)
	e.PDB("two", fixture.PDBSpec{App: "shared", MinAvailable: fixture.Int(1)}, 1)
	e.Guard()
	node := e.Ready("shared", 2)[0].Spec.NodeName

	r := e.Run("plan", node)
	if r.Code != 3 {
		t.Errorf("plan exit %d, want 3", r.Code)
	}
	mustContain(t, "plan", r.Stdout, "pdb "+e.NS+"/one and pdb "+e.NS+"/two", "more than one PodDisruptionBudget")

	r = e.Run("drain", node, "--timeout", "8s", "-o", "json")
	if r.Code != 124 {
		t.Errorf("drain exit %d, want 124", r.Code)
	}
	mustContain(t, "events", r.Stdout, `"reason":"MultiplePDBs"`, e.NS+"/one", e.NS+"/two")
	sum := r.Summary(t)
	// Nothing changes the budgets while it waits, so the engine asks the server at most
	// once per pod on the node: no retry loop.
	if req := sum["eviction_requests"].(float64); req > 2 {
		t.Errorf("%v eviction requests in 8 s for pods under two budgets, want at most 2 (no hot loop)", req)
	}
}

func TestTwoNodesOfOneBudgetDrainTogether(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a", "b", "c")
	e.AddNodes(0, 1)
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", 6, e.Here(fixture.PodOptions{ReadyDelay: time.Second})); err != nil {
		t.Fatal(err)
	}
	e.Ready("web", 6)
	e.PDB("web", fixture.PDBSpec{App: "web", MaxUnavailable: fixture.Int(1)}, 1)
	e.AddNodes(2)
	g := e.Guard() // fails the test if the budget ever has fewer than 5 healthy pods

	r := e.Run("drain", e.Nodes[0], e.Nodes[1], "-o", "json")
	if r.Code != 0 {
		t.Fatalf("drain exit %d, want 0", r.Code)
	}
	for _, n := range e.Nodes[:2] {
		if left := e.PodsOn(n); len(left) != 0 {
			t.Errorf("%d pods left on %s", len(left), n)
		}
	}
	mustContain(t, "events", r.Stdout, `"type":"node.drained","level":"info","node":"`+e.Nodes[0], `"type":"node.drained","level":"info","node":"`+e.Nodes[1])
	if g.Deleted != 6 {
		t.Errorf("guard saw %d evictions, want 6", g.Deleted)
	}
}

func TestIndependentBudgetsDrainInParallel(t *testing.T) {
	t.Parallel()
	// Four slots, each a node to drain plus a spare: app i runs only on slot i's nodes,
	// so its budget is independent of every other node's.
	e := newEnv(t, "a0", "a1", "a2", "a3", "s0", "s1", "s2", "s3")
	for i := range 4 {
		if _, err := fixture.CreateNodes(e.Ctx, e.C, fixture.NodeSpec{Names: e.Nodes[i : i+1],
			Labels: map[string]string{"slot": e.NS + "-" + strconv.Itoa(i)}}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 4 {
		app := "app" + strconv.Itoa(i)
		o := fixture.PodOptions{ReadyDelay: 2 * time.Second, NodeSelector: map[string]string{"slot": e.NS + "-" + strconv.Itoa(i)}}
		if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, app, 3, o); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 4 {
		app := "app" + strconv.Itoa(i)
		e.Ready(app, 3)
		e.PDB(app, fixture.PDBSpec{App: app, MaxUnavailable: fixture.Int(1)}, 1)
		if _, err := fixture.CreateNodes(e.Ctx, e.C, fixture.NodeSpec{Names: e.Nodes[4+i : 5+i],
			Labels: map[string]string{"slot": e.NS + "-" + strconv.Itoa(i)}}); err != nil {
			t.Fatal(err)
		}
	}
	e.Guard()
	one := e.Run("drain", e.Nodes[0])
	if one.Code != 0 {
		t.Fatalf("drain of one node exit %d", one.Code)
	}
	three := e.Run("drain", e.Nodes[1], e.Nodes[2], e.Nodes[3])
	if three.Code != 0 {
		t.Fatalf("drain of three nodes exit %d", three.Code)
	}
	t.Logf("FIGURE test5: drain of 1 node %s, of 3 nodes at once %s (3 pods per node under its own maxUnavailable 1, 2 s readiness)",
		one.Elapsed.Round(time.Millisecond), three.Elapsed.Round(time.Millisecond))
}

func TestKubectlFilterSemantics(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a", "b")
	e.AddNodes()
	on := fixture.PodOptions{NodeName: e.Nodes[0]}
	if _, err := fixture.DaemonSet(e.Ctx, e.C, e.NS, "agent", e.Here(fixture.PodOptions{})); err != nil {
		t.Fatal(err)
	}
	if _, err := fixture.BarePod(e.Ctx, e.C, e.NS, "bare", on); err != nil {
		t.Fatal(err)
	}
	// Not bound by nodeName: a replacement must not come back to the cordoned node.
	withData := fixture.PodOptions{EmptyDir: true, NodeSelector: map[string]string{"kubernetes.io/hostname": e.Nodes[0]}}
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "scratch", 1, withData); err != nil {
		t.Fatal(err)
	}
	if _, err := fixture.Job(e.Ctx, e.C, e.NS, "batch", on); err != nil {
		t.Fatal(err)
	}
	mirror, mirrorErr := fixture.MirrorPod(e.Ctx, e.C, e.NS, "static", e.Nodes[0])
	e.Ready("agent", 2)
	e.Ready("bare", 1)
	e.Ready("scratch", 1)
	if _, err := fixture.WaitPods(e.Ctx, e.C, e.NS, "app=batch", func(ps []*corev1.Pod) bool {
		return len(ps) == 1 && ps[0].Status.Phase == corev1.PodSucceeded
	}); err != nil {
		t.Fatal(err)
	}
	e.Guard()

	r := e.Run("drain", e.Nodes[0])
	if r.Code != 3 {
		t.Errorf("drain without flags exit %d, want 3", r.Code)
	}
	mustContain(t, "stderr", r.Stderr,
		"cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore)",
		"cannot delete Pods with local storage (use --delete-emptydir-data to override)",
		"cannot delete Pods that declare no controller (use --force to override)",
		"nothing was changed")
	if e.Node(e.Nodes[0]).Spec.Unschedulable {
		t.Error("a refused drain left the node cordoned")
	}

	r = e.Run("drain", e.Nodes[0], "--ignore-daemonsets", "--delete-emptydir-data", "--force")
	if r.Code != 0 {
		t.Fatalf("drain with flags exit %d, want 0", r.Code)
	}
	// kubectl joins its warnings on one line in map order; the plan gives each kind its own line.
	mustContain(t, "stderr", r.Stderr, "Warning: ignoring DaemonSet-managed Pods", "deleting Pods with local storage", "Warning: deleting Pods that declare no controller")
	mustContain(t, "stdout", r.Stdout, "pod/bare evicted", "evicting pod "+e.NS+"/batch-")
	left := map[string]bool{}
	for _, p := range e.PodsOn(e.Nodes[0]) {
		left[p.Labels["app"]] = true
	}
	if !left["agent"] || left["bare"] || left["scratch"] || left["batch"] {
		t.Errorf("pods left on the node: %v; want only the DaemonSet's (and the mirror pod)", left)
	}
	if mirrorErr != nil {
		t.Logf("mirror pod not created (%v): its case is covered by kubectl's filter only", mirrorErr)
	} else if !left["static"] || strings.Contains(r.Stdout, mirror.Name) {
		t.Errorf("mirror pod %s was touched: left=%v", mirror.Name, left)
	}
}

func TestDryRunChangesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a", "b")
	e.AddNodes()
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", 2, e.Here(fixture.PodOptions{})); err != nil {
		t.Fatal(err)
	}
	e.Ready("web", 2)
	e.PDB("web", fixture.PDBSpec{App: "web", MaxUnavailable: fixture.Int(1)}, 1)
	node := e.Ready("web", 2)[0].Spec.NodeName
	before := versions(e, node)
	for _, mode := range []string{"client", "server"} {
		r := e.Run("drain", node, "--dry-run="+mode)
		if r.Code != 0 {
			t.Errorf("--dry-run=%s exit %d", mode, r.Code)
		}
		want := map[string]string{"client": "(dry run)", "server": "(server dry run)"}[mode]
		mustContain(t, "stdout", r.Stdout, "node/"+node+" cordoned "+want, "node/"+node+" drained "+want)
		if after := versions(e, node); after != before {
			t.Errorf("--dry-run=%s changed the cluster:\nbefore %s\nafter  %s", mode, before, after)
		}
		// Several nodes: every cordon before any eviction, as in the real run, and a
		// summary that counts the pods the lines above it say would go.
		r = e.Run("drain", e.Nodes[0], e.Nodes[1], "--dry-run="+mode)
		lastCordon, firstEvicted, evicted := -1, -1, 0
		for i, l := range strings.Split(r.Stdout, "\n") {
			if strings.HasPrefix(l, "node/") && strings.Contains(l, " cordoned ") {
				lastCordon = i
			}
			if strings.HasPrefix(l, "pod/") && strings.Contains(l, " evicted ") {
				evicted++
				if firstEvicted < 0 {
					firstEvicted = i
				}
			}
		}
		if lastCordon < 0 || (firstEvicted >= 0 && firstEvicted < lastCordon) {
			t.Errorf("--dry-run=%s of two nodes: a pod evicted (line %d) before the last cordon (line %d):\n%s", mode, firstEvicted, lastCordon, r.Stdout)
		}
		if evicted == 0 { // one: with both nodes drained the other's replacement has nowhere to run
			t.Errorf("--dry-run=%s of two nodes: no pod said evicted:\n%s", mode, r.Stdout)
		}
		mustContain(t, "stderr", r.Stderr, fmt.Sprintf("%d pod(s) evicted", evicted))
	}
}

// versions renders the resourceVersions of the node, the namespace's pods and PDBs.
func versions(e *fixture.Env, node string) string {
	e.T.Helper()
	var b strings.Builder
	// The node's resourceVersion moves with kwok's status heartbeats; compare what a
	// drain would change instead: schedulability, taints and this tool's annotations.
	n := e.Node(node)
	fmt.Fprintf(&b, "node unschedulable=%v taints=%v annotations=%q/%q", n.Spec.Unschedulable, n.Spec.Taints,
		n.Annotations[noderecord.AnnotationCordoned], n.Annotations[noderecord.AnnotationDrain])
	pods, err := e.C.CoreV1().Pods(e.NS).List(e.Ctx, metav1.ListOptions{})
	if err != nil {
		e.T.Fatal(err)
	}
	for _, p := range pods.Items {
		b.WriteString(" " + p.Name + "=" + p.ResourceVersion)
	}
	pdbs, err := e.C.PolicyV1().PodDisruptionBudgets(e.NS).List(e.Ctx, metav1.ListOptions{})
	if err != nil {
		e.T.Fatal(err)
	}
	for _, p := range pdbs.Items {
		b.WriteString(" pdb/" + p.Name + "=" + p.ResourceVersion)
	}
	return b.String()
}

func TestInterruptedDrainThenUncordonRestoresTheNode(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a", "b", "c")
	e.AddNodes()
	// Cordon b by hand first: the tool must leave it cordoned on uncordon.
	if _, err := e.C.CoreV1().Nodes().Patch(e.Ctx, e.Nodes[1], types.MergePatchType, []byte(`{"spec":{"unschedulable":true}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	for i, n := range e.Nodes[:2] {
		app := "frozen" + strconv.Itoa(i)
		if _, err := fixture.BarePod(e.Ctx, e.C, e.NS, app, fixture.PodOptions{NodeName: n}); err != nil {
			t.Fatal(err)
		}
		e.Ready(app, 1)
		e.PDB(app, fixture.PDBSpec{App: app, MaxUnavailable: fixture.Int(0)}, 0)
	}
	e.Guard()
	ctx, cancel := context.WithTimeout(e.Ctx, time.Minute)
	defer cancel()
	r := e.RunCtx(ctx, func(cmd *exec.Cmd) {
		// Interrupt once both nodes are cordoned and the drain is waiting.
		for !e.Node(e.Nodes[0]).Spec.Unschedulable || e.Node(e.Nodes[0]).Annotations[noderecord.AnnotationDrain] == "" ||
			e.Node(e.Nodes[1]).Annotations[noderecord.AnnotationDrain] == "" {
			time.Sleep(100 * time.Millisecond)
		}
		_ = cmd.Process.Signal(syscall.SIGINT)
	}, "drain", e.Nodes[0], e.Nodes[1], "--force")
	if r.Code != 130 {
		t.Errorf("interrupted drain exit %d, want 130", r.Code)
	}
	mustContain(t, "stderr", r.Stderr, "run the same command again")
	r = e.Run("uncordon", e.Nodes[0], e.Nodes[1])
	if r.Code != 0 {
		t.Fatalf("uncordon exit %d", r.Code)
	}
	a, b := e.Node(e.Nodes[0]), e.Node(e.Nodes[1])
	if a.Spec.Unschedulable {
		t.Error("the node the tool cordoned is still cordoned after uncordon")
	}
	if !b.Spec.Unschedulable {
		t.Error("the node cordoned by hand before the drain was uncordoned")
	}
	for _, n := range []*corev1.Node{a, b} {
		if _, ok := n.Annotations[noderecord.AnnotationDrain]; ok {
			t.Errorf("node %s keeps the drain annotation", n.Name)
		}
	}
	mustContain(t, "stdout", r.Stdout, "node/"+e.Nodes[0]+" uncordoned", "node/"+e.Nodes[1]+" left cordoned")
}

func TestEvictionOfARecreatedStatefulSetPodIsRefusedByUID(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a")
	e.AddNodes()
	if _, err := fixture.StatefulSet(e.Ctx, e.C, e.NS, "db", 1, e.Here(fixture.PodOptions{})); err != nil {
		t.Fatal(err)
	}
	old := e.Ready("db", 1)[0]
	if err := e.C.CoreV1().Pods(e.NS).Delete(e.Ctx, old.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The StatefulSet recreates db-0 under the same name with a new UID.
	fresh, err := fixture.WaitPods(e.Ctx, e.C, e.NS, "app=db", func(ps []*corev1.Pod) bool {
		return len(ps) == 1 && ps[0].UID != old.UID && fixture.PodReady(ps[0])
	})
	if err != nil {
		t.Fatal(err)
	}
	err = e.C.PolicyV1().Evictions(e.NS).Evict(e.Ctx, evictionFor(old))
	if !isConflict(err) {
		t.Fatalf("eviction with the old pod's UID: got %v, want 409 Conflict", err)
	}
	still, err := e.C.CoreV1().Pods(e.NS).Get(e.Ctx, fresh[0].Name, metav1.GetOptions{})
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

// This package's cluster has no NodePool CRD: pool commands must say so in one line.
func TestPoolCommandsWithoutTheCRD(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, args := range [][]string{{"drain", "--pool", "blue"}, {"pool", "list"}, {"pool", "get", "blue"}} {
		r := e.Run(args...)
		if r.Code != 2 {
			t.Errorf("%v: exit %d, want 2", args, r.Code)
		}
		mustContain(t, "stderr", r.Stderr, "the NodePool resource is not installed: run kubectl maintenance pool install")
	}
}

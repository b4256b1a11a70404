package draintest

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/render"
	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

// Issue 13 test 2: a replacement with nowhere to run. The workload may only run on the
// drained node (its node selector matches no other node), so the first eviction's
// replacement stays Pending and the budget stays exhausted: the wait line and the NDJSON
// name the replacement pod and the scheduler's own message, and the wait is said again
// every --wait-interval with how long it has lasted.
func TestReplacementWithNowhereToRunIsNamedWithTheSchedulersReason(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a")
	e.AddNodes()
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", 2, e.Here(fixture.PodOptions{})); err != nil {
		t.Fatal(err)
	}
	e.Ready("web", 2)
	e.PDB("web", fixture.PDBSpec{App: "web", MinAvailable: fixture.Int(1)}, 1)
	g := e.Guard()

	r, lines := stream(t, e, 0, nil, "drain", e.Nodes[0], "--timeout", "25s", "--wait-interval", "5s")
	if r.Code != 124 {
		t.Fatalf("drain exit %d, want 124 (the budget never recovers)", r.Code)
	}
	var named, repeated map[string]any
	for _, ev := range lines {
		if ev["type"] != "pod.eviction_blocked" {
			continue
		}
		cause, _ := ev["cause"].(string)
		if named == nil && strings.Contains(cause, "is unschedulable: 0/") {
			named = ev
		}
		if w, _ := ev["waited_seconds"].(float64); w >= 5 && named != nil && repeated == nil {
			repeated = ev
		}
	}
	if named == nil {
		t.Fatal("no pod.eviction_blocked names an unschedulable replacement with the scheduler's message")
	}
	pending := pendingPods(t, e, "web")
	if len(pending) == 0 {
		t.Fatal("no Pending replacement")
	}
	cause := named["cause"].(string)
	fixture.MustContain(t, "cause", cause, "pdb "+e.NS+"/web", e.NS+"/"+pending[0].Name, "nodes are available", "node(s) were unschedulable")
	fixture.MustContain(t, "remedy", fmt.Sprint(named["remedy"]), "uncordon")
	if repeated == nil {
		t.Error("the wait was not said again with waited_seconds >= 5 (--wait-interval 5s)")
	}
	if v := lines[0]["events_version"]; v != render.EventsVersion {
		t.Errorf("events_version %v, want %s", v, render.EventsVersion)
	}

	// The human wait line says the same: the cause on the line, the remedy under it.
	h := e.Run("drain", e.Nodes[0], "--timeout", "12s")
	if h.Code != 124 {
		t.Fatalf("drain exit %d, want 124", h.Code)
	}
	fixture.MustContain(t, "stderr", h.Stderr, "waits for pdb "+e.NS+"/web", "; cause: ", "is unschedulable: 0/", "\n  remedy: ")
	if g.Deleted != 1 {
		t.Errorf("%d pods evicted, want 1", g.Deleted)
	}
}

func pendingPods(t *testing.T, e *fixture.Env, app string) []corev1.Pod {
	t.Helper()
	list, err := e.C.CoreV1().Pods(e.NS).List(e.Ctx, metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		t.Fatal(err)
	}
	var out []corev1.Pod
	for _, p := range list.Items {
		if p.Spec.NodeName == "" && p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

// ruledDeployment creates a one-replica Deployment whose pods carry extra labels and
// annotations (a drain rule).
func ruledDeployment(t *testing.T, e *fixture.Env, name string, labels, annotations map[string]string) {
	t.Helper()
	tpl := fixture.PodTemplate(name, e.Here(fixture.PodOptions{}))
	for k, v := range labels {
		tpl.Labels[k] = v
	}
	for k, v := range annotations {
		tpl.Annotations[k] = v
	}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.NS},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}, Template: tpl}}
	if _, err := e.C.AppsV1().Deployments(e.NS).Create(e.Ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// Issue 13 test 3: Cluster API's skip and wait-completed pods and a Karpenter
// do-not-disrupt pod, each handled as documented: plan names the do-not-disrupt pod as a
// blocker (exit 3) and lists the others; a drain never evicts any of them and cannot
// finish while the do-not-disrupt pod runs (timeout, the pod named); with
// --ignore-do-not-disrupt it evicts it, waits for the wait-completed pod to complete, and
// finishes with the skip pod still on the node.
func TestClusterAPIAndKarpenterDrainRules(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a")
	e.AddNodes()
	node := e.Nodes[0]
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", 1, e.Here(fixture.PodOptions{})); err != nil {
		t.Fatal(err)
	}
	ruledDeployment(t, e, "keep", map[string]string{"cluster.x-k8s.io/drain": "skip"}, nil)
	ruledDeployment(t, e, "batch", map[string]string{"cluster.x-k8s.io/drain": "wait-completed"}, nil)
	ruledDeployment(t, e, "dnd", nil, map[string]string{"karpenter.sh/do-not-disrupt": "true"})
	pods := map[string]string{}
	for _, app := range []string{"web", "keep", "batch", "dnd"} {
		pods[app] = e.Ready(app, 1)[0].Name
	}
	g := e.Guard()

	p := e.Run("plan", node)
	if p.Code != 3 {
		t.Fatalf("plan exit %d, want 3 (the do-not-disrupt pod blocks the node)", p.Code)
	}
	fixture.MustContain(t, "plan", p.Stdout, "never", pods["dnd"], "karpenter.sh/do-not-disrupt", "--ignore-do-not-disrupt",
		"cluster.x-k8s.io/drain=skip", pods["keep"], "wait-completed", pods["batch"])

	r, lines := stream(t, e, 0, nil, "drain", node, "--timeout", "12s")
	if r.Code != 124 {
		t.Fatalf("drain exit %d, want 124 (do-not-disrupt holds the node)", r.Code)
	}
	reasons := map[string]map[string]any{}
	for _, ev := range lines {
		pod, _ := ev["pod"].(string)
		switch ev["type"] {
		case "pod.eviction_started":
			for _, app := range []string{"keep", "batch", "dnd"} {
				if pod == e.NS+"/"+pods[app] {
					t.Errorf("the %s pod was asked to be evicted", app)
				}
			}
		case "pod.eviction_blocked":
			reasons[fmt.Sprint(ev["reason"])] = ev
		case "node.drained":
			t.Error("the node counts as drained while a do-not-disrupt pod runs on it")
		}
	}
	dnd := reasons["DoNotDisrupt"]
	if dnd == nil || dnd["pod"] != e.NS+"/"+pods["dnd"] {
		t.Fatalf("no DoNotDisrupt wait for the do-not-disrupt pod: %v", reasons)
	}
	fixture.MustContain(t, "do-not-disrupt remedy", fmt.Sprint(dnd["remedy"]), "--ignore-do-not-disrupt")
	if wc := reasons["WaitCompleted"]; wc == nil || wc["pod"] != e.NS+"/"+pods["batch"] {
		t.Errorf("no WaitCompleted wait for the wait-completed pod: %v", reasons)
	}
	fixture.MustContain(t, "summary", r.Stdout, pods["dnd"])

	// Ignoring do-not-disrupt: the pod is evicted; the node then waits for the
	// wait-completed pod, which completes (the test plays its kubelet).
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 300 && e.Ctx.Err() == nil; i++ {
			if _, err := e.C.CoreV1().Pods(e.NS).Get(e.Ctx, pods["dnd"], metav1.GetOptions{}); err != nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		time.Sleep(2 * time.Second) // the drain now waits on the wait-completed pod alone
		b, err := e.C.CoreV1().Pods(e.NS).Get(e.Ctx, pods["batch"], metav1.GetOptions{})
		if err != nil {
			t.Errorf("get the wait-completed pod: %v", err)
			return
		}
		b.Status.Phase = corev1.PodSucceeded
		if _, err := e.C.CoreV1().Pods(e.NS).UpdateStatus(e.Ctx, b, metav1.UpdateOptions{}); err != nil {
			t.Errorf("complete the wait-completed pod: %v", err)
		}
	}()
	r2, lines2 := stream(t, e, 0, nil, "drain", node, "--ignore-do-not-disrupt", "--timeout", "90s")
	wg.Wait()
	if r2.Code != 0 {
		t.Fatalf("drain --ignore-do-not-disrupt exit %d, want 0", r2.Code)
	}
	completedFirst, waited := false, false
	for _, ev := range lines2 {
		if ev["type"] == "pod.eviction_blocked" && ev["reason"] == "WaitCompleted" {
			waited = true
		}
		if ev["type"] == "node.drained" {
			b, err := e.C.CoreV1().Pods(e.NS).Get(e.Ctx, pods["batch"], metav1.GetOptions{})
			completedFirst = err == nil && b.Status.Phase == corev1.PodSucceeded
		}
	}
	if !waited || !completedFirst {
		t.Errorf("the node did not wait for the wait-completed pod (said %v, completed before drained %v)", waited, completedFirst)
	}
	left := map[string]bool{}
	for _, p := range e.PodsOn(node) {
		left[p.Name] = true
		if fixture.EvictedByAPI(&p) {
			t.Errorf("pod %s left on the node carries an eviction", p.Name)
		}
	}
	if !left[pods["keep"]] || !left[pods["batch"]] || left[pods["dnd"]] || left[pods["web"]] {
		t.Errorf("pods left on the node %v; want the skip and the completed wait-completed pods only", left)
	}
	if g.Deleted != 2 {
		t.Errorf("%d pods evicted, want 2 (web, then the do-not-disrupt pod)", g.Deleted)
	}
}

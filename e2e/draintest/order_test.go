package draintest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/cluster"
	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

// Drain order groups (issue 35 tests 2, 3 and 7's label half) on the real cluster: pods
// in groups -5, 0 and 10, a wait-completed pod and a skip pod (its label in Cluster API's
// case variants). The order comes first from --drain-order on a cluster without Cluster
// API's MachineDrainRule CRD, then from MachineDrainRule objects once the CRD (its shape,
// testdata/machinedrainrules.yaml) is installed: each group's first eviction comes after
// every pod of the groups before it is gone, the wait-completed pod is never evicted and
// the node is drained once it completes, the skip pod stays.
func TestDrainOrderGroups(t *testing.T) {
	cluster.Need(t, shared)
	ctx := context.Background()
	ax, err := apiextensionsclient.NewForConfig(shared.Config)
	if err != nil {
		t.Fatal(err)
	}
	const crdName = "machinedrainrules.cluster.x-k8s.io"
	removeCRD := func() {
		_ = ax.ApiextensionsV1().CustomResourceDefinitions().Delete(ctx, crdName, metav1.DeleteOptions{})
		for i := 0; i < 300; i++ {
			if _, err := ax.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crdName, metav1.GetOptions{}); apierrors.IsNotFound(err) {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("CRD %s not gone", crdName)
	}
	removeCRD() // a cluster without Cluster API
	t.Cleanup(removeCRD)

	t.Run("from --drain-order, without the CRD", func(t *testing.T) {
		e := newEnv(t, "a")
		e.AddNodes()
		pods := orderWorkloads(t, e, map[string]string{"cluster.x-k8s.io/drain": "WaitCompleted"})
		flag := "app=first:-5,app=last:10"
		// Bad input: one line naming it, exit 2, nothing touched.
		bad := e.Run("drain", e.Nodes[0], "--drain-order", "app=first:soon")
		if bad.Code != 2 || strings.Count(strings.TrimSpace(bad.Stderr), "\n") != 0 || !strings.Contains(bad.Stderr, `"app=first:soon"`) {
			t.Fatalf("drain --drain-order app=first:soon: exit %d, stderr %q; want exit 2 and one line naming it", bad.Code, bad.Stderr)
		}
		if e.Node(e.Nodes[0]).Spec.Unschedulable {
			t.Fatal("a refused --drain-order cordoned the node")
		}
		p := e.Run("plan", e.Nodes[0], "--drain-order", flag)
		if p.Code != 0 {
			t.Fatalf("plan exit %d, want 0:\n%s%s", p.Code, p.Stdout, p.Stderr)
		}
		mustContain(t, "plan", p.Stdout, "drain order", "order -5", "order 10", "wait-completed", "label cluster.x-k8s.io/drain=WaitCompleted",
			"drain order rule app=first", pods["first"][0], pods["batch"][0])
		drainInOrder(t, e, pods, "--drain-order", flag)
	})

	t.Run("from MachineDrainRules", func(t *testing.T) {
		installCRD(t, ax)
		e := newEnv(t, "b")
		e.AddNodes()
		pods := orderWorkloads(t, e, nil)
		dyn, err := dynamic.NewForConfig(shared.Config)
		if err != nil {
			t.Fatal(err)
		}
		gvr := schema.GroupVersionResource{Group: "cluster.x-k8s.io", Version: "v1beta2", Resource: "machinedrainrules"}
		inNS := map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": e.NS}}
		for _, r := range []struct {
			name, app, behavior string
			order               int64
		}{
			{"a-first", "first", "Drain", -5},
			{"b-batch", "batch", "WaitCompleted", 0},
			{"c-last", "last", "Drain", 10},
			{"d-first-again", "first", "Drain", 50}, // sorted after a-first: never used
		} {
			drainSpec := map[string]any{"behavior": r.behavior}
			if r.behavior == "Drain" {
				drainSpec["order"] = r.order
			}
			u := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDrainRule",
				"metadata": map[string]any{"name": r.name, "namespace": e.NS},
				"spec": map[string]any{"drain": drainSpec, "machines": []any{map[string]any{"selector": map[string]any{}}},
					"pods": []any{map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"app": r.app}}, "namespaceSelector": inNS}}},
			}}
			if _, err := dyn.Resource(gvr).Namespace(e.NS).Create(e.Ctx, u, metav1.CreateOptions{}); err != nil {
				t.Fatalf("create MachineDrainRule %s: %v", r.name, err)
			}
		}
		p := e.Run("plan", e.Nodes[0])
		if p.Code != 0 {
			t.Fatalf("plan exit %d, want 0:\n%s%s", p.Code, p.Stdout, p.Stderr)
		}
		mustContain(t, "plan", p.Stdout, "order -5", "MachineDrainRule a-first", "order 10", "MachineDrainRule c-last",
			"wait-completed", "MachineDrainRule b-batch")
		if strings.Contains(p.Stdout, "d-first-again") {
			t.Errorf("plan names the rule sorted after the one that matched first:\n%s", p.Stdout)
		}
		drainInOrder(t, e, pods)
	})
}

// installCRD installs the MachineDrainRule CRD and waits until it is served.
func installCRD(t *testing.T, ax apiextensionsclient.Interface) {
	t.Helper()
	raw, err := os.ReadFile("testdata/machinedrainrules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(raw, crd); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := ax.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		rl, err := shared.Client.Discovery().ServerResourcesForGroupVersion("cluster.x-k8s.io/v1beta2")
		if err == nil && len(rl.APIResources) > 0 {
			return
		}
		if i == 300 {
			t.Fatalf("the MachineDrainRule CRD is not served: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// orderWorkloads runs on the env's node: first (2 pods), web, last, a pod labelled
// cluster.x-k8s.io/drain=Skip (keep) and batch (with batchLabels), and returns each
// app's pod names.
func orderWorkloads(t *testing.T, e *fixture.Env, batchLabels map[string]string) map[string][]string {
	t.Helper()
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "first", 2, e.Here(fixture.PodOptions{})); err != nil {
		t.Fatal(err)
	}
	for _, app := range []string{"web", "last"} {
		if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, app, 1, e.Here(fixture.PodOptions{})); err != nil {
			t.Fatal(err)
		}
	}
	ruledDeployment(t, e, "keep", map[string]string{"cluster.x-k8s.io/drain": "Skip"}, nil)
	ruledDeployment(t, e, "batch", batchLabels, nil)
	pods := map[string][]string{}
	for app, n := range map[string]int{"first": 2, "web": 1, "last": 1, "keep": 1, "batch": 1} {
		for _, p := range e.Ready(app, n) {
			pods[app] = append(pods[app], p.Name)
		}
	}
	return pods
}

// drainInOrder drains the env's node with args, completes the batch pod once every
// other evicted pod is gone (playing its kubelet), and checks the order: every eviction
// of a group after every pod of the groups before it is gone, batch and keep never
// evicted, the node drained after batch completed, the guard clean.
func drainInOrder(t *testing.T, e *fixture.Env, pods map[string][]string, args ...string) {
	t.Helper()
	g := e.Guard()
	node := e.Nodes[0]
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		evicted := append(append(append([]string{}, pods["first"]...), pods["web"]...), pods["last"]...)
		for e.Ctx.Err() == nil {
			left := 0
			for _, name := range evicted {
				if _, err := e.C.CoreV1().Pods(e.NS).Get(e.Ctx, name, metav1.GetOptions{}); err == nil {
					left++
				}
			}
			if left == 0 {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		b, err := e.C.CoreV1().Pods(e.NS).Get(e.Ctx, pods["batch"][0], metav1.GetOptions{})
		if err != nil {
			t.Errorf("get the wait-completed pod: %v", err)
			return
		}
		b.Status.Phase = corev1.PodSucceeded
		if _, err := e.C.CoreV1().Pods(e.NS).UpdateStatus(e.Ctx, b, metav1.UpdateOptions{}); err != nil {
			t.Errorf("complete the wait-completed pod: %v", err)
		}
	}()
	r, lines := stream(t, e, 0, nil, append([]string{"drain", node, "--timeout", "3m"}, args...)...)
	wg.Wait()
	if r.Code != 0 {
		t.Fatalf("drain exit %d, want 0:\n%s", r.Code, r.Stderr)
	}
	group := map[string]int{}
	for app, rank := range map[string]int{"first": 0, "web": 1, "last": 2} {
		for _, name := range pods[app] {
			group[e.NS+"/"+name] = rank
		}
	}
	started := map[int][]int{} // group -> line indexes of its evictions asked
	gone := map[int][]int{}    // group -> line indexes of its pods gone
	waitSaid, drainedAt := "", -1
	for i, ev := range lines {
		pod, _ := ev["pod"].(string)
		switch ev["type"] {
		case "pod.eviction_started":
			rank, ok := group[pod]
			if !ok {
				t.Errorf("pod %s was asked to be evicted (only first, web and last may be)", pod)
			}
			started[rank] = append(started[rank], i)
		case "pod.evicted":
			gone[group[pod]] = append(gone[group[pod]], i)
		case "pod.eviction_blocked":
			if ev["reason"] == "OrderGroup" && strings.Contains(fmt.Sprint(ev["message"]), "order group -5") {
				waitSaid = fmt.Sprint(ev["message"])
			}
		case "node.drained":
			drainedAt = i
		}
	}
	for rank := 1; rank <= 2; rank++ {
		if len(started[rank]) == 0 || len(gone[rank-1]) == 0 {
			t.Fatalf("group %d: evictions %v, group %d gone %v", rank, started[rank], rank-1, gone[rank-1])
		}
		if first, last := minOf(started[rank]), maxOf(gone[rank-1]); first < last {
			t.Errorf("group %d's first eviction (line %d) came before group %d's last pod was gone (line %d)", rank, first, rank-1, last)
		}
	}
	if len(gone[0]) != 2 || len(gone[1]) != 1 || len(gone[2]) != 1 {
		t.Errorf("pods gone by group %v, want 2, 1, 1", gone)
	}
	if !strings.HasPrefix(waitSaid, "waits for order group -5 to finish: ") {
		t.Errorf("no wait said for order group -5 (got %q)", waitSaid)
	}
	if drainedAt < 0 {
		t.Fatal("the node was never drained")
	}
	if b, err := e.C.CoreV1().Pods(e.NS).Get(e.Ctx, pods["batch"][0], metav1.GetOptions{}); err != nil || b.Status.Phase != corev1.PodSucceeded || fixture.EvictedByAPI(b) {
		t.Errorf("the wait-completed pod: %v (want it completed, never evicted)", err)
	}
	if k, err := e.C.CoreV1().Pods(e.NS).Get(e.Ctx, pods["keep"][0], metav1.GetOptions{}); err != nil || k.Spec.NodeName != node || fixture.EvictedByAPI(k) {
		t.Errorf("the skip pod: %v (want it left on the node)", err)
	}
	if g.Deleted != 4 {
		t.Errorf("%d pods evicted, want 4 (first twice, web, last)", g.Deleted)
	}
}

func minOf(xs []int) int {
	m := xs[0]
	for _, x := range xs {
		m = min(m, x)
	}
	return m
}

func maxOf(xs []int) int {
	m := xs[0]
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// Issue 35 test 3: karpenter.sh/do-not-disrupt with a duration counts from the pod's
// start. "5s" on a pod started over 10 s ago drains; "1h" does not: plan names it as
// protected until when (exit 3), and the drain waits for it as for "true" (the pod named,
// until when, exit 124 at --timeout).
func TestDoNotDisruptDurations(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a")
	e.AddNodes()
	node := e.Nodes[0]
	ruledDeployment(t, e, "short", nil, map[string]string{"karpenter.sh/do-not-disrupt": "5s"})
	ruledDeployment(t, e, "long", nil, map[string]string{"karpenter.sh/do-not-disrupt": "1h"})
	short, long := e.Ready("short", 1)[0], e.Ready("long", 1)[0]
	for _, p := range []*corev1.Pod{short, long} {
		if p.Status.StartTime == nil {
			t.Fatalf("pod %s has no start time", p.Name)
		}
		if wait := time.Until(p.Status.StartTime.Add(10 * time.Second)); wait > 0 {
			time.Sleep(wait) // both started at least 10 s ago
		}
	}
	until := long.Status.StartTime.Add(time.Hour).UTC().Format(time.RFC3339)
	g := e.Guard()

	p := e.Run("plan", node)
	if p.Code != 3 {
		t.Fatalf("plan exit %d, want 3 (the 1h pod blocks the node):\n%s", p.Code, p.Stdout)
	}
	mustContain(t, "plan", p.Stdout, long.Name, "do-not-disrupt until "+until, "not evicted until "+until, short.Name)

	r, lines := stream(t, e, 0, nil, "drain", node, "--timeout", "20s")
	if r.Code != 124 {
		t.Fatalf("drain exit %d, want 124 (the 1h pod holds the node):\n%s", r.Code, r.Stderr)
	}
	shortGone, longWait := false, ""
	for _, ev := range lines {
		switch pod := ev["pod"]; ev["type"] {
		case "pod.evicted":
			shortGone = shortGone || pod == e.NS+"/"+short.Name
		case "pod.eviction_started":
			if pod == e.NS+"/"+long.Name {
				t.Error("the 1h pod was asked to be evicted")
			}
		case "pod.eviction_blocked":
			if ev["reason"] == "DoNotDisrupt" && pod == e.NS+"/"+long.Name {
				longWait = fmt.Sprint(ev["cause"])
			}
		}
	}
	if !shortGone {
		t.Error("the 5s pod, started over 10 s ago, was not evicted")
	}
	mustContain(t, "the 1h pod's wait", longWait, "not evicted until "+until)
	mustContain(t, "summary", r.Stdout, long.Name)
	if g.Deleted != 1 {
		t.Errorf("%d pods evicted, want 1 (the 5s pod)", g.Deleted)
	}
}

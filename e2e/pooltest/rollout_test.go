package pooltest

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/reconciler"
)

// Issue 11, test 6: a NoExecute taint added to a pool whose nodes run intolerant pods
// under a budget: the sync holds it back; pool sync --rollout rolls it out node by node
// (at most maxUnavailable unschedulable), every pod leaving through the Eviction API,
// and names the DaemonSet pods the taint removes.
func TestNoExecuteRolloutNodeByNode(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a", "b", "c", "s")
	blue := e.NS + "-blue"
	noSched := "example.com/dedicated=" + blue + ":NoSchedule"
	applyPool(e, poolSpecYAML(blue, blue, 1, noSched))
	poolNodes(e, blue, 0, 1, 2)
	applyPool(e, poolSpecYAML(blue, blue, 1, noSched))
	o := fixture.PodOptions{ReadyDelay: time.Second, NodeSelector: map[string]string{"test": e.NS}, Tolerations: tolerateAll}
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", 3, o); err != nil {
		t.Fatal(err)
	}
	e.Ready("web", 3)
	e.PDB("web", fixture.PDBSpec{App: "web", MaxUnavailable: fixture.Int(1)}, 1)
	// A pod that tolerates the coming NoExecute taint: the rollout must leave it be.
	keepTol := append([]corev1.Toleration{{Key: "example.com/isolated", Operator: corev1.TolerationOpExists}}, tolerateAll...)
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "keeper", 1, fixture.PodOptions{NodeSelector: map[string]string{"test": e.NS}, Tolerations: keepTol}); err != nil {
		t.Fatal(err)
	}
	keeper := e.Ready("keeper", 1)[0]
	// A DaemonSet in another namespace (the guard watches this one: the taint manager
	// deletes DaemonSet pods without the Eviction API, which is expected).
	agents, err := fixture.Namespace(e.Ctx, e.C, "agents")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.C.CoreV1().Namespaces().Delete(e.Ctx, agents, metav1.DeleteOptions{}) })
	if _, err := fixture.DaemonSet(e.Ctx, e.C, agents, "agent", fixture.PodOptions{NodeSelector: map[string]string{"test": e.NS}, Tolerations: tolerateAll}); err != nil {
		t.Fatal(err)
	}
	if _, err := fixture.WaitPodsReady(e.Ctx, e.C, agents, "app=agent", 3); err != nil {
		t.Fatal(err)
	}
	e.AddNodes(3) // a spare outside the pool takes the replacements
	e.Guard()
	withNoExecute := poolSpecYAML(blue, blue, 1, noSched, "example.com/isolated=yes:NoExecute")
	r := applyPool(e, withNoExecute)
	if r.Code != 3 {
		t.Errorf("pool apply with a NoExecute taint over intolerant pods: exit %d, want 3 (held back)", r.Code)
	}
	fixture.MustContain(t, "stderr", r.Stderr, "holds back the NoExecute taint", "--rollout")
	stop := unschedulablePeak(e, e.Nodes[:3])
	reasons := rolloutReasons(e, blue)
	r = e.Run("pool", "sync", blue, "--rollout", "--ignore-daemonsets", "--timeout", "3m")
	peak := stop()
	seen := reasons()
	t.Logf("RolloutProgressing reasons seen: %v", seen)
	if len(seen) == 0 || seen[0] != "RollingOut" || seen[len(seen)-1] != "Complete" {
		t.Errorf("RolloutProgressing went %v, want RollingOut ... Complete", seen)
	}
	if r.Code != 0 {
		t.Fatalf("pool sync --rollout exit %d", r.Code)
	}
	t.Logf("FIGURE NoExecute rollout over 3 nodes (3 pods under a PDB, 1 s readiness): %s, peak %d unschedulable", r.Elapsed.Round(time.Millisecond), peak)
	if peak > 1 {
		t.Errorf("%d pool nodes were unschedulable at once, want at most 1", peak)
	}
	fixture.MustContain(t, "stderr", r.Stderr, agents+"/agent-", "node(s) tainted")
	for _, name := range e.Nodes[:3] {
		n := e.Node(name)
		found := false
		for _, tn := range n.Spec.Taints {
			found = found || (tn.Key == "example.com/isolated" && tn.Effect == corev1.TaintEffectNoExecute)
		}
		if !found || n.Spec.Unschedulable {
			t.Errorf("node %s: NoExecute taint %v, unschedulable %v", name, found, n.Spec.Unschedulable)
		}
		for _, p := range e.PodsOn(name) {
			if p.DeletionTimestamp == nil && p.UID != keeper.UID {
				t.Errorf("pod %s still on tainted node %s", p.Name, name)
			}
		}
	}
	e.Ready("web", 3)
	if got, err := e.C.CoreV1().Pods(e.NS).Get(e.Ctx, keeper.Name, metav1.GetOptions{}); err != nil || got.UID != keeper.UID || got.DeletionTimestamp != nil {
		t.Errorf("the pod that tolerates the taint was evicted (err %v)", err)
	}
	c := meta.FindStatusCondition(getPool(e, blue).Status.Conditions, reconciler.ConditionRollout)
	if c == nil || c.Reason != "Complete" || !strings.Contains(c.Message, "agent-") {
		t.Errorf("RolloutProgressing condition = %+v, want Complete naming the DaemonSet pods", c)
	}
}

// rolloutReasons watches the pool; stop returns the reasons its RolloutProgressing
// condition went through, in order, without repeats.
func rolloutReasons(e *fixture.Env, pool string) (stop func() []string) {
	e.T.Helper()
	ctx, cancel := context.WithCancel(e.Ctx)
	dyn, err := dynamic.NewForConfig(shared.Config)
	if err != nil {
		e.T.Fatal(err)
	}
	w, err := dyn.Resource(v1alpha1.GroupVersion.WithResource("nodepools")).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + pool})
	if err != nil {
		e.T.Fatal(err)
	}
	var seen []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
			for _, c := range conds {
				m, _ := c.(map[string]any)
				if m["type"] == reconciler.ConditionRollout {
					if r, _ := m["reason"].(string); len(seen) == 0 || seen[len(seen)-1] != r {
						seen = append(seen, r)
					}
				}
			}
		}
	}()
	return func() []string {
		time.Sleep(300 * time.Millisecond) // the last status write's event
		cancel()
		w.Stop()
		<-done
		return seen
	}
}

// The controller with --rollout rolls a held-back NoExecute taint out by itself, node by
// node, every pod leaving through the Eviction API.
func TestControllerRollsANoExecuteTaintOut(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a", "b", "s")
	blue := e.NS + "-blue"
	noSched := "example.com/dedicated=" + blue + ":NoSchedule"
	applyPool(e, poolSpecYAML(blue, blue, 1, noSched))
	poolNodes(e, blue, 0, 1)
	applyPool(e, poolSpecYAML(blue, blue, 1, noSched))
	o := fixture.PodOptions{ReadyDelay: time.Second, NodeSelector: map[string]string{"test": e.NS}, Tolerations: tolerateAll}
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", 2, o); err != nil {
		t.Fatal(err)
	}
	e.Ready("web", 2)
	e.PDB("web", fixture.PDBSpec{App: "web", MaxUnavailable: fixture.Int(1)}, 1)
	e.AddNodes(2)
	e.Guard()
	startController(e, "", "--pools="+blue, "--rollout")
	stop := unschedulablePeak(e, e.Nodes[:2])
	// The spec change straight through the API: only the controller can roll it out.
	dyn, err := dynamic.NewForConfig(shared.Config)
	if err != nil {
		t.Fatal(err)
	}
	patch := []byte(`{"spec":{"taints":[{"key":"example.com/dedicated","value":"` + blue + `","effect":"NoSchedule"},{"key":"example.com/isolated","value":"yes","effect":"NoExecute"}]}}`)
	if _, err := dyn.Resource(v1alpha1.GroupVersion.WithResource("nodepools")).Patch(e.Ctx, blue, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range e.Nodes[:2] {
		waitFor(e, name, func(n *corev1.Node) bool {
			for _, tn := range n.Spec.Taints {
				if tn.Key == "example.com/isolated" {
					return !n.Spec.Unschedulable
				}
			}
			return false
		})
	}
	if peak := stop(); peak > 1 {
		t.Errorf("%d pool nodes were unschedulable at once, want at most 1", peak)
	}
	e.Ready("web", 2)
	for _, name := range e.Nodes[:2] {
		for _, p := range e.PodsOn(name) {
			if p.DeletionTimestamp == nil {
				t.Errorf("pod %s still on tainted node %s", p.Name, name)
			}
		}
	}
}

package drainedtest

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

// Test 4 of issue 40. A pod held terminating by a finalizer (deleted by the test just
// before the drain) is never sent an eviction, and --skip-wait-for-delete-timeout=20 lets
// it go the moment it passes: the node is drained within 3 s of the pod being 20 s past
// its deletionTimestamp.
func TestATerminatingPodIsLetGoWhenSkipWaitPasses(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a")
	e.AddNodes()
	a := e.Nodes[0]
	tpl := fixture.PodTemplate("held", fixture.PodOptions{NodeName: a})
	pod := &corev1.Pod{ObjectMeta: tpl.ObjectMeta, Spec: tpl.Spec}
	pod.Name, pod.Namespace, pod.Finalizers = "held", e.NS, []string{"example.com/hold"}
	if _, err := e.C.CoreV1().Pods(e.NS).Create(e.Ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = e.C.CoreV1().Pods(e.NS).Patch(context.Background(), "held", types.JSONPatchType, []byte(`[{"op":"remove","path":"/metadata/finalizers"}]`), metav1.PatchOptions{})
	})
	e.Ready("held", 1)
	if err := e.C.CoreV1().Pods(e.NS).Delete(e.Ctx, "held", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	cur, err := e.C.CoreV1().Pods(e.NS).Get(e.Ctx, "held", metav1.GetOptions{})
	if err != nil || cur.DeletionTimestamp == nil {
		t.Fatalf("pod held after its delete: %v, %v; want it terminating", cur, err)
	}
	passes := cur.DeletionTimestamp.Add(20 * time.Second)
	r := e.Run("drain", a, "--force", "--skip-wait-for-delete-timeout=20", "--timeout", "2m", "-o", "json")
	if r.Code != 0 {
		t.Fatalf("drain exit %d", r.Code)
	}
	evs := fixture.NDJSON(t, r.Stdout)
	if ev := fixture.FirstEvent(evs, "pod.eviction_started", e.NS+"/held"); ev != nil {
		t.Errorf("the terminating pod was sent an eviction: %v", ev)
	}
	// deletionTimestamp has a precision of one second: the pod passed 20 s at most 1 s
	// before passes.
	drained := timeOf(t, fixture.FirstEvent(evs, "node.drained", ""))
	if after := drained.Sub(passes); after < -time.Second || after > 3*time.Second {
		t.Errorf("node drained %s after the pod passed 20 s, want within 3 s", after.Round(time.Millisecond))
	}
	t.Logf("figures: deletionTimestamp %s, node drained %s after it passed 20 s (run %s)",
		cur.DeletionTimestamp.Format(time.RFC3339), drained.Sub(passes).Round(time.Millisecond), r.Elapsed.Round(time.Millisecond))
}

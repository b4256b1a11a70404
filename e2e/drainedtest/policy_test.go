package drainedtest

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

// Test 5 of issue 40. A node whose only blocker is a budget that never allows: the plan
// under --on-blocked=force --force-after 10m exits 0 (the policy ends the blocker) and
// lists the pod as forced at the deadline; the same plan without force exits 3.
func TestThePlanExitsZeroWhenForceEndsEveryBlocker(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a")
	e.AddNodes()
	a := e.Nodes[0]
	neverAllows(t, e, "ledger", a, fixture.PodOptions{}, 30)
	r := e.Run("plan", a, "--force", "--on-blocked=force", "--force-after", "10m")
	if r.Code != 0 {
		t.Errorf("plan --on-blocked=force: exit %d, want 0", r.Code)
	}
	mustContain(t, "stdout", r.Stdout+r.Stderr, "would force pod "+e.NS+"/ledger on "+a+": pdb "+e.NS+"/ledger", "forced once blocked 10m0s")
	if r := e.Run("plan", a, "--force"); r.Code != 3 {
		t.Errorf("plan without force: exit %d, want 3", r.Code)
	}
}

// Test 6 of issue 40. --pod-selector app=short: an unselected pod protected by
// karpenter.sh/do-not-disrupt "1h" is not part of the drain: exit 0, that pod untouched.
func TestUnselectedPodsDoNotHoldTheNode(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a")
	e.AddNodes()
	a := e.Nodes[0]
	if _, err := fixture.BarePod(e.Ctx, e.C, e.NS, "short", fixture.PodOptions{NodeName: a}); err != nil {
		t.Fatal(err)
	}
	tpl := fixture.PodTemplate("long", fixture.PodOptions{NodeName: a})
	long := &corev1.Pod{ObjectMeta: tpl.ObjectMeta, Spec: tpl.Spec}
	long.Name, long.Namespace = "long", e.NS
	long.Annotations["karpenter.sh/do-not-disrupt"] = "1h"
	long, err := e.C.CoreV1().Pods(e.NS).Create(e.Ctx, long, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.Ready("short", 1)
	e.Ready("long", 1)
	r := e.Run("drain", a, "--force", "--pod-selector", "app=short", "--timeout", "1m")
	if r.Code != 0 {
		t.Fatalf("drain --pod-selector app=short: exit %d, want 0", r.Code)
	}
	cur, err := e.C.CoreV1().Pods(e.NS).Get(e.Ctx, "long", metav1.GetOptions{})
	if err != nil || cur.UID != long.UID || cur.DeletionTimestamp != nil {
		t.Errorf("the unselected pod after the drain: %v, %v; want it untouched", cur, err)
	}
}

package forcetest

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

// A dead node: no kubelet posts its status (no kwok manages it) and its Ready condition
// is Unknown, so no kubelet confirms its pods' deletions. plan names it; the drain names
// it once, evicts its pods through the Eviction API as far as their budget allows
// (maxUnavailable 1 of 2: the second after the first one's replacement is Ready) with a
// 1 s grace period, stops waiting for each 10 s after its deletion started, names each
// pod left, counts them in the summary, and exits 0. The guard is on.
func TestDeadNodeDrainsWithoutWaitingForItsPods(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "dead", "b")
	dead := e.Nodes[0]
	deadNode(t, e, dead)
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", 2, e.Here(fixture.PodOptions{Tolerations: deadTolerations})); err != nil {
		t.Fatal(err)
	}
	runOnDeadNode(t, e, "web", 2)
	e.Ready("web", 2)
	e.PDB("web", fixture.PDBSpec{App: "web", MaxUnavailable: fixture.Int(1)}, 1)
	e.AddNodes(1) // for the replacements
	e.Guard()
	var keys []string
	for _, p := range e.PodsOn(dead) {
		keys = append(keys, e.NS+"/"+p.Name)
	}
	if len(keys) != 2 {
		t.Fatalf("pods on the dead node: %v, want the two web pods", keys)
	}

	p := e.Run("plan", dead)
	if p.Code != 0 {
		t.Errorf("plan exit %d, want 0", p.Code)
	}
	mustContain(t, "plan", p.Stdout, "warning: node "+dead+" is not ready (Ready=Unknown since ", "(NodeStatusUnknown)",
		"its pods are evicted with a 1s grace period, budgets honoured; a pod whose deletion started is not waited for after 10s (--dead-node-delete-wait)")

	r := e.Run("drain", dead, "--timeout", "3m")
	if r.Code != 0 {
		t.Fatalf("drain exit %d, want 0", r.Code)
	}
	if strings.Count(r.Stderr, "is not ready (Ready=Unknown") != 1 {
		t.Errorf("the dead node is not named exactly once:\n%s", r.Stderr)
	}
	mustContain(t, "stdout", r.Stdout, "node/"+dead+" drained")
	mustContain(t, "stderr", r.Stderr, "Pods left on dead nodes (deletion started, left to the node's return or removal): 2")
	for _, k := range keys {
		mustContain(t, "stderr", r.Stderr, "Warning: pod "+k+" on dead node "+dead+": its grace period ended ")
	}
	left := e.PodsOn(dead)
	if len(left) != 2 {
		t.Errorf("%d pods left on the dead node, want its 2 (no kubelet confirms their deletion)", len(left))
	}
	for _, pod := range left {
		if pod.DeletionTimestamp == nil || !fixture.EvictedByAPI(&pod) || pod.DeletionGracePeriodSeconds == nil || *pod.DeletionGracePeriodSeconds != 1 {
			t.Errorf("pod %s on the dead node: deletion %v, evicted %v, grace %v; want evicted with a 1s grace", pod.Name, pod.DeletionTimestamp, fixture.EvictedByAPI(&pod), pod.DeletionGracePeriodSeconds)
		}
	}
}

// deadTolerations let pods run on a node that is not ready (its taints), but not on a
// cordoned one: the replacements go elsewhere.
var deadTolerations = []corev1.Toleration{
	{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists},
	{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists},
}

// deadNode creates a node no kwok manages (no kubelet, no heartbeat: its pods' deletions
// are never confirmed) whose Ready condition is Unknown, as the node lifecycle controller
// sets it once a kubelet stops posting its status.
func deadNode(t *testing.T, e *fixture.Env, name string) {
	t.Helper()
	n := fixture.Node(name, fixture.NodeSpec{Labels: map[string]string{"test": e.NS}})
	n.Annotations[fixture.KwokNodeAnnotation] = deadAnnotation
	created, err := e.C.CoreV1().Nodes().Create(e.Ctx, n, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	created.Status = n.Status
	created.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Reason: "NodeStatusUnknown",
		Message: "Kubelet stopped posting node status.", LastHeartbeatTime: now, LastTransitionTime: now}}
	if _, err := e.C.CoreV1().Nodes().UpdateStatus(e.Ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if drain.NodeDead(e.Node(name)) == "" {
		t.Fatalf("node %s is Ready: kwok manages it", name)
	}
}

// runOnDeadNode waits until the n pods of app are scheduled and marks them Running and
// Ready, as the node's kubelet did before it died.
func runOnDeadNode(t *testing.T, e *fixture.Env, app string, n int) {
	t.Helper()
	pods, err := fixture.WaitPods(e.Ctx, e.C, e.NS, "app="+app, func(ps []*corev1.Pod) bool {
		bound := 0
		for _, p := range ps {
			if p.Spec.NodeName != "" {
				bound++
			}
		}
		return bound == n
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods {
		now := metav1.Now()
		p.Status.Phase = corev1.PodRunning
		p.Status.StartTime = &now
		p.Status.Conditions = nil
		for _, c := range []corev1.PodConditionType{corev1.PodScheduled, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: c, Status: corev1.ConditionTrue, LastTransitionTime: now})
		}
		if _, err := e.C.CoreV1().Pods(e.NS).UpdateStatus(e.Ctx, p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

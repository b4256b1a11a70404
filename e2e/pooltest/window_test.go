package pooltest

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// drain --pool rolls as a sliding window: a node held by a budget holds one of the pool's
// maxUnavailable slots, not the start of every later node. With maxUnavailable 2, node a
// waits on a budget that never allows a disruption; b drains and c starts in its place
// (a batch-by-batch drain would never start c), and no more than two members are ever
// out of service at once. The run stops at --timeout (124) naming the budget.
func TestDrainPoolIsASlidingWindow(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a", "b", "c", "s")
	blue := e.NS + "-blue"
	applyPool(e, poolSpecYAML(blue, blue, 2))
	poolNodes(e, blue, 0, 1, 2)
	applyPool(e, poolSpecYAML(blue, blue, 2))
	held := fixture.PodOptions{NodeSelector: map[string]string{"kubernetes.io/hostname": e.Nodes[0]}, Tolerations: tolerateAll}
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "frozen", 1, held); err != nil {
		t.Fatal(err)
	}
	pod := e.Ready("frozen", 1)[0]
	e.PDB("frozen", fixture.PDBSpec{App: "frozen", MaxUnavailable: fixture.Int(0)}, 0)
	e.Guard()
	// Out of service: cordoned and not drained yet (drained members stay cordoned and no
	// longer count against maxUnavailable).
	stop := peakOf(e, e.Nodes[:3], func(n *corev1.Node) bool {
		return n.Spec.Unschedulable && n.Labels[noderecord.LabelState] != noderecord.StateDrained
	})
	r := e.Run("drain", "--pool", blue, "--timeout", "20s")
	time.Sleep(200 * time.Millisecond) // let the last watch events arrive
	most := stop()
	if r.Code != 124 {
		t.Fatalf("drain --pool exit %d, want 124 (node a held at --timeout)\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	fixture.MustContain(t, "stderr", r.Stderr, e.NS+"/frozen")
	if most > 2 {
		t.Errorf("%d pool members were cordoned and not drained at once, want at most 2 (maxUnavailable 2)", most)
	}
	for _, n := range e.Nodes[1:3] {
		if got := e.Node(n).Labels[noderecord.LabelState]; got != noderecord.StateDrained {
			t.Errorf("node %s is in state %q, want %q: it should have started while a was held", n, got, noderecord.StateDrained)
		}
	}
	if got := e.Node(e.Nodes[0]).Labels[noderecord.LabelState]; got != noderecord.StateFailed {
		t.Errorf("node a is in state %q, want %q (held by the budget at --timeout: the run failed it, never left it draining)", got, noderecord.StateFailed)
	}
	got, err := e.C.CoreV1().Pods(e.NS).Get(e.Ctx, pod.Name, metav1.GetOptions{})
	if err != nil || got.UID != pod.UID || got.DeletionTimestamp != nil {
		t.Errorf("the pod under the never-allowing budget was deleted or is terminating (err %v)", err)
	}
}

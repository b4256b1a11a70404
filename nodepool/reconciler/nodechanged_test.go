package reconciler

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/ownership"
)

func readyNode(name string, pools []string, unschedulable, ready bool) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}, Spec: corev1.NodeSpec{Unschedulable: unschedulable}}
	for _, p := range pools {
		n.Labels[nodepool.RoleLabel(p)] = ""
	}
	st := corev1.ConditionTrue
	if !ready {
		st = corev1.ConditionFalse
	}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: st}}
	return n
}

func TestNodeChangedIgnoresHeartbeats(t *testing.T) {
	base := readyNode("a", []string{"blue"}, false, true)
	base.Annotations = map[string]string{ownership.RecordAnnotation("blue"): `{"labels":{"tier":"a"}}`}
	base.Labels["tier"] = "a"
	tests := []struct {
		name string
		edit func(*corev1.Node)
		want bool
	}{
		{"heartbeat", func(n *corev1.Node) { n.Status.Conditions[0].LastHeartbeatTime = metav1.Now(); n.ResourceVersion = "9" }, false},
		{"other label", func(n *corev1.Node) { n.Labels["unrelated"] = "x" }, false},
		{"not-ready taint", func(n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{{Key: "node.kubernetes.io/not-ready", Effect: corev1.TaintEffectNoSchedule}}
		}, false},
		{"other annotation", func(n *corev1.Node) { n.Annotations["x"] = "y" }, false},
		{"role label", func(n *corev1.Node) { n.Labels[nodepool.RoleLabel("green")] = "" }, true},
		{"recorded label", func(n *corev1.Node) { n.Labels["tier"] = "b" }, true},
		{"taint", func(n *corev1.Node) { n.Spec.Taints = []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}} }, true},
		{"record", func(n *corev1.Node) { n.Annotations[ownership.RecordAnnotation("blue")] = `{}` }, true},
		{"cordon", func(n *corev1.Node) { n.Spec.Unschedulable = true }, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := base.DeepCopy()
			tc.edit(n)
			if got := NodeChanged(base, n); got != tc.want {
				t.Errorf("NodeChanged = %v, want %v", got, tc.want)
			}
		})
	}
}

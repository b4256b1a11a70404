package ownership

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
)

func TestComputeHandEditedValuesAreConflicts(t *testing.T) {
	p := pool("blue", map[string]string{"tier": "a"}, taint("dedicated", "ml", corev1.TaintEffectNoSchedule))
	n, err := apply(t, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, []*v1alpha1.NodePool{p})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		edit func(*corev1.Node)
		want []string
	}{
		{"taint value", func(n *corev1.Node) { n.Spec.Taints[0].Value = "gpu" }, []string{`"ml"`, `"gpu"`, "by hand", "taint dedicated:NoSchedule"}},
		{"label value", func(n *corev1.Node) { n.Labels["tier"] = "z" }, []string{`"a"`, `"z"`, "by hand", "label tier"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := n.DeepCopy()
			tc.edit(m)
			_, err := Compute(m, []*v1alpha1.NodePool{p}, nil)
			var ce *ConflictError
			if !errors.As(err, &ce) || ce.Recorded == nil {
				t.Fatalf("got %v, want a conflict naming the recorded value", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q does not name %s", err, w)
				}
			}
		})
	}
}

func TestComputeKeepsARoleLabelSetBeforeThePool(t *testing.T) {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{nodepool.RoleLabel("blue"): ""}}}
	n, err := apply(t, n, []*v1alpha1.NodePool{pool("blue", map[string]string{"tier": "a"})})
	if err != nil {
		t.Fatal(err)
	}
	n, err = apply(t, n, nil, "blue")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := n.Labels[nodepool.RoleLabel("blue")]; !ok || n.Labels["tier"] != "" {
		t.Errorf("after removing the pool: %s; want the role label kept and tier gone", describe(n))
	}
	// A role label the pool wrote goes with it.
	n2, err := apply(t, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n2"}}, []*v1alpha1.NodePool{pool("blue", nil)})
	if err != nil {
		t.Fatal(err)
	}
	if n2, err = apply(t, n2, nil, "blue"); err != nil {
		t.Fatal(err)
	}
	if _, ok := n2.Labels[nodepool.RoleLabel("blue")]; ok {
		t.Errorf("the role label the pool wrote survived its removal")
	}
}

func TestNoExecuteVictims(t *testing.T) {
	taints := []corev1.Taint{{Key: "iso", Value: "yes", Effect: corev1.TaintEffectNoExecute}, {Key: "soft", Effect: corev1.TaintEffectNoSchedule}}
	tol := func(secs *int64) []corev1.Toleration {
		return []corev1.Toleration{{Key: "iso", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: secs}}
	}
	ds := []metav1.OwnerReference{{Kind: "DaemonSet", Name: "d", Controller: ptr.To(true)}}
	pods := []corev1.Pod{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "n", Name: "plain"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "n", Name: "tolerates"}, Spec: corev1.PodSpec{Tolerations: tol(nil)}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "n", Name: "for-a-while"}, Spec: corev1.PodSpec{Tolerations: tol(ptr.To[int64](30))}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "n", Name: "agent", OwnerReferences: ds}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "n", Name: "static", Annotations: map[string]string{corev1.MirrorPodAnnotationKey: "x"}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "n", Name: "done"}, Status: corev1.PodStatus{Phase: corev1.PodSucceeded}},
	}
	v := NoExecuteVictims(pods, taints)
	got := strings.Join(v.Blocking, ";") + " | " + strings.Join(v.Named, ";")
	want := "n/for-a-while (tolerates iso=yes:NoExecute for 30s only);n/plain (does not tolerate iso=yes:NoExecute) | n/agent (does not tolerate iso=yes:NoExecute);n/static (does not tolerate iso=yes:NoExecute)"
	if got != want {
		t.Errorf("victims:\n got %s\nwant %s", got, want)
	}
	if v := NoExecuteVictims(pods, taints[1:]); !v.Empty() {
		t.Errorf("a NoSchedule taint removes nothing, got %+v", v)
	}
}

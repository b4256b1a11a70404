package ownership

import (
	"errors"
	"fmt"
	"sort"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
)

func pool(name string, labels map[string]string, taints ...v1alpha1.Taint) *v1alpha1.NodePool {
	ls := map[string]v1alpha1.LabelValue{}
	for k, v := range labels {
		ls[k] = v1alpha1.LabelValue(v)
	}
	return &v1alpha1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.NodePoolSpec{Labels: ls, Taints: taints}}
}

func taint(key, value string, effect corev1.TaintEffect) v1alpha1.Taint {
	return v1alpha1.Taint{Key: key, Value: value, Effect: effect}
}

// apply runs Compute and returns the node as it would be written.
func apply(t *testing.T, n *corev1.Node, add []*v1alpha1.NodePool, remove ...string) (*corev1.Node, error) {
	t.Helper()
	d, err := Compute(n, add, remove)
	if err != nil {
		return nil, err
	}
	out := n.DeepCopy()
	out.Labels, out.Spec.Taints = d.Labels, d.Taints
	if out.Annotations == nil {
		out.Annotations = map[string]string{}
	}
	for k, v := range d.Annotations {
		if v == nil {
			delete(out.Annotations, k)
		} else {
			out.Annotations[k] = *v
		}
	}
	return out, nil
}

func describe(n *corev1.Node) string {
	var ts []string
	for _, t := range n.Spec.Taints {
		ts = append(ts, fmt.Sprintf("%s=%s:%s", t.Key, t.Value, t.Effect))
	}
	sort.Strings(ts)
	keys := sortedKeys(n.Labels)
	var ls []string
	for _, k := range keys {
		ls = append(ls, k+"="+n.Labels[k])
	}
	return fmt.Sprintf("labels %v taints %v", ls, ts)
}

func TestComputeMoveKeepsWhatOthersOwn(t *testing.T) {
	blue := pool("blue", map[string]string{"tier": "blue", "example.com/disk": "ssd"}, taint("dedicated", "blue", corev1.TaintEffectNoSchedule))
	green := pool("green", map[string]string{"tier": "green"}, taint("dedicated", "green", corev1.TaintEffectNoSchedule))
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"example.com/owner": "team-a", "kubernetes.io/hostname": "n1"}},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "example.com/maint", Effect: corev1.TaintEffectPreferNoSchedule}}}}
	n, err := apply(t, n, []*v1alpha1.NodePool{blue})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := describe(n), "labels [example.com/disk=ssd example.com/owner=team-a kubernetes.io/hostname=n1 node-role.kubernetes.io/blue= tier=blue] taints [dedicated=blue:NoSchedule example.com/maint=:PreferNoSchedule]"; got != want {
		t.Fatalf("after joining blue:\n got %s\nwant %s", got, want)
	}
	// Move blue -> green: blue's labels and taints go, the hand-set ones stay.
	n, err = apply(t, n, []*v1alpha1.NodePool{green}, "blue")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := describe(n), "labels [example.com/owner=team-a kubernetes.io/hostname=n1 node-role.kubernetes.io/green= tier=green] taints [dedicated=green:NoSchedule example.com/maint=:PreferNoSchedule]"; got != want {
		t.Fatalf("after the move:\n got %s\nwant %s", got, want)
	}
	if _, ok := n.Annotations[RecordAnnotation("blue")]; ok {
		t.Error("blue's record survived the move")
	}
}

func TestComputeSpecChanges(t *testing.T) {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	p := pool("blue", map[string]string{"tier": "a", "gone": "x"}, taint("t", "1", corev1.TaintEffectNoSchedule), taint("old", "", corev1.TaintEffectNoSchedule))
	n, err := apply(t, n, []*v1alpha1.NodePool{p})
	if err != nil {
		t.Fatal(err)
	}
	p2 := pool("blue", map[string]string{"tier": "b"}, taint("t", "2", corev1.TaintEffectNoSchedule))
	n, err = apply(t, n, []*v1alpha1.NodePool{p2})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := describe(n), "labels [node-role.kubernetes.io/blue= tier=b] taints [t=2:NoSchedule]"; got != want {
		t.Fatalf("after a spec change:\n got %s\nwant %s", got, want)
	}
	d, err := Compute(n, []*v1alpha1.NodePool{p2}, nil)
	if err != nil || d.Changed {
		t.Errorf("applying the same spec again: changed=%v err=%v, want no change", d.Changed, err)
	}
}

func TestComputeConflicts(t *testing.T) {
	a := pool("a", map[string]string{"tier": "a"})
	b := pool("b", map[string]string{"tier": "b"})
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	n, err := apply(t, n, []*v1alpha1.NodePool{a})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Compute(n, []*v1alpha1.NodePool{b}, nil)
	var ce *ConflictError
	if !errors.As(err, &ce) || ce.Pool != "b" || ce.Other != "a" || ce.Key != "tier" {
		t.Fatalf("two pools wanting tier: got %v, want a conflict naming b, a and tier", err)
	}
	hand := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n2", Labels: map[string]string{"tier": "mine"}}}
	if _, err := Compute(hand, []*v1alpha1.NodePool{a}, nil); !errors.As(err, &ce) || ce.Other != "" {
		t.Fatalf("a hand-set label with another value: got %v, want a conflict", err)
	}
	// Two pools that agree share the key; removing one keeps it for the other.
	a2 := pool("a2", map[string]string{"tier": "a"})
	n, err = apply(t, n, []*v1alpha1.NodePool{a2})
	if err != nil {
		t.Fatal(err)
	}
	n, err = apply(t, n, nil, "a")
	if err != nil {
		t.Fatal(err)
	}
	if n.Labels["tier"] != "a" {
		t.Errorf("removing pool a dropped tier=a that pool a2 also applied: %s", describe(n))
	}
}

func TestComputeLeavesSameValuedHandLabelsAlone(t *testing.T) {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"tier": "a"}}}
	n, err := apply(t, n, []*v1alpha1.NodePool{pool("a", map[string]string{"tier": "a"})})
	if err != nil {
		t.Fatal(err)
	}
	n, err = apply(t, n, nil, "a")
	if err != nil {
		t.Fatal(err)
	}
	if n.Labels["tier"] != "a" {
		t.Errorf("a label set by hand before the pool was removed with the pool: %s", describe(n))
	}
}

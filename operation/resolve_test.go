package operation

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/internal/kubefake"
)

// Named nodes are read once each: a GET for a few, one list of every node for many (the
// client's burst is kept for the cordons and the first evictions). Either way a name that
// is no node is named, duplicates go, and Karpenter's nodes are found.
func TestNamedNodesAreReadOnce(t *testing.T) {
	names := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("n%02d", i)
		}
		return out
	}
	tests := []struct {
		name       string
		exist      int
		given      []string
		gets, list int
		missing    string
		want       []string
	}{
		{"a few: a GET each", 20, names(3), 3, 0, "", names(3)},
		{"duplicates read once", 20, []string{"n01", "n00", "n01"}, 2, 0, "", []string{"n01", "n00"}},
		{"up to getsUpTo: GETs", 20, names(getsUpTo), getsUpTo, 0, "", names(getsUpTo)},
		{"more: one list", 20, names(getsUpTo + 1), 0, 1, "", names(getsUpTo + 1)},
		{"a missing name among few", 5, []string{"n01", "gone", "n02"}, 2, 0, "gone", nil},
		{"a missing name among many", 5, names(getsUpTo + 1), 0, 1, "n05", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var objs []runtime.Object
			for i, n := range names(tc.exist) {
				node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}}
				if i == 1 {
					node.Spec.Taints = []corev1.Taint{{Key: drain.KarpenterDisruptedTaint, Effect: corev1.TaintEffectNoSchedule}}
				}
				objs = append(objs, node)
			}
			cs := kubefake.New(objs...)
			op := &Operator{Kube: cs}
			rz := &Resolved{disrupting: map[string]bool{}, objects: map[string]*corev1.Node{}}
			err := op.namedNodes(context.Background(), tc.given, rz)
			got, disrupting := rz.Nodes, rz.disrupting
			var nf *drain.NodeNotFoundError
			switch {
			case tc.missing != "" && (!errors.As(err, &nf) || nf.Name != tc.missing):
				t.Fatalf("err %v, want node %s not found", err, tc.missing)
			case tc.missing == "" && err != nil:
				t.Fatal(err)
			case tc.missing == "" && !slices.Equal(got, tc.want):
				t.Errorf("nodes %v, want %v", got, tc.want)
			case tc.missing == "" && !disrupting["n01"]:
				t.Errorf("n01 (tainted by Karpenter) not found disrupting: %v", disrupting)
			}
			gets, lists := 0, 0
			for _, a := range cs.Actions() {
				switch a.GetVerb() {
				case "get":
					gets++
				case "list":
					lists++
				}
			}
			if gets != tc.gets || lists != tc.list {
				t.Errorf("%d GETs and %d lists, want %d and %d", gets, lists, tc.gets, tc.list)
			}
		})
	}
}

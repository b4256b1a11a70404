package reconciler

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
)

// kstatus over a pool's states as its writers leave them: in sync is Current, a rollout
// under way InProgress, a pool that cannot be applied (Degraded) Failed.
func TestHealthReadByKstatus(t *testing.T) {
	cases := []struct {
		name     string
		degraded string // Degraded's reason when True
		rollout  bool
		want     status.Status
	}{
		{"in sync", "", false, status.CurrentStatus},
		{"a conflict with another pool", "Conflict", false, status.FailedStatus},
		{"a NoExecute taint held back for pool sync --rollout", "NoExecuteHeldBack", false, status.FailedStatus},
		{"a rollout under way", "", true, status.InProgressStatus},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			const gen = 2
			s := v1alpha1.NodePoolStatus{ObservedGeneration: gen}
			ready, degraded := metav1.ConditionTrue, metav1.ConditionFalse
			if tc.degraded != "" {
				ready, degraded = metav1.ConditionFalse, metav1.ConditionTrue
			}
			meta.SetStatusCondition(&s.Conditions, metav1.Condition{Type: ConditionReady, Status: ready, Reason: "R", Message: "m", ObservedGeneration: gen})
			meta.SetStatusCondition(&s.Conditions, metav1.Condition{Type: ConditionDegraded, Status: degraded, Reason: tc.degraded + "X", Message: "m", ObservedGeneration: gen})
			if tc.rollout {
				meta.SetStatusCondition(&s.Conditions, metav1.Condition{Type: ConditionRollout, Status: metav1.ConditionTrue, Reason: "Rolling", Message: "m", ObservedGeneration: gen})
			}
			if !SetHealth(&s, gen) {
				t.Error("SetHealth changed nothing on a status without its conditions")
			}
			if SetHealth(&s, gen) {
				t.Error("SetHealth changed a status it already set")
			}
			p := &v1alpha1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "p", Generation: gen}, Status: s}
			p.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind("NodePool"))
			u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(p)
			if err != nil {
				t.Fatal(err)
			}
			got, err := status.Compute(&unstructured.Unstructured{Object: u})
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != tc.want {
				t.Errorf("kstatus = %s (%s), want %s", got.Status, got.Message, tc.want)
			}
			for _, c := range s.Conditions {
				if c.ObservedGeneration != gen {
					t.Errorf("%s observedGeneration = %d, want %d", c.Type, c.ObservedGeneration, gen)
				}
			}
		})
	}
}

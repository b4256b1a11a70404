package reconciler

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
)

// kstatus condition types (sigs.k8s.io/cli-utils kstatus, what Flux and Argo CD read):
// with Ready (the pool in sync) they tell a GitOps tool how the pool is.
const (
	// ConditionReconciling: a NoExecute rollout (RolloutProgressing True) is under way.
	ConditionReconciling = "Reconciling"
	// ConditionStalled: the pool cannot be applied without a person (Degraded True: a
	// conflict, a NoExecute taint held back for `pool sync --rollout`, an error).
	ConditionStalled = "Stalled"
)

// SetHealth sets Reconciling and Stalled from the pool's own conditions (Degraded,
// RolloutProgressing), with their reasons and messages and gen; it reports whether it
// changed a condition. Every writer of a pool's status calls it after its own changes.
func SetHealth(s *v1alpha1.NodePoolStatus, gen int64) bool {
	rec := metav1.Condition{Type: ConditionReconciling, Status: metav1.ConditionFalse, Reason: "Idle", Message: "no rollout in progress", ObservedGeneration: gen}
	if c := meta.FindStatusCondition(s.Conditions, ConditionRollout); c != nil && c.Status == metav1.ConditionTrue {
		rec.Status, rec.Reason, rec.Message = metav1.ConditionTrue, c.Reason, c.Message
	}
	stalled := metav1.Condition{Type: ConditionStalled, Status: metav1.ConditionFalse, Reason: "AsExpected", Message: "the pool is applied", ObservedGeneration: gen}
	if c := meta.FindStatusCondition(s.Conditions, ConditionDegraded); c != nil && c.Status == metav1.ConditionTrue {
		stalled.Status, stalled.Reason, stalled.Message = metav1.ConditionTrue, c.Reason, c.Message
	}
	a := meta.SetStatusCondition(&s.Conditions, rec)
	b := meta.SetStatusCondition(&s.Conditions, stalled)
	return a || b
}

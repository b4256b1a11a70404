package nodepool

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

func TestCordonedByUsReadsManagedFields(t *testing.T) {
	mf := func(manager string) []metav1.ManagedFieldsEntry {
		return []metav1.ManagedFieldsEntry{{Manager: "kubelet", FieldsV1: metav1.NewFieldsV1(`{"f:status":{}}`)},
			{Manager: manager, FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:unschedulable":{}}}`)}}
	}
	ours := &corev1.Node{ObjectMeta: metav1.ObjectMeta{ManagedFields: mf(noderecord.FieldManager)}, Spec: corev1.NodeSpec{Unschedulable: true}}
	theirs := &corev1.Node{ObjectMeta: metav1.ObjectMeta{ManagedFields: mf("kubectl-cordon")}, Spec: corev1.NodeSpec{Unschedulable: true}}
	if !CordonedByUs(ours) || CordonedByUs(theirs) {
		t.Errorf("CordonedByUs: ours %v, theirs %v; want true, false", CordonedByUs(ours), CordonedByUs(theirs))
	}
}

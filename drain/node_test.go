package drain

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-maintenance/kubectl-maintenance/internal/kubefake"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

func owned(manager, fields string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate,
		FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)}
}

const (
	unschedulableFields = `{"f:spec":{"f:unschedulable":{}}}`
	labelFields         = `{"f:metadata":{"f:labels":{"f:a":{}}}}`
)

func TestDecideUncordonByCordonOwner(t *testing.T) {
	tests := map[string]struct {
		cordoned bool
		fields   []metav1.ManagedFieldsEntry
		force    bool
		want     UncordonResult
	}{
		"schedulable: nothing to do":                    {false, nil, false, AlreadySchedulable},
		"our cordon is undone":                          {true, []metav1.ManagedFieldsEntry{owned(noderecord.FieldManager, unschedulableFields), owned("kubectl", labelFields)}, false, Uncordoned},
		"someone else's cordon stays":                   {true, []metav1.ManagedFieldsEntry{owned("kubectl", unschedulableFields)}, false, LeftCordoned},
		"a cordon shared with someone else stays":       {true, []metav1.ManagedFieldsEntry{owned(noderecord.FieldManager, unschedulableFields), owned("kubectl", unschedulableFields)}, false, LeftCordoned},
		"a cordon nobody is recorded for stays":         {true, nil, false, LeftCordoned},
		"--force undoes someone else's":                 {true, []metav1.ManagedFieldsEntry{owned("kubectl", unschedulableFields)}, true, Uncordoned},
		"a status subresource entry does not count":     {true, []metav1.ManagedFieldsEntry{{Manager: noderecord.FieldManager, Subresource: "status", FieldsV1: metav1.NewFieldsV1(unschedulableFields)}}, false, LeftCordoned},
		"our label write does not make the cordon ours": {true, []metav1.ManagedFieldsEntry{owned(noderecord.FieldManager, labelFields), owned("kubectl", unschedulableFields)}, false, LeftCordoned},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			n := testNode("n1")
			n.Spec.Unschedulable = tc.cordoned
			n.ManagedFields = tc.fields
			if got := DecideUncordon(n, tc.force); got != tc.want {
				t.Errorf("DecideUncordon = %d, want %d", got, tc.want)
			}
		})
	}
}

// The resume record and the cordon are one patch, written as our field manager.
func TestCordonForDrainWritesTheRecordWithTheCordon(t *testing.T) {
	c := kubefake.New(testNode("n1"))
	var patches []string
	c.PrependReactor("patch", "nodes", func(a k8stesting.Action) (bool, runtime.Object, error) {
		patches = append(patches, string(a.(k8stesting.PatchAction).GetPatch()))
		return false, nil, nil
	})
	n, already, err := CordonForDrain(context.Background(), c, "n1", false)
	if err != nil || already {
		t.Fatalf("CordonForDrain = %v, already %v", err, already)
	}
	if len(patches) != 1 || !n.Spec.Unschedulable || n.Annotations[noderecord.AnnotationDrain] != noderecord.StateDraining || n.Annotations[noderecord.AnnotationCordoned] != "true" {
		t.Fatalf("patches %q; node unschedulable=%v annotations=%v", patches, n.Spec.Unschedulable, n.Annotations)
	}
	_, already, err = CordonForDrain(context.Background(), c, "n1", false)
	if err != nil || !already || len(patches) != 2 {
		t.Fatalf("second CordonForDrain = %v, already %v, %d patches", err, already, len(patches))
	}
}

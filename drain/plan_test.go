package drain

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A pod owned by its Node is a static pod's mirror, with or without the annotation.
func TestMirrorByOwner(t *testing.T) {
	owned := func(kind, name string) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: "v1", Kind: kind, Name: name}}
	}
	for name, tc := range map[string]struct {
		owners []metav1.OwnerReference
		evict  bool
	}{
		"owned by its node: kept":           {owners: owned("Node", "n1"), evict: false},
		"owned by another node: evicted":    {owners: owned("Node", "n2"), evict: true},
		"owned by a ReplicaSet: evicted":    {owners: owned("ReplicaSet", "n1"), evict: true},
		"owned by nothing: left to kubectl": {evict: true},
	} {
		t.Run(name, func(t *testing.T) {
			p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", OwnerReferences: tc.owners}, Spec: corev1.PodSpec{NodeName: "n1"}}
			if got := mirrorByOwner(p).Delete; got != tc.evict {
				t.Errorf("mirrorByOwner: delete %v, want %v", got, tc.evict)
			}
		})
	}
}

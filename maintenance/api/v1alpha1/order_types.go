package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DrainOrderRule is one drain rule: the pods both selectors match are evicted in group
// Order, or, with a Behavior of Skip or WaitCompleted, never evicted (WaitCompleted: the
// node counts as drained once they have completed).
// +kubebuilder:validation:XValidation:rule="!has(self.order) || !has(self.behavior) || self.behavior == 'Drain'",message="order applies to behavior Drain only"
type DrainOrderRule struct {
	// Name names the rule in plans and messages.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name,omitempty"`
	// Selector selects pods by their labels; unset selects every pod.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
	// NamespaceSelector selects pods by their namespace's labels; unset selects every
	// namespace.
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`
	// Order is the pods' order group (behavior Drain); lower groups go first. Default 0.
	// +optional
	Order *int32 `json:"order,omitempty"`
	// Behavior is Drain (the default), Skip or WaitCompleted.
	// +optional
	// +kubebuilder:validation:Enum=Drain;Skip;WaitCompleted
	Behavior string `json:"behavior,omitempty"`
}

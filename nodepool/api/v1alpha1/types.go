package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is the API group and version of NodePool.
var GroupVersion = schema.GroupVersion{Group: "maintenance.kubectl-maintenance.io", Version: "v1alpha1"}

// AddToScheme registers NodePool and NodePoolList.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &NodePool{}, &NodePoolList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

// Taint is a taint the pool puts on its nodes.
type Taint struct {
	// Key of the taint, a qualified name (prefix/name).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=316
	// +kubebuilder:validation:XValidation:rule="!format.qualifiedName().validate(self).hasValue()",message="taint key must be a qualified name (an optional DNS prefix and a name of at most 63 characters)"
	Key string `json:"key"`
	// Value of the taint, a label value.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="!format.labelValue().validate(self).hasValue()",message="taint value must be a valid label value"
	Value string `json:"value,omitempty"`
	// Effect of the taint.
	// +kubebuilder:validation:Enum=NoSchedule;PreferNoSchedule;NoExecute
	Effect corev1.TaintEffect `json:"effect"`
}

// LabelValue is a label value: at most 63 characters of [A-Za-z0-9._-], starting and
// ending alphanumeric.
// +kubebuilder:validation:MaxLength=63
// +kubebuilder:validation:Pattern=`^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`
type LabelValue string

// RuntimeClassSpec is the RuntimeClass made for the pool (named after it), so that a pod
// picks the pool with runtimeClassName alone.
type RuntimeClassSpec struct {
	// Handler is the CRI handler the pool's nodes run (e.g. runc, kata, gvisor).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Handler string `json:"handler"`
	// Overhead is the pod overhead of the handler.
	// +optional
	Overhead *nodev1.Overhead `json:"overhead,omitempty"`
}

// NodePoolSpec is what the pool applies to its member nodes.
// +kubebuilder:validation:XValidation:rule="!has(self.taints) || self.taints.all(t, self.taints.exists_one(u, u.key == t.key && u.effect == t.effect))",message="two taints have the same key and effect"
type NodePoolSpec struct {
	// Labels put on every member node (besides node-role.kubernetes.io/<pool>).
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.startsWith('node-role.kubernetes.io/'))",message="node-role.kubernetes.io/ labels are the pool membership labels and can't be pool labels"
	// +kubebuilder:validation:XValidation:rule="self.all(k, !format.qualifiedName().validate(k).hasValue())",message="label keys must be qualified names (an optional DNS prefix and a name of at most 63 characters)"
	Labels map[string]LabelValue `json:"labels,omitempty"`
	// Taints put on every member node.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	Taints []Taint `json:"taints,omitempty"`
	// RuntimeClass, when set, makes a RuntimeClass named after the pool.
	// +optional
	RuntimeClass *RuntimeClassSpec `json:"runtimeClass,omitempty"`
	// MaxUnavailable is how many of the pool's nodes may be in maintenance at once
	// (drain --pool, pool move).
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	MaxUnavailable *int32 `json:"maxUnavailable,omitempty"`
}

// NodePoolStatus is what the reconciler last saw.
type NodePoolStatus struct {
	// ObservedGeneration is the spec generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Nodes counts the member nodes.
	// +optional
	Nodes int32 `json:"nodes"`
	// InMaintenance counts member nodes that are cordoned or being drained.
	// +optional
	InMaintenance int32 `json:"inMaintenance"`
	// Conditions: Ready (every member carries the pool's labels and taints), Degraded
	// (with a reason, e.g. a conflict with another pool or a NoExecute taint held back).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// NodePool is a pool of nodes: the nodes labelled node-role.kubernetes.io/<name>="".
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=mntpool,categories=maintenance
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Nodes",type=integer,JSONPath=`.status.nodes`
// +kubebuilder:printcolumn:name="Labels",type=string,JSONPath=`.spec.labels`
// +kubebuilder:printcolumn:name="Taints",type=string,JSONPath=`.spec.taints[*].key`
// +kubebuilder:printcolumn:name="Handler",type=string,JSONPath=`.spec.runtimeClass.handler`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 63 && self.metadata.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="a pool name must be a DNS label (at most 63 characters): it becomes the label node-role.kubernetes.io/<name> and the RuntimeClass name"
type NodePool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   NodePoolSpec   `json:"spec,omitempty"`
	Status NodePoolStatus `json:"status,omitempty"`
}

// NodePoolList is a list of NodePools.
//
// +kubebuilder:object:root=true
type NodePoolList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NodePool `json:"items"`
}

// MaxUnavailableOrDefault is spec.maxUnavailable, 1 when unset.
func (p *NodePool) MaxUnavailableOrDefault() int {
	if p.Spec.MaxUnavailable == nil || *p.Spec.MaxUnavailable < 1 {
		return 1
	}
	return int(*p.Spec.MaxUnavailable)
}

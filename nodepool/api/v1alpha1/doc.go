// Package v1alpha1 is the NodePool API (group maintenance.kubectl-maintenance.io): a
// cluster-scoped pool of nodes sharing labels, taints and a RuntimeClass. A node is in
// pool X when it carries the label node-role.kubernetes.io/X="".
//
// +kubebuilder:object:generate=true
// +groupName=maintenance.kubectl-maintenance.io
package v1alpha1

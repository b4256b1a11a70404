// Package v1alpha1 is the Maintenance API (group maintenance.kubectl-maintenance.io,
// beside NodePool): a cluster-scoped, declarative maintenance action on nodes — a drain,
// a cordon, an uncordon or a move to another pool — that "kubectl maintenance controller"
// runs in the cluster and anyone can follow through its status.
//
// +kubebuilder:object:generate=true
// +groupName=maintenance.kubectl-maintenance.io
package v1alpha1

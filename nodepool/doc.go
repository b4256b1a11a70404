// Package nodepool is the NodePool API seen from a client: reading pools (GetPool,
// ListPools) and applying them from manifests (ReadPools, Apply), pool membership (a node
// is in pool X when it carries the label node-role.kubernetes.io/X="", so "kubectl get
// nodes" shows the pool under ROLES), and the record a move leaves on a node
// (MoveAnnotation). What a pool owns on a node is in nodepool/ownership, the controller
// that keeps members in line in nodepool/reconciler, and the rolling moves in
// nodepool/roll.
package nodepool

package access

import (
	"slices"
	"sort"
)

// API groups and resources the commands call.
const (
	coreGroup      = ""
	policyGroup    = "policy"
	nodePoolGroup  = "maintenance.kubectl-maintenance.io"
	nodesResource  = "nodes"
	podsResource   = "pods"
	pdbsResource   = "poddisruptionbudgets"
	poolsResource  = "nodepools"
	appsGroup      = "apps"
	autoscaling    = "autoscaling"
	evictionSubres = "eviction"
	storageGroup   = "storage.k8s.io"
	vaResource     = "volumeattachments"
	pvcResource    = "persistentvolumeclaims"
)

// Cordon is what cordon and uncordon do: read each node and patch it.
func Cordon() []Check {
	return []Check{
		{Verb: "get", Group: coreGroup, Resource: nodesResource},
		{Verb: "patch", Group: coreGroup, Resource: nodesResource},
	}
}

// DrainReads is what a drain reads: nodes (get, list, watch), the pods on them and every
// PodDisruptionBudget (list and watch, across namespaces: the pods of a node live in many).
func DrainReads() []Check {
	var cs []Check
	for _, v := range []string{"get", "list", "watch"} {
		cs = append(cs, Check{Verb: v, Group: coreGroup, Resource: nodesResource})
	}
	for _, v := range []string{"list", "watch"} {
		cs = append(cs,
			Check{Verb: v, Group: coreGroup, Resource: podsResource, AllNamespaces: true},
			Check{Verb: v, Group: policyGroup, Resource: pdbsResource, AllNamespaces: true})
	}
	return cs
}

// VolumeDetach is what the volume wait reads (drain --wait-for-volume-detach, on by
// default): VolumeAttachments (list and watch) and the claims of the pods removed (get,
// in every namespace).
func VolumeDetach() []Check {
	return []Check{
		{Verb: "list", Group: storageGroup, Resource: vaResource},
		{Verb: "watch", Group: storageGroup, Resource: vaResource},
		{Verb: "get", Group: coreGroup, Resource: pvcResource, AllNamespaces: true},
	}
}

// Drain is everything a drain does: DrainReads, patch nodes (cordon and the resume
// record), and create pods/eviction in every namespace given (those of the pods it will
// evict, in sorted order). Creating Events is not required (best effort).
func Drain(namespaces []string) []Check {
	cs := append(DrainReads(), Check{Verb: "patch", Group: coreGroup, Resource: nodesResource})
	return append(cs, Evictions(namespaces)...)
}

// Evictions is create pods/eviction in each namespace, sorted.
func Evictions(namespaces []string) []Check {
	ns := append([]string(nil), namespaces...)
	sort.Strings(ns)
	cs := make([]Check, 0, len(ns))
	for _, n := range ns {
		cs = append(cs, Check{Verb: "create", Group: coreGroup, Resource: podsResource, Subresource: evictionSubres, Namespace: n})
	}
	return cs
}

// EvictionsEverywhere is create pods/eviction in every namespace: one question that,
// when allowed (a ClusterRole binding), spares listing the pods to find their namespaces.
func EvictionsEverywhere() []Check {
	return []Check{{Verb: "create", Group: coreGroup, Resource: podsResource, Subresource: evictionSubres, AllNamespaces: true}}
}

// PoolMove is a drain's checks plus reading NodePools (the node's patch to its new pool's
// labels and taints is a nodes patch, already in Drain).
func PoolMove(namespaces []string) []Check {
	return append([]Check{{Verb: "get", Group: nodePoolGroup, Resource: poolsResource}}, Drain(namespaces)...)
}

// Rollout is a pool move's checks plus listing the pools (a node's NoExecute taints are
// computed from every pool it is in) and updating the pool's status (its
// RolloutProgressing condition).
func Rollout(namespaces []string) []Check {
	return append([]Check{{Verb: "list", Group: nodePoolGroup, Resource: poolsResource},
		{Verb: "update", Group: nodePoolGroup, Resource: poolsResource, Subresource: "status"}}, PoolMove(namespaces)...)
}

// ReadOnly keeps the checks of calls that change nothing (get, list, watch): what a
// client-side dry run needs. A server-side dry run sends every write (with dryRun=All),
// which the API server authorizes like the real one.
func ReadOnly(checks []Check) []Check {
	var out []Check
	for _, c := range checks {
		switch c.Verb {
		case "get", "list", "watch":
			out = append(out, c)
		}
	}
	return out
}

// Surge is what --surge does in each namespace given (those of the Deployments it will
// scale), sorted: read the pod's ReplicaSet and Deployment, list the autoscalers (one
// would undo the surge), and patch the Deployment's replicas up and back.
func Surge(namespaces []string) []Check {
	ns := append([]string(nil), namespaces...)
	sort.Strings(ns)
	var cs []Check
	for _, n := range ns {
		cs = append(cs,
			Check{Verb: "get", Group: appsGroup, Resource: "replicasets", Namespace: n},
			Check{Verb: "get", Group: appsGroup, Resource: "deployments", Namespace: n},
			Check{Verb: "list", Group: autoscaling, Resource: "horizontalpodautoscalers", Namespace: n},
			Check{Verb: "patch", Group: appsGroup, Resource: "deployments", Namespace: n})
	}
	return cs
}

// Controller is every call "kubectl maintenance controller" makes with its own identity:
// config/rbac/rbac.yaml grants exactly these (a test holds the two together), and the
// controller asks for them at start, naming each one it lacks.
func Controller() []Check {
	var cs []Check
	add := func(group, resource, sub string, verbs ...string) {
		for _, v := range verbs {
			cs = append(cs, Check{Verb: v, Group: group, Resource: resource, Subresource: sub})
		}
	}
	add(nodePoolGroup, poolsResource, "", "get", "list", "watch", "update", "patch")
	add(nodePoolGroup, poolsResource, "status", "get", "update", "patch")
	add(nodePoolGroup, poolsResource, "finalizers", "get", "update", "patch")
	add(nodePoolGroup, "maintenances", "", "get", "list", "watch", "patch") // patch: the finalizer (metadata only)
	add(nodePoolGroup, "maintenances", "status", "get", "update", "patch")
	add(nodePoolGroup, "maintenances", "finalizers", "get", "update", "patch")
	add(appsGroup, "daemonsets", "", "get", "list")
	add(appsGroup, "replicasets", "", "get", "list")
	add(appsGroup, "deployments", "", "get", "list", "update", "patch")
	add(autoscaling, "horizontalpodautoscalers", "", "list")
	add(coreGroup, nodesResource, "", "get", "list", "watch", "patch", "update")
	add(coreGroup, nodesResource, "status", "patch")
	add(coreGroup, podsResource, "", "get", "list", "watch", "delete") // delete: policy.onBlocked force only
	add(coreGroup, podsResource, evictionSubres, "create")
	add(policyGroup, pdbsResource, "", "get", "list", "watch")
	add(policyGroup, pdbsResource, "status", "update") // update: drain.clearDisruptionHolds only
	// When is a node drained: the volume wait.
	add(storageGroup, vaResource, "", "list", "watch")
	add(coreGroup, pvcResource, "", "get")
	// Drain order (planned maintenance): MachineDrainRules and namespaces' labels.
	add("cluster.x-k8s.io", "machinedrainrules", "", "list")
	add(coreGroup, "namespaces", "", "list")
	add("node.k8s.io", "runtimeclasses", "", "get", "list", "watch", "create", "update", "delete")
	add("coordination.k8s.io", "leases", "", "get", "create", "update")
	add(coreGroup, "events", "", "create", "patch")
	add("events.k8s.io", "events", "", "create", "patch")
	return cs
}

// ClearHolds is what --clear-disruption-holds needs besides a drain's own calls: updating
// budgets' status (removing a hold's stale status.disruptedPods entry) in each namespace
// given, or in every namespace when none is.
func ClearHolds(namespaces []string) []Check {
	return inEach(Check{Verb: "update", Group: policyGroup, Resource: pdbsResource, Subresource: "status"}, namespaces)
}

// ForceDeletes is what --on-blocked=force needs besides a drain's own calls: deleting
// pods (its one DELETE) in each namespace given, or in every namespace when none is.
func ForceDeletes(namespaces []string) []Check {
	return inEach(Check{Verb: "delete", Group: coreGroup, Resource: podsResource}, namespaces)
}

// inEach is c asked in each namespace given, sorted, or across every namespace when none
// is: the checks of an opt-in right (force, clearing holds).
func inEach(c Check, namespaces []string) []Check {
	if len(namespaces) == 0 {
		c.AllNamespaces = true
		return []Check{c}
	}
	ns := slices.Sorted(slices.Values(namespaces))
	cs := make([]Check, 0, len(ns))
	for _, n := range ns {
		c.Namespace = n
		cs = append(cs, c)
	}
	return cs
}

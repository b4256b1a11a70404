// Package data is the dashboard's read-only model: plain rows for nodes, pools and PDBs,
// and the state of the connection that feeds them. It imports nothing of Kubernetes; the
// dashboard/source package builds it from informer caches.
package data

import "time"

// NodeRow is one node as the dashboard shows it.
type NodeRow struct {
	Name          string
	Status        string // Ready, NotReady, Unknown, plus ",SchedulingDisabled"
	Unschedulable bool
	Pools         []string
	Pods          int // pods running on the node (not finished), as the nodes command counts them
	Evictable     int // pods a drain would evict whose eviction would be accepted now
	Blocked       int // pods that can never go as things stand
	Blocker       string
	Version       string
	Age           string
	// Maintenance is the unfinished Maintenance that holds the node (it is in its run) or
	// plans it (Scheduled, Pending), with MaintenancePhase its phase; empty when none.
	Maintenance, MaintenancePhase string
	// Held is true when Maintenance holds the node (false: it only plans it).
	Held bool
}

// PoolRow is one NodePool.
type PoolRow struct {
	Name           string
	Nodes          int
	InMaintenance  int
	MaxUnavailable int
	Taints         string
	Handler        string
}

// PDBRow is one PodDisruptionBudget.
type PDBRow struct {
	Key            string
	MinAvailable   string
	MaxUnavailable string
	Allowed        int32
	Current        int32
	Desired        int32
	Expected       int32
	Stale          bool
	Never          bool
	// NeverWhy says why it never allows a disruption (empty unless Never).
	NeverWhy string
	// Pods are the running pods it covers ("ns/name on node"), sorted.
	Pods []string
}

// MaintenanceRow is one Maintenance object: work the controller runs in the cluster.
type MaintenanceRow struct {
	Name   string
	Action string // Drain, Cordon, Uncordon, Move
	Phase  string // Pending, Running, Paused, Succeeded, ...
	// Nodes says how far it is, e.g. "2/3 drained".
	Nodes string
	// Paused is spec.paused; Done is a phase that ends the run; Deleting is set once the
	// object is being deleted (cancelled).
	Paused, Done, Deleting bool
	// Message is the status message (why it waits, how it ended).
	Message string
	// Window is spec.window as written ("Sat 02:00-06:00 UTC", "from ... to ..."); empty
	// when the object has none. WindowEnd is when the current or next opening closes,
	// NextStart when the window opens next (both RFC 3339 UTC, empty when unknown).
	Window, WindowEnd, NextStart string
	// Selects says how the object picks its nodes ("nodes a, b", "pool gpu", "selector x=y").
	Selects string
	// Reason is spec.reason (free text: a ticket, a change request).
	Reason string
	// Counts sums up status.counts ("0 drained, 2 pending, 0 evicted, 3 refusals").
	Counts string
	// NodeList is each node of its run with its state and what its pods wait on.
	NodeList []MaintenanceNode
	// Cordoned names the nodes its run has cordoned (reached Cordoned or later): what a
	// cancel leaves cordoned.
	Cordoned []string
}

// MaintenanceNode is one node of a Maintenance's run.
type MaintenanceNode struct {
	Name, State string
	PodsLeft    int32
	Message     string
	Blockers    []Blocker
}

// Blocker is a pod left on a node and what holds it, in the drain's words.
type Blocker struct {
	Pod, PDB, Message, Cause, Remedy string
}

// PodRow is a pod on a node that a drain would not evict now: it waits on a budget (or
// a rule), or can never go as things stand.
type PodRow struct {
	Key, Node string
	// Budgets are the keys of the budgets that cover it.
	Budgets []string
	// Never is true when it can never go as things stand (Blocked); false: it waits.
	Never bool
	// Reason is why it does not go now, whole (the drain's words).
	Reason string
}

// EventRow is one Kubernetes Event of an object (events.k8s.io or core, alike).
type EventRow struct {
	Time                  time.Time
	Type, Reason, Message string
	// From is the component (reporting controller or source) that recorded it.
	From  string
	Count int32
}

// Ref names an object the dashboard shows in detail: Kind is Node, Pod,
// PodDisruptionBudget or Maintenance; Namespace is empty for cluster-scoped ones.
type Ref struct {
	Kind, Namespace, Name string
}

// Snapshot is everything the dashboard shows at one moment.
type Snapshot struct {
	Nodes []NodeRow
	Pools []PoolRow
	PDBs  []PDBRow
	// Maintenances are the Maintenance objects (none when their CRD is not installed).
	Maintenances []MaintenanceRow
	// Pods are the pods that do not go now (waiting or blocked), by node then name.
	Pods []PodRow
	// PoolNames lists the pools, for the move picker.
	PoolNames []string
	// Synced is false until every watch has listed once.
	Synced bool
	// Problem is a one-line description of why the data may be stale or missing (an
	// unreachable API server, a permission the user lacks); empty when all is well.
	Problem string
}

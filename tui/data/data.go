// Package data is the dashboard's read-only model: plain rows for nodes, pools and PDBs,
// and the state of the connection that feeds them. It imports nothing of Kubernetes; the
// dashsource package builds it from informer caches.
package data

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
}

// Snapshot is everything the dashboard shows at one moment.
type Snapshot struct {
	Nodes []NodeRow
	Pools []PoolRow
	PDBs  []PDBRow
	// Maintenances are the Maintenance objects (none when their CRD is not installed).
	Maintenances []MaintenanceRow
	// PoolNames lists the pools, for the move picker.
	PoolNames []string
	// Synced is false until every watch has listed once.
	Synced bool
	// Problem is a one-line description of why the data may be stale or missing (an
	// unreachable API server, a permission the user lacks); empty when all is well.
	Problem string
}

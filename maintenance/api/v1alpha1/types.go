package v1alpha1

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is the API group and version of Maintenance (NodePool's).
var GroupVersion = schema.GroupVersion{Group: "maintenance.kubectl-maintenance.io", Version: "v1alpha1"}

// AddToScheme registers Maintenance and MaintenanceList.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Maintenance{}, &MaintenanceList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

// Action is what a Maintenance does to its nodes.
type Action string

// Actions.
const (
	// ActionDrain cordons the nodes and evicts their pods as far as the budgets allow.
	ActionDrain Action = "Drain"
	// ActionCordon marks the nodes unschedulable.
	ActionCordon Action = "Cordon"
	// ActionUncordon makes the nodes schedulable again (when the cordon is this tool's).
	ActionUncordon Action = "Uncordon"
	// ActionMove moves the nodes to pool spec.to: cordon, drain, relabel, uncordon.
	ActionMove Action = "Move"
)

// MaintenanceSpec is the action, its nodes and its settings. Only paused and reason may
// change once created (the API server refuses any other change).
// +kubebuilder:validation:XValidation:rule="has(self.to) == has(oldSelf.to) && (!has(self.to) || self.to == oldSelf.to) && has(self.nodes) == has(oldSelf.nodes) && (!has(self.nodes) || self.nodes == oldSelf.nodes) && has(self.selector) == has(oldSelf.selector) && (!has(self.selector) || self.selector == oldSelf.selector) && has(self.pool) == has(oldSelf.pool) && (!has(self.pool) || self.pool == oldSelf.pool) && has(self.drain) == has(oldSelf.drain) && (!has(self.drain) || self.drain == oldSelf.drain) && has(self.policy) == has(oldSelf.policy) && (!has(self.policy) || self.policy == oldSelf.policy)",message="only spec.paused and spec.reason may change once a Maintenance exists: cancel it (kubectl maintenance cancel NAME) and create another"
// +kubebuilder:validation:XValidation:rule="has(self.window) == has(oldSelf.window) && (!has(self.window) || self.window == oldSelf.window)",message="only spec.paused and spec.reason may change once a Maintenance exists: cancel it (kubectl maintenance cancel NAME) and create another"
// +kubebuilder:validation:XValidation:rule="self.action != 'Move' || has(self.to)",message="a Move needs its target pool: set spec.to"
// +kubebuilder:validation:XValidation:rule="self.action == 'Move' || !has(self.to)",message="spec.to (the target pool) is only for action Move"
// +kubebuilder:validation:XValidation:rule="!(has(self.nodes) && has(self.selector))",message="give the nodes by name (spec.nodes) or by label (spec.selector), not both"
// +kubebuilder:validation:XValidation:rule="!(has(self.pool) && (has(self.nodes) || has(self.selector)))",message="spec.pool selects the pool's members: don't also give spec.nodes or spec.selector"
// +kubebuilder:validation:XValidation:rule="has(self.nodes) || has(self.selector) || has(self.pool)",message="no nodes: set spec.nodes, spec.selector or spec.pool"
// +kubebuilder:validation:XValidation:rule="!has(self.policy) || !has(self.policy.surge) || !self.policy.surge || self.action in ['Drain', 'Move']",message="policy.surge is only for a Drain or a Move"
// +kubebuilder:validation:XValidation:rule="!has(self.policy) || !has(self.policy.soak) || has(self.pool) || self.action == 'Move'",message="policy.soak is for a rolling pool operation: set spec.pool, or use action Move"
type MaintenanceSpec struct {
	// Action is Drain, Cordon, Uncordon or Move.
	// +kubebuilder:validation:XValidation:rule="self in ['Drain', 'Cordon', 'Uncordon', 'Move']",message="action must be Drain, Cordon, Uncordon or Move"
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="action cannot change: create another Maintenance"
	Action Action `json:"action"`
	// To is the target pool of a Move.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	To string `json:"to,omitempty"`
	// Nodes names the nodes.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=5000
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Nodes []string `json:"nodes,omitempty"`
	// Selector is a label selector of the nodes, as kubectl's -l takes it.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Selector string `json:"selector,omitempty"`
	// Pool selects a NodePool's members; a drain of them rolls at the pool's
	// maxUnavailable unless policy.maxParallelNodes is set.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Pool string `json:"pool,omitempty"`
	// Drain holds kubectl drain's settings, with its defaults. Optional, but it decides
	// whether a Drain or a Move runs: unset, a node with DaemonSet pods (most nodes run
	// some), pods with emptyDir data or pods without a controller is refused as kubectl
	// drain refuses it, and the Maintenance ends Blocked before anything changes. Set
	// ignoreDaemonSets, deleteEmptyDirData and force as you would pass their flags.
	// +optional
	Drain DrainSettings `json:"drain,omitempty"`
	// Policy says what to do with blocked nodes, deadlines and parallelism. Optional, but
	// it decides whether the run ends: unset, onBlocked is wait, so a node whose pods a
	// budget never lets go keeps the Maintenance Running for ever. Set onBlocked (skip,
	// fail, force), blockedAfter or notAfter to bound it.
	// +optional
	Policy Policy `json:"policy,omitempty"`
	// Paused, when true, stops new evictions and new nodes until set back to false; the
	// run then continues from the nodes' records.
	// +optional
	Paused bool `json:"paused,omitempty"`
	// Reason is free text for people (a ticket, a change request).
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Reason string `json:"reason,omitempty"`

	// Windows (planned maintenance).

	// Window is when the run may start nodes: before it opens the object is Scheduled
	// and its nodes carry MaintenancePlanned=True; when it closes no new node starts.
	// Unset: at once.
	// +optional
	Window *Window `json:"window,omitempty"`
}

// DrainSettings are kubectl drain's flags, with the same meanings and defaults.
type DrainSettings struct {
	// Force allows pods without a controller (--force); for an Uncordon, it uncordons a
	// node whose cordon someone else made (uncordon --force).
	// +optional
	Force bool `json:"force,omitempty"`
	// IgnoreDaemonSets goes on when DaemonSet pods are present (--ignore-daemonsets).
	// +optional
	IgnoreDaemonSets bool `json:"ignoreDaemonSets,omitempty"`
	// DeleteEmptyDirData allows pods with emptyDir volumes (--delete-emptydir-data).
	// +optional
	DeleteEmptyDirData bool `json:"deleteEmptyDirData,omitempty"`
	// GracePeriodSeconds overrides the pods' grace period; -1 keeps each pod's own.
	// +optional
	// +kubebuilder:default=-1
	// +kubebuilder:validation:XValidation:rule="self >= -1",message="gracePeriodSeconds must be -1 (each pod's own) or more"
	GracePeriodSeconds *int32 `json:"gracePeriodSeconds,omitempty"`
	// Timeout bounds the whole drain (a duration such as 30m); 0 or unset means no limit.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('-')",message="timeout must not be negative (0 means no limit)"
	// +kubebuilder:validation:XValidation:rule="self.startsWith('-') || self.matches('^(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$')",message="timeout must be a duration such as 90s, 30m or 1h30m (units ns, us, ms, s, m, h; 1d is not one: write 24h)"
	Timeout *Duration `json:"timeout,omitempty"`
	// PodSelector restricts the pods evicted (a label selector).
	// +optional
	PodSelector string `json:"podSelector,omitempty"`
	// SkipWaitForDeleteTimeoutSeconds: pods deleted longer ago than this are not waited for.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self >= 0",message="skipWaitForDeleteTimeoutSeconds must not be negative"
	SkipWaitForDeleteTimeoutSeconds int32 `json:"skipWaitForDeleteTimeoutSeconds,omitempty"`
	// ChunkSize pages pod lists.
	// +optional
	// +kubebuilder:default=500
	// +kubebuilder:validation:XValidation:rule="self >= 0",message="chunkSize must not be negative"
	ChunkSize *int64 `json:"chunkSize,omitempty"`
	// IgnoreDoNotDisrupt evicts pods annotated karpenter.sh/do-not-disrupt like any other.
	// +optional
	IgnoreDoNotDisrupt bool `json:"ignoreDoNotDisrupt,omitempty"`
	// ClearDisruptionHolds removes, from a budget the drain waits on, the
	// status.disruptedPods entry the disruption controller keeps for two minutes against a
	// replacement with the same name (a StatefulSet's pod), with a resourceVersion-guarded
	// status update (--clear-disruption-holds). The controller then needs update on
	// poddisruptionbudgets/status; without it the drain waits the holds out.
	// +optional
	ClearDisruptionHolds bool `json:"clearDisruptionHolds,omitempty"`
	// IncludeDisrupting drains nodes Karpenter is already disrupting (taint
	// karpenter.sh/disrupted) too; by default they are left to Karpenter (phase Blocked).
	// +optional
	IncludeDisrupting bool `json:"includeDisrupting,omitempty"`
	// Drain order (planned maintenance).

	// Order are drain rules in the shape of Cluster API's MachineDrainRules, tried in
	// this order before the cluster's MachineDrainRules (the first match wins; a pod's
	// cluster.x-k8s.io/drain label wins over both): a node's pods go by ascending order
	// group (default 0), each group once every pod of the groups before it is gone.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	Order []DrainOrderRule `json:"order,omitempty"`

	// Dead nodes and force (planned maintenance).

	// DeadNodeDeleteWait is how long a pod whose deletion started on a dead node (Ready
	// Unknown or False) still blocks it (--dead-node-delete-wait). Unset: 10s; 0: wait
	// for ever.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('-')",message="deadNodeDeleteWait must not be negative"
	// +kubebuilder:validation:XValidation:rule="self.startsWith('-') || self.matches('^(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$')",message="deadNodeDeleteWait must be a duration such as 90s, 30m or 1h30m (units ns, us, ms, s, m, h; 1d is not one: write 24h)"
	DeadNodeDeleteWait *Duration `json:"deadNodeDeleteWait,omitempty"`

	// WaitForVolumeDetach waits, once a node's pods are gone, until no VolumeAttachment
	// of the node refers to a volume of a pod the drain removed, before the node is
	// drained (--wait-for-volume-detach). Unset: true.
	// +optional
	WaitForVolumeDetach *bool `json:"waitForVolumeDetach,omitempty"`
	// Settle is how long after its cordon a node is at the earliest drained, after a
	// last look at its pods (--settle). Unset: 5s; 0: no settle.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('-')",message="settle must not be negative"
	// +kubebuilder:validation:XValidation:rule="self.startsWith('-') || self.matches('^(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$')",message="settle must be a duration such as 90s, 30m or 1h30m (units ns, us, ms, s, m, h; 1d is not one: write 24h)"
	Settle *Duration `json:"settle,omitempty"`
}

// Policy is what a run does about blocked nodes, deadlines and parallelism.
// +kubebuilder:validation:XValidation:rule="!has(self.onBlocked) || self.onBlocked != 'force' || has(self.forceAfter)",message="onBlocked force needs an explicit forceAfter (how long a pod stays blocked before it is deleted)"
// +kubebuilder:validation:XValidation:rule="!has(self.forceAfter) || (has(self.onBlocked) && self.onBlocked == 'force')",message="forceAfter needs onBlocked force"
// +kubebuilder:validation:XValidation:rule="!has(self.neverForce) || (has(self.onBlocked) && self.onBlocked == 'force')",message="neverForce needs onBlocked force"
type Policy struct {
	// OnBlocked is wait (the default), skip, fail or force, as drain --on-blocked.
	// +optional
	// +kubebuilder:default=wait
	// +kubebuilder:validation:XValidation:rule="self in ['wait', 'skip', 'fail', 'force']",message="onBlocked must be wait, skip, fail or force"
	OnBlocked string `json:"onBlocked,omitempty"`
	// BlockedAfter is how long a node must have been blocked before onBlocked=skip gives
	// it up (default 5m).
	// +optional
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('-')",message="blockedAfter must not be negative"
	// +kubebuilder:validation:XValidation:rule="self.startsWith('-') || self.matches('^(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$')",message="blockedAfter must be a duration such as 90s, 30m or 1h30m (units ns, us, ms, s, m, h; 1d is not one: write 24h)"
	BlockedAfter *Duration `json:"blockedAfter,omitempty"`
	// NotAfter is the time after which no node starts; nodes in progress finish.
	// +optional
	NotAfter *metav1.Time `json:"notAfter,omitempty"`
	// Surge lets a drain or move surge the one-replica Deployment of a pod whose budget
	// never allows a disruption.
	// +optional
	Surge bool `json:"surge,omitempty"`
	// MaxParallelNodes is how many nodes drain at once; 0 or unset: the default (5, or a
	// pool's maxUnavailable for spec.pool).
	// +optional
	// +kubebuilder:validation:XValidation:rule="self >= 0",message="maxParallelNodes must not be negative (0 means the default)"
	MaxParallelNodes int32 `json:"maxParallelNodes,omitempty"`
	// Soak, for a rolling pool operation (spec.pool, or a Move), is how long a drained
	// node keeps its slot before the next node starts (time to see the workloads settle
	// elsewhere). Unset or 0: the next starts at once.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('-')",message="soak must not be negative"
	// +kubebuilder:validation:XValidation:rule="self.startsWith('-') || self.matches('^(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$')",message="soak must be a duration such as 90s, 30m or 1h30m (units ns, us, ms, s, m, h; 1d is not one: write 24h)"
	Soak *Duration `json:"soak,omitempty"`

	// Windows (planned maintenance).

	// OnWindowClose is what nodes in progress do when spec.window closes: Finish (the
	// default: they drain to the end) or Stop (they stop at once, left cordoned with
	// their state, as a pause leaves them; a recurring window goes on from there).
	// +optional
	// +kubebuilder:validation:XValidation:rule="self in ['Finish', 'Stop']",message="onWindowClose must be Finish or Stop"
	OnWindowClose WindowClose `json:"onWindowClose,omitempty"`
	// Dead nodes and force (planned maintenance).

	// ForceAfter, with onBlocked force (required there, no default), is how long a pod
	// must have been blocked by its budget (outages do not count) before it is deleted
	// instead of evicted (--force-after). The controller then needs delete on pods.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('-')",message="forceAfter must not be negative"
	// +kubebuilder:validation:XValidation:rule="self.startsWith('-') || self.matches('^(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$')",message="forceAfter must be a duration such as 90s, 30m or 1h30m (units ns, us, ms, s, m, h; 1d is not one: write 24h)"
	ForceAfter *Duration `json:"forceAfter,omitempty"`
	// NeverForce are budgets (NAMESPACE/NAME) whose pods are never forced (--never-force).
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=317
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?/[a-z0-9]([-.a-z0-9]*[a-z0-9])?$`
	NeverForce []string `json:"neverForce,omitempty"`
}

// Duration is a length of time as Go writes it (90s, 30m, 1h30m). On the wire it is a
// string, as metav1.Duration is, but decoding never fails: an object stored with a value
// Go cannot read (before the API server's rule refused it) fails alone when its run starts
// (Parse says why), instead of failing every list of Maintenances.
type Duration string

// DurationOf is d as a *Duration.
func DurationOf(d time.Duration) *Duration {
	v := Duration(d.String())
	return &v
}

// Parse reads d ("" is 0); field names it in the error.
func (d *Duration) Parse(field string) (time.Duration, error) {
	if d == nil || *d == "" {
		return 0, nil
	}
	v, err := time.ParseDuration(string(*d))
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not a duration such as 90s, 30m or 1h30m", field, string(*d))
	}
	if v < 0 {
		return 0, fmt.Errorf("%s: %q is negative", field, string(*d))
	}
	return v, nil
}

// Maintenance is a maintenance action on nodes run by "kubectl maintenance controller".
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=mnt,categories=maintenance
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Action",type=string,JSONPath=`.spec.action`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Drained",type=integer,JSONPath=`.status.counts.nodesDrained`
// +kubebuilder:printcolumn:name="Pending",type=integer,JSONPath=`.status.counts.nodesPending`
// +kubebuilder:printcolumn:name="Evicted",type=integer,JSONPath=`.status.counts.podsEvicted`
// +kubebuilder:printcolumn:name="Next Start",type=string,JSONPath=`.status.nextStart`
// +kubebuilder:printcolumn:name="Paused",type=boolean,JSONPath=`.spec.paused`,priority=1
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.message`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Maintenance struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   MaintenanceSpec   `json:"spec"`
	Status MaintenanceStatus `json:"status,omitempty"`
}

// MaintenanceList is a list of Maintenances.
// +kubebuilder:object:root=true
type MaintenanceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Maintenance `json:"items"`
}

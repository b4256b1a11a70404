// Package event is the vocabulary of what the tool reports: the events a cordon, a drain,
// an uncordon and a pool move emit, in the order they happen, and the plan a drain computes
// before it touches anything. Engines emit these events, front ends (the printers, the
// NDJSON stream, the dashboard) render them; it imports neither client-go nor a UI package.
package event

import (
	"fmt"
	"sort"
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

// Type names an event of the drain's progress. The values are the "type" field of
// the NDJSON stream, so they are part of the public interface.
type Type string

// Event types, in the order a drain emits them.
const (
	// EventPlan carries the simulated plan of the whole drain (Plan is set).
	EventPlan Type = "plan"
	// EventWarning is a warning a person should read (DaemonSet pods ignored, emptyDir
	// data deleted, pods without a controller deleted, pods stuck terminating).
	EventWarning Type = "warning"
	// EventNodeCordoned: the node is cordoned (Already when it was before).
	EventNodeCordoned Type = "node.cordoned"
	// EventEvictionStarted: an eviction is about to be requested.
	EventEvictionStarted Type = "pod.eviction_started"
	// EventEvictionAccepted: the API server accepted the eviction; the pod is terminating.
	EventEvictionAccepted Type = "pod.eviction_accepted"
	// EventEvictionBlocked: the eviction was refused or held back; PDB, Reason and
	// RetryAfter say by what and until when at the earliest, Cause and Remedy why and
	// what to do. While nothing changes it is said again every wait interval (30 s by
	// default) with Waited set. Reasons DoNotDisrupt and WaitCompleted are pods a drain
	// rule keeps on the node (never evicted) that the node waits for.
	EventEvictionBlocked Type = "pod.eviction_blocked"
	// EventPodEvicted: the pod is gone from the node.
	EventPodEvicted Type = "pod.evicted"
	// EventNodeDrained: every pod to evict is gone from the node.
	EventNodeDrained Type = "node.drained"
	// EventNodeFailed: the node could not be drained; Message says why.
	EventNodeFailed Type = "node.failed"
	// EventPacing: the eviction pace changed because the disruption controller fell
	// behind or caught up. Reason "PacingStatefulSets" (only evictions of pods recreated
	// under their names are paced), "PacingAll" (every eviction under a budget) or
	// "PacingStopped"; Rate is the pace, Lag the lag measured, PDB and Pod the entry that
	// outlived its pod. Said in the NDJSON stream and the -v log only; pacing that lasts a
	// minute is also said once as a warning.
	EventPacing Type = "drain.pacing"
)

// Event is one step of a drain. Fields that don't apply to a type are empty.
type Event struct {
	Type Type
	Time time.Time
	Node string
	// Pod is "namespace/name".
	Pod string
	// Deployment is "namespace/name" of the Deployment a --surge scales.
	Deployment string
	// PDB is "namespace/name" of the blocking budget (several, comma-separated, for a pod
	// under more than one).
	PDB string
	// Reason is a short machine-readable cause (a pdb.Verdict, or an API reason).
	Reason string
	// Message is a sentence for a person.
	Message string
	// RetryAfter is the least the engine will wait before trying again.
	RetryAfter time.Duration
	// Attempt counts eviction requests for the pod, starting at 1.
	Attempt int
	// Lag, on an eviction started because a budget's status changed, is the time from
	// that watch event to this request; on EventPacing, the disruption controller's lag
	// that changed the pace (from an accepted eviction to its budget's status no longer
	// listing the pod).
	Lag time.Duration
	// Rate, on EventPacing, is the eviction pace in evictions a second (0: not paced).
	Rate float64
	// Wave is the pod's wave in the plan.
	Wave int
	// Already marks a node that was cordoned before (EventNodeCordoned).
	Already bool
	// DryRun is "", "client" or "server".
	DryRun string
	// Plan is set on EventPlan.
	Plan *Plan

	// Cause, on EventEvictionBlocked, says why the wait lasts (replacements not Ready and
	// why, a budget that never allows, two budgets, a stale status, a pod stuck
	// terminating, an earlier run's eviction record, a drain rule); Remedy says what a
	// person can do. Both are sentences (package diagnose).
	Cause  string
	Remedy string
	// CauseKind is the cause's kind (a diagnose.Kind: "ReplacementsNotReady", ...).
	CauseKind string
	// Routine, on EventEvictionBlocked, marks an ordinary wait: the budget's allowance is
	// taken by this drain's evictions in flight and their replacements are on their way.
	// Cause and Remedy are still set; the human output says neither.
	Routine bool
	// Waited, on an EventEvictionBlocked said again while nothing changed, is how long
	// the pod (or the node, for a pod a drain rule holds) has waited so far.
	Waited time.Duration

	// Dead nodes and force (planned maintenance).
	//
	// Budget, on EventPodForced, is the forced pod's budget's status as it stood.
	Budget *BudgetNumbers
}

// Plan is what a drain will do, computed before anything is touched.
type Plan struct {
	// Nodes in the order they will be drained.
	Nodes []NodePlan
	// Waves is the number of eviction waves the budgets need.
	Waves int
	// ETA is how long the drain is expected to take (drain.EstimateETA).
	ETA ETA

	// Dead nodes and force (planned maintenance).
	//
	// ForceAfter is --force-after under --on-blocked=force (0: no force).
	ForceAfter time.Duration
	// WouldForce are the pods that would be forced if they stay blocked for ForceAfter:
	// those whose budget allows nothing now and is not in --never-force.
	WouldForce []Blocker
}

// NodePlan is the plan for one node.
type NodePlan struct {
	Name string
	// AlreadyCordoned is true when the node was unschedulable before.
	AlreadyCordoned bool
	// Steps are the pods to evict, with their wave and blockers.
	Steps []pdb.Step
	// Warnings are kubectl's filter warnings (DaemonSet pods ignored, ...).
	Warnings []string
	// Errors are kubectl's filter errors: the node can't be drained with these flags.
	Errors []string
	// Drain order (planned maintenance).
	//
	// Order says, when a drain rule, a pod's cluster.x-k8s.io/drain label or a
	// karpenter.sh/do-not-disrupt duration places some pod of the node, each pod's group
	// or behavior, in the order they go; empty when every pod is in group 0.
	Order []PodOrder

	// Dead nodes and force (planned maintenance).
	//
	// Dead, when set, says the node is not ready (its Ready condition Unknown or False,
	// since when and why): its pods are evicted with a short grace period and those whose
	// deletion started are not waited for long.
	Dead string
}

// PodOrder is one pod's place in its node's drain order.
type PodOrder struct {
	// Pod is namespace/name.
	Pod string
	// Group is "order N" (evicted in group N), "skip" or "wait-completed" (never
	// evicted), or "do-not-disrupt" (evicted in group Order once Until has passed).
	Group string
	// Order is the pod's order group (evicted pods).
	Order int32
	// Source names the rule or label that decided ("" for the default).
	Source string
	// Until is when a karpenter.sh/do-not-disrupt duration ends (zero otherwise).
	Until time.Time
}

// Blocked reports whether some pod of the node can never be evicted as things stand.
func (n NodePlan) Blocked() bool {
	for _, s := range n.Steps {
		if s.Wave == 0 {
			return true
		}
	}
	return false
}

// Event types of the operations around a drain: a cordon emits EventNodeCordoned (never
// EventNodeDrained), an uncordon EventNodeUncordoned, a pool move EventNodeMoved. Each type
// means one fact; none is a warning.
const (
	// EventNodeUncordoned: the node is schedulable again. Reason "LeftCordoned" (the cordon
	// was someone else's) or "AlreadySchedulable" qualify it; Message says it for a person.
	EventNodeUncordoned Type = "node.uncordoned"
	// EventNodeMoved: the node now carries its target pool's role label, labels and taints;
	// Message is the target pool's name.
	EventNodeMoved Type = "node.moved"
	// EventPoolBatch: a batch of a rolling pool move or drain starts; Message names its nodes.
	// No longer sent (moves and rollouts roll in a window); kept for readers of old streams.
	EventPoolBatch Type = "pool.batch"
)

// Event types of --surge: a pod whose budget never allows a disruption is moved by
// scaling its one-replica Deployment to one more, evicting the pod once the new one is
// Ready, and restoring the count. Deployment names the Deployment, Message says it for a
// person.
const (
	// EventSurgeStarted: the Deployment of Pod is scaled to one more replica, its count
	// recorded in an annotation. Reason "Resumed" when an earlier run had started it.
	EventSurgeStarted Type = "pod.surge_started"
	// EventSurgeReady: a new pod of the Deployment is Ready on another node; Pod's
	// eviction is now allowed by its budget.
	EventSurgeReady Type = "pod.surge_ready"
	// EventDeploymentRestored: the Deployment is back at its recorded count and the
	// record is removed. Reason "Changed" when someone scaled it meanwhile (their count
	// is kept), "Resumed" when it restores a surge an interrupted run left.
	EventDeploymentRestored Type = "deployment.restored"
)

// Blocker is a pod that was still waiting when the drain stopped, and why.
type Blocker struct {
	Node    string `json:"node"`
	Pod     string `json:"pod"`
	PDB     string `json:"pdb,omitempty"`
	Message string `json:"message"`
	Cause   string `json:"cause,omitempty"`
	Remedy  string `json:"remedy,omitempty"`
}

// Problems lists every node's filter errors, for a PreflightError.
func (p *Plan) Problems() []string {
	var out []string
	for _, n := range p.Nodes {
		for _, e := range n.Errors {
			out = append(out, fmt.Sprintf("node/%s: %s", n.Name, e))
		}
	}
	sort.Strings(out)
	return out
}

// Blocked lists every pod that can never be evicted as things stand.
func (p *Plan) Blocked() []Blocker {
	var out []Blocker
	for _, n := range p.Nodes {
		for _, s := range n.Steps {
			if s.Wave == 0 {
				out = append(out, Blocker{Node: n.Name, Pod: s.Pod.Namespace + "/" + s.Pod.Name, PDB: pdb.JoinKeys(s.Decision.Budgets), Message: s.Blocker,
					Cause: s.Cause, Remedy: s.Remedy})
			}
		}
	}
	return out
}

// Event types of the drain's policies (--on-blocked, --not-after).
const (
	// EventNodeBlocked: the drain gave the node up (--on-blocked=skip); it stays cordoned.
	// PDB names the budgets, Message the pods and the budgets' numbers.
	EventNodeBlocked Type = "node.blocked"
	// EventNodeNotStarted: the node was not started (Reason "NotAfter": the --not-after
	// deadline passed; "OnBlockedFail": --on-blocked=fail stopped the run).
	EventNodeNotStarted Type = "node.not_started"
)

// Dead nodes and force (planned maintenance).
const (
	// EventPodForced: under --on-blocked=force the pod, blocked by its budget for
	// --force-after, is deleted (a plain DELETE, not an eviction): the one event of a pod
	// that went below its budget. PDB names the budget, Budget its numbers, Message says
	// it for a person. The pod's going is then EventPodEvicted with Reason "Forced".
	EventPodForced Type = "pod.forced"
	// EventNodeGone: the node was deleted while it drained; its drain ends at once, neither
	// drained nor failed (its pods went with it). Message says it.
	EventNodeGone Type = "node.gone"
	// EventPodLeft: a pod of a dead node whose deletion started longer ago than the
	// dead-node wait is no longer waited for: it is left to the node's return or removal.
	EventPodLeft Type = "pod.left"
	// EventNodeWaiting: the node's pods are gone but it is not drained yet: Reason
	// "VolumeDetach", its volumes are still attached (Message names the volumes and their
	// VolumeAttachments). Said again when what it waits for changes.
	EventNodeWaiting Type = "node.waiting"
)

// ReasonForced is the Reason of the EventPodEvicted of a pod --on-blocked=force deleted.
const ReasonForced = "Forced"

// BudgetNumbers are a budget's status numbers.
type BudgetNumbers struct {
	CurrentHealthy     int32 `json:"current_healthy"`
	DesiredHealthy     int32 `json:"desired_healthy"`
	ExpectedPods       int32 `json:"expected_pods"`
	DisruptionsAllowed int32 `json:"disruptions_allowed"`
}

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Phase is where a Maintenance is. While the run goes on: Pending (not started: waiting
// for a controller or for nodes another Maintenance holds), Scheduled (spec.window has not
// opened), Running, Paused. Once it ended: Succeeded, Failed, Blocked, DeadlinePassed,
// TimedOut, Forced, each with the exit code the CLI gives the same end (0, 1 or 2, 3, 4,
// 124, 5). Conditions Ready (Succeeded) and Stalled (an end that needs a person) say the
// same for kubectl wait and GitOps tools.
// +kubebuilder:validation:Enum=Pending;Scheduled;Running;Paused;Succeeded;Failed;Blocked;DeadlinePassed;TimedOut;Forced
type Phase string

// Phases. The last four end the run, each with the exit code the CLI gives the same
// outcome.
const (
	// PhasePending: not started (waiting for a controller, or for nodes another holds).
	PhasePending Phase = "Pending"
	// PhaseScheduled: spec.window has not opened yet (status.nextStart says when); the
	// nodes carry MaintenancePlanned=True.
	PhaseScheduled Phase = "Scheduled"
	// PhaseRunning: the run is in progress.
	PhaseRunning Phase = "Running"
	// PhasePaused: spec.paused stopped the run; nodes keep their state.
	PhasePaused Phase = "Paused"
	// PhaseSucceeded: done (exit 0).
	PhaseSucceeded Phase = "Succeeded"
	// PhaseFailed: an error ended the run (exit 1, or 2 for a spec that cannot run).
	PhaseFailed Phase = "Failed"
	// PhaseBlocked: blocked nodes were skipped, or onBlocked=fail stopped the run (exit 3).
	PhaseBlocked Phase = "Blocked"
	// PhaseDeadlinePassed: policy.notAfter (or a one-shot spec.window's end) passed with
	// nodes not started (exit 4).
	PhaseDeadlinePassed Phase = "DeadlinePassed"
	// PhaseTimedOut: drain.timeout was reached (exit 124).
	PhaseTimedOut Phase = "TimedOut"
	// PhaseForced: finished by force, policy.onBlocked force deleted pods below their
	// budgets (exit 5); the nodes are drained.
	PhaseForced Phase = "Forced"
)

// Done reports whether p ends the run.
func (p Phase) Done() bool {
	switch p {
	case PhaseSucceeded, PhaseFailed, PhaseBlocked, PhaseDeadlinePassed, PhaseTimedOut, PhaseForced:
		return true
	}
	return false
}

// Condition types of a Maintenance.
const (
	// ConditionProgressing is True while the run goes on.
	ConditionProgressing = "Progressing"
	// ConditionWaitingForNodes is True while another Maintenance holds some of the nodes;
	// its message names it.
	ConditionWaitingForNodes = "WaitingForNodes"
	// ConditionReconciling (kstatus) is True while the controller works toward the spec:
	// phase Pending, Scheduled, Running or Paused; its reason is the phase's (Progressing's).
	ConditionReconciling = "Reconciling"
	// ConditionStalled (kstatus) is True when the run ended in a way that needs a person:
	// Failed (a bad object included), Blocked, TimedOut, Forced, or DeadlinePassed with
	// nodes left; its reason and message are the outcome's.
	ConditionStalled = "Stalled"
	// ConditionReady is True once the run Succeeded: `kubectl wait --for=condition=Ready`
	// waits for a good end.
	ConditionReady = "Ready"
)

// Blocker is a pod left on a node and what holds it: the same words as plan and the
// wait lines.
type Blocker struct {
	// Pod is the pod left on the node (NAMESPACE/NAME).
	Pod string `json:"pod"`
	// PDB is the budget that holds it (NAMESPACE/NAME), when one does.
	// +optional
	PDB string `json:"pdb,omitempty"`
	// Message is the wait line: what holds the pod.
	// +optional
	Message string `json:"message,omitempty"`
	// Cause is why the budget has no room (pods not Ready, replacements pending, ...).
	// +optional
	Cause string `json:"cause,omitempty"`
	// Remedy is what a person can do about it.
	// +optional
	Remedy string `json:"remedy,omitempty"`
}

// NodeStatus is one node's progress.
type NodeStatus struct {
	// Name is the node's name.
	Name string `json:"name"`
	// State is Pending, Cordoned, Draining, Drained, Blocked, Failed, NotStarted, Moved,
	// Uncordoned, Released or Gone.
	State string `json:"state"`
	// Since is when the node entered State.
	// +optional
	Since *metav1.Time `json:"since,omitempty"`
	// PodsLeft is how many pods the drain still has to evict from the node.
	// +optional
	PodsLeft int32 `json:"podsLeft,omitempty"`
	// Message says why the node failed or was given up.
	// +optional
	Message string `json:"message,omitempty"`
	// Blockers are the pods waiting on a budget (or a rule), and why.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	Blockers []Blocker `json:"blockers,omitempty"`
}

// NodeStateDone reports whether a node in state is finished for a Maintenance of action:
// drained, moved or uncordoned; cordoned only when cordoning is the action (in a drain or
// a move it is the step before the first eviction).
func NodeStateDone(state string, action Action) bool {
	switch state {
	case NodeStateDrained, NodeStateMoved, NodeStateUncordoned:
		return true
	case NodeStateCordoned:
		return action == ActionCordon
	}
	return false
}

// Node states in a Maintenance's status (NodeStatus.State).
const (
	NodeStatePending    = "Pending"
	NodeStateCordoned   = "Cordoned"
	NodeStateDraining   = "Draining"
	NodeStateDrained    = "Drained"
	NodeStateBlocked    = "Blocked"
	NodeStateFailed     = "Failed"
	NodeStateNotStarted = "NotStarted"
	NodeStateMoved      = "Moved"
	NodeStateUncordoned = "Uncordoned"
	// NodeStateReleased: someone took the node from the run (uncordon --force, kubectl
	// uncordon, another run): the run stopped every action on it at once; Message says
	// who or what and when.
	NodeStateReleased = "Released"
	// NodeStateGone: the node was deleted while it drained; its drain ended (its pods
	// went with it). Not a failure.
	NodeStateGone = "Gone"
)

// Counts are the CLI summary's counts.
type Counts struct {
	// NodesTotal are the run's nodes (status.nodes), a scalar for fleet tools that read
	// no lists: nodesDrained, nodesFailed, nodesBlocked, podsEvicted and podsPending
	// beside it say how far the run is.
	// +optional
	NodesTotal int32 `json:"nodesTotal,omitempty"`
	// NodesDrained are the nodes finished by the action (drained, moved, uncordoned;
	// cordoned for a Cordon).
	NodesDrained int32 `json:"nodesDrained"`
	// NodesFailed are the nodes that failed or were released (taken from the run).
	NodesFailed int32 `json:"nodesFailed"`
	// NodesPending are the nodes in progress or not reached yet.
	NodesPending int32 `json:"nodesPending"`
	// NodesBlocked are the nodes given up under policy.onBlocked skip (they stay
	// cordoned).
	// +optional
	NodesBlocked int32 `json:"nodesBlocked,omitempty"`
	// NodesNotStarted are the nodes policy.notAfter (or a closed window) kept from
	// starting.
	// +optional
	NodesNotStarted int32 `json:"nodesNotStarted,omitempty"`
	// PodsEvicted are the pods evicted (through the Eviction API).
	PodsEvicted int32 `json:"podsEvicted"`
	// PodsPending are the pods still to evict.
	PodsPending int32 `json:"podsPending"`
	// Evictions counts the eviction requests sent.
	Evictions int32 `json:"evictions"`
	// Refusals counts the eviction requests refused (a budget with no room: 429).
	Refusals int32 `json:"refusals"`

	// Dead nodes and force (planned maintenance).

	// PodsForced are the pods policy.onBlocked force deleted (not in podsEvicted).
	// +optional
	PodsForced int32 `json:"podsForced,omitempty"`
	// PodsLeftOnDeadNodes are the pods of dead nodes no longer waited for (left to the
	// node's return or removal).
	// +optional
	PodsLeftOnDeadNodes int32 `json:"podsLeftOnDeadNodes,omitempty"`
	// NodesGone are the nodes deleted while they drained.
	// +optional
	NodesGone int32 `json:"nodesGone,omitempty"`
}

// MaintenanceStatus is what the controller reports.
type MaintenanceStatus struct {
	// +optional
	Phase Phase `json:"phase,omitempty"`
	// ObservedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions: Progressing (the run goes on) and WaitingForNodes (another Maintenance
	// holds some nodes), and the kstatus conditions Reconciling (the controller works
	// toward the spec), Stalled (an end that needs a person) and Ready (Succeeded), each
	// with the phase's reason and message.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// StartTime is when the run started.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// CompletionTime is when the run ended.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// Message says how the run ended (the CLI's error line), or what it waits for.
	// +optional
	Message string `json:"message,omitempty"`
	// Counts are the summary's counts.
	// +optional
	Counts Counts `json:"counts,omitempty"`
	// Nodes is each node's progress, in plan order.
	// +optional
	// +kubebuilder:validation:MaxItems=5000
	Nodes []NodeStatus `json:"nodes,omitempty"`

	// Windows (planned maintenance).

	// NextStart is when spec.window opens next (phase Scheduled).
	// +optional
	NextStart *metav1.Time `json:"nextStart,omitempty"`
	// WindowCloses is when the open window closes (a run in spec.window).
	// +optional
	WindowCloses *metav1.Time `json:"windowCloses,omitempty"`
}

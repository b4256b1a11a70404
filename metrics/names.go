package metrics

import (
	"slices"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

// Namespace prefixes every family of the package.
const Namespace = "kubectl_maintenance"

// Family names (without the namespace), as served.
const (
	EvictionsTotal      = Namespace + "_evictions_total"
	PodsWaiting         = Namespace + "_pods_waiting"
	NodeDrainDuration   = Namespace + "_node_drain_duration_seconds"
	RunDuration         = Namespace + "_run_duration_seconds"
	EvictionRate        = Namespace + "_eviction_rate"
	EvictionPace        = Namespace + "_eviction_pace"
	DisruptionLag       = Namespace + "_disruption_controller_lag_seconds"
	StatusWritesTotal   = Namespace + "_status_writes_total"
	HoldsTotal          = Namespace + "_disruption_holds_total"
	MaintenancesByPhase = Namespace + "_maintenances"
	MaintenanceNodes    = Namespace + "_maintenance_nodes"
	RunsInProgress      = Namespace + "_runs"
	otherValue          = "Other"
	rateWindowSeconds   = 10
)

// Outcomes of an eviction request (label "outcome" of EvictionsTotal).
const (
	OutcomeAccepted      = "accepted"
	OutcomeRefusedBudget = "refused_budget"
	OutcomeRefusedOther  = "refused_other"
	OutcomeError         = "error"
)

// Results of a status write (label "result" of StatusWritesTotal).
const (
	WriteOK       = "ok"
	WriteConflict = "conflict"
	WriteError    = "error"
)

// Who caused a disruption controller's hold (label "caused" of HoldsTotal).
const (
	HoldCausedByRun   = "true"
	HoldCausedByOther = "false"
)

// Results of a node's drain (label "result" of NodeDrainDuration).
const (
	NodeResultDrained = "drained"
	NodeResultFailed  = "failed"
	NodeResultBlocked = "blocked"
)

// waitReasons are the reasons a pod waits (the engine's EventEvictionBlocked reasons);
// any other becomes "Other".
var waitReasons = []string{
	"DisruptionBudget", string(pdb.Exhausted), string(pdb.Never), string(pdb.Multiple), string(pdb.Stale),
	string(pdb.Negative), string(pdb.Unhealthy), drain.ReasonDoNotDisrupt, drain.ReasonWaitCompleted,
	"Conflict", "TooManyRequests", "Error",
}

// phases and nodeStates are the Maintenance API's values.
var phases = []string{
	string(v1alpha1.PhasePending), string(v1alpha1.PhaseRunning), string(v1alpha1.PhasePaused),
	string(v1alpha1.PhaseSucceeded), string(v1alpha1.PhaseFailed), string(v1alpha1.PhaseBlocked),
	string(v1alpha1.PhaseDeadlinePassed), string(v1alpha1.PhaseTimedOut),
	string(v1alpha1.PhaseScheduled), string(v1alpha1.PhaseForced),
}

var nodeStates = []string{
	v1alpha1.NodeStatePending, v1alpha1.NodeStateCordoned, v1alpha1.NodeStateDraining,
	v1alpha1.NodeStateDrained, v1alpha1.NodeStateBlocked, v1alpha1.NodeStateFailed,
	v1alpha1.NodeStateNotStarted, v1alpha1.NodeStateMoved, v1alpha1.NodeStateUncordoned,
	v1alpha1.NodeStateReleased, v1alpha1.NodeStateGone,
}

// bounded returns v if it is one of known, else "Other".
func bounded(v string, known []string) string {
	if slices.Contains(known, v) {
		return v
	}
	return otherValue
}

// LabelBound is the most values any label of the package takes: each label's values
// come from a fixed list plus "Other".
func LabelBound() int {
	return max(len(waitReasons), len(phases), len(nodeStates)) + 1
}

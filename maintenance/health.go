package maintenance

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// setHealth sets the kstatus conditions (Reconciling, Stalled, Ready) from the phase and
// the Progressing condition the writers already set, so that GitOps tools
// (sigs.k8s.io/cli-utils kstatus, Flux, Argo CD) and `kubectl wait --for=condition=`
// read a Maintenance's health: Reconciling while the controller works toward the spec,
// Stalled when only a person can move it on, Ready once it Succeeded. Each carries the
// phase's reason and message and gen. It is called on every status write
// (writeStatus), after the writer's own changes, and writes nothing else.
func setHealth(s *v1alpha1.MaintenanceStatus, gen int64) {
	reason, msg := string(s.Phase), s.Message
	if reason == "" {
		reason = string(v1alpha1.PhasePending)
	}
	if p := meta.FindStatusCondition(s.Conditions, v1alpha1.ConditionProgressing); p != nil {
		reason = p.Reason
		if msg == "" {
			msg = p.Message
		}
	}
	if msg == "" {
		msg = "phase " + reason
	}
	reconciling, stalled, ready := metav1.ConditionFalse, metav1.ConditionFalse, metav1.ConditionFalse
	switch health(s) {
	case healthWorking:
		reconciling = metav1.ConditionTrue
	case healthStalled:
		stalled = metav1.ConditionTrue
	case healthReady:
		ready = metav1.ConditionTrue
	}
	for _, c := range []struct {
		typ    string
		status metav1.ConditionStatus
	}{{v1alpha1.ConditionReconciling, reconciling}, {v1alpha1.ConditionStalled, stalled}, {v1alpha1.ConditionReady, ready}} {
		setCondition(s, gen, c.typ, c.status, reason, msg)
	}
}

// setSummary sets the scalar summary that fleet tools read without parsing lists
// (Counts.NodesTotal; the other counts are the tracker's).
func setSummary(s *v1alpha1.MaintenanceStatus) {
	s.Counts.NodesTotal = int32(len(s.Nodes))
}

type healthState int

const (
	healthWorking healthState = iota
	healthStalled
	healthReady
)

// health reads where the status is: a phase not done is work in progress (Pending,
// Scheduled, Running, Paused); Succeeded is ready; every other end needs a person, but a
// DeadlinePassed with no node left undone (every node finished before the deadline).
func health(s *v1alpha1.MaintenanceStatus) healthState {
	switch {
	case !s.Phase.Done():
		return healthWorking
	case s.Phase == v1alpha1.PhaseSucceeded:
		return healthReady
	case s.Phase == v1alpha1.PhaseDeadlinePassed && workLeft(s.Counts) == 0:
		return healthReady
	}
	return healthStalled
}

// workLeft counts the nodes not finished.
func workLeft(c v1alpha1.Counts) int32 {
	return c.NodesPending + c.NodesFailed + c.NodesBlocked + c.NodesNotStarted
}

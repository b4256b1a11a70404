package noderecord

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Prefix is the prefix of every label and annotation this tool writes on a node.
const Prefix = "kubectl-maintenance.io/"

// The labels and annotations of the record. A node this tool touches carries its state
// twice: in AnnotationDrain (the resume record a re-run reads) and in LabelState, so that
// "kubectl get nodes -L kubectl-maintenance.io/state" shows it. Every write of the state
// writes the record in one patch; uncordon removes it all (Annotations).
const (
	// LabelState mirrors the node's state in a label.
	LabelState = Prefix + "state"
	// AnnotationDrain records the drain's progress on the node (the state, except
	// StateCordoned, which is not written there).
	AnnotationDrain = Prefix + "drain"
	// AnnotationCordoned is set ("true") when this tool cordoned a node that was
	// schedulable. It is informational; CordonedByUs decides.
	AnnotationCordoned = Prefix + "cordoned"
	// AnnotationSince is when the node entered its current state (RFC 3339, UTC).
	AnnotationSince = Prefix + "since"
	// AnnotationCommand is the command line (or "maintenance/<name>") that cordoned or
	// drained the node.
	AnnotationCommand = Prefix + "command"
	// AnnotationUser is the user that command ran as.
	AnnotationUser = Prefix + "user"
	// AnnotationBlocked says why a node in StateBlocked was given up (the budget and its
	// numbers); it is removed when the node leaves that state.
	AnnotationBlocked = Prefix + "blocked"
	// AnnotationFailed says why a node in StateFailed failed (a refused eviction, the
	// run's timeout or interruption); it is removed when the node leaves that state.
	AnnotationFailed = Prefix + "failed"
	// AnnotationRun is the run that holds (or last held) the node: its Run as JSON.
	AnnotationRun = Prefix + "run"
	// AnnotationHeartbeat is when the run holding the node last said it lives (RFC 3339,
	// UTC). It is renewed every HeartbeatInterval while the run works on the node, and
	// removed when the run lets the node go (drained, given up, failed, not started).
	AnnotationHeartbeat = Prefix + "heartbeat"
	// AnnotationWaiting is the ID of a run waiting for the node while another holds it:
	// the holder, letting a node go that it never started, leaves it cordoned for the
	// waiter instead of uncordoning it.
	AnnotationWaiting = Prefix + "waiting"
)

// The node states written in LabelState (and, but for StateCordoned, AnnotationDrain).
const (
	// StateCordoned: cordoned by "kubectl maintenance cordon", not drained.
	StateCordoned = "cordoned"
	// StateDraining: a run is draining the node (or was, when its heartbeat is old).
	StateDraining = "draining"
	// StateDrained: every pod the drain evicts is gone: the node is empty but for the
	// pods a drain never evicts (DaemonSet and mirror pods).
	StateDrained = "drained"
	// StateSelectedDrained: a drain with --pod-selector evicted every selected pod; other
	// pods may still run on the node.
	StateSelectedDrained = "selected-drained"
	// StateBlocked: the drain gave the node up (--on-blocked): it stays cordoned with pods
	// a budget does not let go; AnnotationBlocked says why.
	StateBlocked = "blocked"
	// StateFailed: the run ended (a refused eviction, its timeout, an interruption)
	// before the node was drained; it stays cordoned and AnnotationFailed says why.
	StateFailed = "failed"
	// StateMoving: a pool move is in progress (read from the move's own annotation; never
	// written in LabelState).
	StateMoving = "moving"
)

// Annotations are the record's annotations: those uncordon, and a pool move's end,
// remove.
func Annotations() []string {
	return []string{AnnotationDrain, AnnotationCordoned, AnnotationSince, AnnotationCommand, AnnotationUser,
		AnnotationBlocked, AnnotationFailed, AnnotationRun, AnnotationHeartbeat, AnnotationWaiting}
}

// Record is what a node's labels and annotations say about this tool's work on it.
type Record struct {
	// State is one of the states above; "" for a node the tool has not touched.
	State string
	// Since is when the node entered State (zero when not recorded).
	Since time.Time
	// Command and User started the work.
	Command, User string
	// Blocked says why the node was given up (StateBlocked) or failed (StateFailed).
	Blocked string
	// CordonedByUs: the node's cordon is this tool's (see CordonedByUs).
	CordonedByUs bool
	// Run is the run that holds, or last held, the node (zero when none is recorded).
	Run Run
	// Heartbeat is when that run last said it lives (zero once it let the node go).
	Heartbeat time.Time
	// Waiting is the ID of a run waiting for the node.
	Waiting string
}

// Read reads the node's record. The resume annotation wins over the label (a write of an
// older version of this tool that wrote only the annotation); a move in progress
// (moveAnnotation, the pool move's record) shows as StateMoving unless the node was given
// up or failed; a node whose cordon is ours with no other record is StateCordoned.
func Read(n *corev1.Node, moveAnnotation string) Record {
	a := n.Annotations
	s := Record{State: n.Labels[LabelState], Command: a[AnnotationCommand], User: a[AnnotationUser],
		Blocked: a[AnnotationBlocked], CordonedByUs: CordonedByUs(n), Waiting: a[AnnotationWaiting]}
	if s.Blocked == "" {
		s.Blocked = a[AnnotationFailed]
	}
	if v := a[AnnotationDrain]; v != "" {
		s.State = v
	}
	if moveAnnotation != "" && a[moveAnnotation] != "" && s.State != StateBlocked && s.State != StateFailed {
		s.State = StateMoving
	}
	if s.State == "" && s.CordonedByUs {
		s.State = StateCordoned
	}
	s.Since = parseTime(a[AnnotationSince])
	s.Heartbeat = parseTime(a[AnnotationHeartbeat])
	s.Run = parseRun(a[AnnotationRun])
	if s.Run.ID != "" {
		// The command and user annotations are the run's, readable without JSON.
		s.Run.Command, s.Run.User = s.Command, s.User
	}
	return s
}

// Touched reports whether this tool has left a record on the node (its state label, one
// of its annotations, or its cordon).
func Touched(n *corev1.Node) bool {
	if _, ok := n.Labels[LabelState]; ok {
		return true
	}
	for k := range n.Annotations {
		if strings.HasPrefix(k, Prefix) {
			return true
		}
	}
	return CordonedByUs(n)
}

func parseTime(v string) time.Time {
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}
	}
	return t
}

package drain

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
)

// The node state model. A node this tool touches carries its state twice: in
// AnnotationDrain (the resume record a re-run reads) and in LabelState, so that
// "kubectl get nodes -L kubectl-maintenance.io/state" shows it; plus annotations saying
// since when, which command line and which user started it. Every write of the state
// writes all of them in one patch; uncordon removes them all.
const (
	// LabelState mirrors the node's state (StateCordoned, StateDraining, StateDrained,
	// StateBlocked) in a label.
	LabelState = "kubectl-maintenance.io/state"
	// AnnotationSince is when the node entered its current state (RFC 3339, UTC).
	AnnotationSince = "kubectl-maintenance.io/since"
	// AnnotationCommand is the command line that cordoned or drained the node.
	AnnotationCommand = "kubectl-maintenance.io/command"
	// AnnotationUser is the user that command ran as.
	AnnotationUser = "kubectl-maintenance.io/user"
	// AnnotationBlocked says why a node in StateBlocked was given up (the budget and its
	// numbers); it is removed when the node leaves that state.
	AnnotationBlocked = "kubectl-maintenance.io/blocked"
)

// More node states (StateDraining and StateDrained are in node.go).
const (
	// StateCordoned: cordoned by "kubectl maintenance cordon", not drained.
	StateCordoned = "cordoned"
	// StateBlocked: the drain gave the node up (--on-blocked=skip): it stays cordoned
	// with pods a budget does not let go.
	StateBlocked = "blocked"
	// StateMoving: a pool move is in progress (read from the move's own annotation; never
	// written in LabelState).
	StateMoving = "moving"
)

// maxAnnotationCommand bounds the recorded command line (a selector of many nodes can
// make it long; annotations are limited to 256 KiB in all).
const maxAnnotationCommand = 1024

// Origin is who started the work on a node, recorded on it when it is cordoned.
type Origin struct {
	// Command is the command line (without credentials: the caller builds it).
	Command string
	// User is the user the command ran as ("" when unknown).
	User string
}

// StateAnnotations are the annotations of the state model (AnnotationCordoned included):
// those uncordon, and a pool move's end, remove.
func StateAnnotations() []string {
	return []string{AnnotationDrain, AnnotationCordoned, AnnotationSince, AnnotationCommand, AnnotationUser, AnnotationBlocked}
}

// statePatch is the metadata of a patch that puts a node in state at now: the label, the
// resume annotation and since; origin when given (the start of the work); the blocked
// reason for StateBlocked, removed otherwise.
func statePatch(state string, now time.Time, origin *Origin, blocked string) map[string]any {
	ann := map[string]any{AnnotationSince: now.UTC().Format(time.RFC3339)}
	if state != StateCordoned {
		ann[AnnotationDrain] = state
	}
	if origin != nil {
		cmd := origin.Command
		if len(cmd) > maxAnnotationCommand {
			cmd = cmd[:maxAnnotationCommand] + "..."
		}
		ann[AnnotationCommand], ann[AnnotationUser] = nilIfEmpty(cmd), nilIfEmpty(origin.User)
	}
	if state == StateBlocked {
		ann[AnnotationBlocked] = blocked
	} else {
		ann[AnnotationBlocked] = nil
	}
	return map[string]any{"labels": map[string]any{LabelState: state}, "annotations": ann}
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// SetState records the node's state (label, AnnotationDrain and since; for StateBlocked,
// why) in one patch. now is the engine's clock.
func SetState(ctx context.Context, c kubernetes.Interface, node, state string, now time.Time, blocked string) error {
	if err := patchNode(ctx, c, node, map[string]any{"metadata": statePatch(state, now, nil, blocked)}, false); err != nil {
		return fmt.Errorf("record state %s: %w", state, err)
	}
	return nil
}

// NodeState is what the node's labels and annotations say about this tool's work on it.
type NodeState struct {
	// State is StateCordoned, StateDraining, StateDrained, StateBlocked or StateMoving;
	// "" for a node the tool has not touched.
	State string
	// Since is when the node entered State (zero when not recorded).
	Since time.Time
	// Command and User started the work.
	Command, User string
	// Blocked says why a StateBlocked node was given up.
	Blocked string
	// CordonedByUs: the node's cordon is this tool's (see CordonedByUs).
	CordonedByUs bool
}

// ReadState reads the node's state. The resume annotation wins over the label (a drain
// that wrote one and not yet the other, or an older version of this tool that wrote only
// the annotation); a move in progress (moveAnnotation, the pool move's record) shows as
// StateMoving unless the drain gave the node up (StateBlocked); a node whose cordon is ours with no other record is StateCordoned.
func ReadState(n *corev1.Node, moveAnnotation string) NodeState {
	s := NodeState{State: n.Labels[LabelState], Command: n.Annotations[AnnotationCommand],
		User: n.Annotations[AnnotationUser], Blocked: n.Annotations[AnnotationBlocked], CordonedByUs: CordonedByUs(n)}
	if v := n.Annotations[AnnotationDrain]; v != "" {
		s.State = v
	}
	if moveAnnotation != "" && n.Annotations[moveAnnotation] != "" && s.State != StateBlocked {
		s.State = StateMoving
	}
	if s.State == "" && s.CordonedByUs {
		s.State = StateCordoned
	}
	if t, err := time.Parse(time.RFC3339, n.Annotations[AnnotationSince]); err == nil {
		s.Since = t
	}
	return s
}

// Touched reports whether this tool has left a record on the node (its state label, one
// of its annotations, or its cordon).
func Touched(n *corev1.Node) bool {
	if _, ok := n.Labels[LabelState]; ok {
		return true
	}
	for _, k := range StateAnnotations() {
		if _, ok := n.Annotations[k]; ok {
			return true
		}
	}
	for k := range n.Annotations {
		if strings.HasPrefix(k, "kubectl-maintenance.io/") {
			return true
		}
	}
	return CordonedByUs(n)
}

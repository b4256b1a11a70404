package drain

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// The node record (state label, annotations, cordon owner, the run holding the node)
// lives in package noderecord; these names are the drain's view of it, kept so that the
// drain's callers read one vocabulary.
const (
	LabelState           = noderecord.LabelState
	AnnotationSince      = noderecord.AnnotationSince
	AnnotationCommand    = noderecord.AnnotationCommand
	AnnotationUser       = noderecord.AnnotationUser
	AnnotationBlocked    = noderecord.AnnotationBlocked
	AnnotationCordoned   = noderecord.AnnotationCordoned
	AnnotationDrain      = noderecord.AnnotationDrain
	FieldManager         = noderecord.FieldManager
	StateCordoned        = noderecord.StateCordoned
	StateDraining        = noderecord.StateDraining
	StateDrained         = noderecord.StateDrained
	StateSelectedDrained = noderecord.StateSelectedDrained
	StateBlocked         = noderecord.StateBlocked
	StateFailed          = noderecord.StateFailed
	StateMoving          = noderecord.StateMoving
)

// Origin is the run a drain records on every node it holds: its ID (made when empty),
// command line (or "maintenance/<name>" for the controller) and user.
type Origin = noderecord.Run

// NodeState is what the node's labels and annotations say about this tool's work on it.
type NodeState = noderecord.Record

// StateAnnotations are the annotations of the node record: those uncordon, and a pool
// move's end, remove.
func StateAnnotations() []string { return noderecord.Annotations() }

// ReadState reads the node's record (noderecord.Read).
func ReadState(n *corev1.Node, moveAnnotation string) NodeState {
	return noderecord.Read(n, moveAnnotation)
}

// Touched reports whether this tool has left a record on the node.
func Touched(n *corev1.Node) bool { return noderecord.Touched(n) }

// CordonedBy returns the field managers that own node's spec.unschedulable.
func CordonedBy(node *corev1.Node) []string { return noderecord.CordonedBy(node) }

// CordonedByUs reports whether node is cordoned and its cordon is this tool's own.
func CordonedByUs(node *corev1.Node) bool { return noderecord.CordonedByUs(node) }

// SetState records the node's state (label, AnnotationDrain and since; for StateBlocked
// and StateFailed, why) in one patch conditional on the node's resourceVersion. With run,
// it writes only while the node is not held by another live run (a HeldError otherwise)
// and records run as the node's. now is the engine's clock.
func SetState(ctx context.Context, c kubernetes.Interface, node, state string, now time.Time, why string, run *Origin) error {
	_, err := noderecord.Update(ctx, c.CoreV1(), node, false, func(n *corev1.Node) (map[string]any, error) {
		if err := heldByOther(n, run, now); err != nil {
			return nil, err
		}
		return map[string]any{"metadata": noderecord.StatePatch(state, now, run, why)}, nil
	})
	if err != nil {
		return fmt.Errorf("record state %s: %w", state, err)
	}
	return nil
}

// heldByOther is a HeldError when another live run than run holds n.
func heldByOther(n *corev1.Node, run *Origin, now time.Time) error {
	if run == nil {
		return nil
	}
	rec := noderecord.Read(n, "")
	if holder, held := liveness.HeldBy(rec, run.ID, now); held {
		return &noderecord.HeldError{Node: n.Name, Holder: holder, Heartbeat: rec.Heartbeat, Since: rec.Since}
	}
	return nil
}

// liveness decides which recorded runs still hold their nodes.
var liveness = noderecord.DefaultLiveness

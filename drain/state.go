package drain

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// SetState records the node's state (label, AnnotationDrain and since; for StateBlocked
// and StateFailed, why) in one patch conditional on the node's resourceVersion. With run,
// it writes only while the node is not held by another live run (a HeldError otherwise)
// and records run as the node's. now is the engine's clock.
func SetState(ctx context.Context, c kubernetes.Interface, node, state string, now time.Time, why string, run *noderecord.Run) error {
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
func heldByOther(n *corev1.Node, run *noderecord.Run, now time.Time) error {
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

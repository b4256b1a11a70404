package drain

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// Cordon marks node unschedulable as noderecord.FieldManager. It reports whether the node was
// already cordoned. serverDryRun sends the change with dryRun=All.
func Cordon(ctx context.Context, c kubernetes.Interface, node *corev1.Node, serverDryRun bool) (already bool, err error) {
	return CordonAs(ctx, c, node, serverDryRun, time.Now(), nil)
}

// CordonAs is Cordon that also records the state noderecord.StateCordoned (label and annotations),
// since now, and origin when given, in the same patch.
func CordonAs(ctx context.Context, c kubernetes.Interface, node *corev1.Node, serverDryRun bool, now time.Time, origin *noderecord.Run) (already bool, err error) {
	if node.Spec.Unschedulable {
		return true, nil
	}
	_, err = noderecord.Update(ctx, c.CoreV1(), node.Name, serverDryRun, func(cur *corev1.Node) (map[string]any, error) {
		if already = cur.Spec.Unschedulable; already {
			return nil, nil
		}
		return map[string]any{"metadata": noderecord.StatePatch(noderecord.StateCordoned, now, origin, ""),
			"spec": map[string]any{"unschedulable": true}}, nil
	})
	if err != nil {
		return false, fmt.Errorf("cordon node %s: %w", node.Name, err)
	}
	return already, nil
}

// CordonForDrain writes the resume record and the cordon in one patch, before anything is
// said or evicted: noderecord.AnnotationDrain=draining, and (when the node was schedulable)
// spec.unschedulable=true with noderecord.AnnotationCordoned. The patch carries the node's
// resourceVersion and is retried on a conflict against a fresh read, so a cordon made by
// someone else in between is never taken for ours. It returns the node as written and
// whether it was already cordoned.
func CordonForDrain(ctx context.Context, c kubernetes.Interface, name string, serverDryRun bool) (node *corev1.Node, already bool, err error) {
	return CordonForDrainAs(ctx, c, name, serverDryRun, time.Now(), nil)
}

// CordonForDrainAs is CordonForDrain that also writes the state model (noderecord.LabelState,
// noderecord.AnnotationSince, and origin when given: the run that holds the node from now on, with
// its heartbeat) in the same patch, with now as the time the node started draining. A
// node another live run holds is left alone: the error is a *noderecord.HeldError.
func CordonForDrainAs(ctx context.Context, c kubernetes.Interface, name string, serverDryRun bool, now time.Time, origin *noderecord.Run) (node *corev1.Node, already bool, err error) {
	node, err = noderecord.Update(ctx, c.CoreV1(), name, serverDryRun, func(cur *corev1.Node) (map[string]any, error) {
		already = cur.Spec.Unschedulable
		return cordonDecide(cur, now, origin)
	})
	if err != nil {
		return nil, false, fmt.Errorf("cordon node %s: %w", name, err)
	}
	return node, already, nil
}

// cordonDecide is the cordon of cur with the drain's record (the run that holds the
// node from now on), or a *noderecord.HeldError when another live run holds it.
func cordonDecide(cur *corev1.Node, now time.Time, origin *noderecord.Run) (map[string]any, error) {
	if err := heldByOther(cur, origin, now); err != nil {
		return nil, err
	}
	meta := noderecord.StatePatch(noderecord.StateDraining, now, origin, "")
	patch := map[string]any{"metadata": meta}
	ann := meta["annotations"].(map[string]any)
	if origin != nil && cur.Annotations[noderecord.AnnotationWaiting] == origin.ID {
		ann[noderecord.AnnotationWaiting] = nil // waited for, and taken
	}
	if !cur.Spec.Unschedulable {
		ann[noderecord.AnnotationCordoned] = "true"
		patch["spec"] = map[string]any{"unschedulable": true}
	}
	return patch, nil
}

// UncordonResult says what Uncordon did (or, in a dry run, would do).
type UncordonResult int

// Uncordon outcomes.
const (
	// Uncordoned: the node was made schedulable.
	Uncordoned UncordonResult = iota
	// AlreadySchedulable: nothing to do.
	AlreadySchedulable
	// LeftCordoned: the cordon is someone else's, so the node stays cordoned (this
	// tool's annotations are removed).
	LeftCordoned
)

// DecideUncordon is what uncordon does with node: the real command and both dry runs use
// it, so they agree, and it depends only on the cordon's owner, so it answers the same
// twice.
func DecideUncordon(node *corev1.Node, force bool) UncordonResult {
	switch {
	case !node.Spec.Unschedulable:
		return AlreadySchedulable
	case force || noderecord.CordonedByUs(node):
		return Uncordoned
	}
	return LeftCordoned
}

// Uncordon makes node schedulable if the cordon it carries is this tool's own (or force),
// and removes this tool's record, in one patch carrying the node's resourceVersion. A
// node that changed meanwhile is read again and decided again.
func Uncordon(ctx context.Context, c kubernetes.Interface, node *corev1.Node, force, serverDryRun bool) (UncordonResult, error) {
	var res UncordonResult
	first := true
	err := retry.RetryOnConflict(noderecord.Backoff, func() error {
		if !first {
			cur, err := c.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			node = cur
		}
		first = false
		var err error
		res, err = uncordonOnce(ctx, c, node, force, serverDryRun)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("uncordon node %s: %w", node.Name, err)
	}
	return res, nil
}

func uncordonOnce(ctx context.Context, c kubernetes.Interface, node *corev1.Node, force, serverDryRun bool) (UncordonResult, error) {
	res := DecideUncordon(node, force)
	meta := noderecord.RemovePatch(node)
	if res != Uncordoned && meta == nil {
		return res, nil
	}
	if meta == nil {
		meta = map[string]any{}
	}
	meta["resourceVersion"] = node.ResourceVersion
	patch := map[string]any{"metadata": meta}
	if res == Uncordoned {
		patch["spec"] = map[string]any{"unschedulable": nil}
	}
	_, err := noderecord.Patch(ctx, c.CoreV1(), node.Name, patch, serverDryRun)
	return res, err
}

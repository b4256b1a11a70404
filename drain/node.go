package drain

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	kubectldrain "k8s.io/kubectl/pkg/drain"
	"k8s.io/utils/clock"
)

// Annotations this tool keeps on a node so that uncordon and a re-run after any
// interruption do the right thing.
const (
	// AnnotationCordoned is set ("true") when this tool cordoned a node that was
	// schedulable. Uncordon makes such a node schedulable again; a node cordoned by
	// someone else before the tool touched it stays cordoned.
	AnnotationCordoned = "kubectl-maintenance.io/cordoned"
	// AnnotationDrain records the drain's progress on the node: "draining" or "drained".
	AnnotationDrain = "kubectl-maintenance.io/drain"
)

// Drain states recorded in AnnotationDrain.
const (
	StateDraining = "draining"
	StateDrained  = "drained"
)

// Cordon marks node unschedulable, first recording (AnnotationCordoned) that this tool did
// it, so an interruption between the two steps leaves a record either way. It reports
// whether the node was already cordoned. serverDryRun sends the change with dryRun=All.
func Cordon(ctx context.Context, c kubernetes.Interface, node *corev1.Node, serverDryRun bool) (already bool, err error) {
	if node.Spec.Unschedulable {
		return true, nil
	}
	if err := patchAnnotations(ctx, c, node.Name, map[string]*string{AnnotationCordoned: ptrTo("true")}, serverDryRun); err != nil {
		return false, err
	}
	return false, setUnschedulable(ctx, c, node, true, serverDryRun)
}

// UncordonResult says what Uncordon did.
type UncordonResult int

// Uncordon outcomes.
const (
	// Uncordoned: the node was made schedulable.
	Uncordoned UncordonResult = iota
	// AlreadySchedulable: nothing to do.
	AlreadySchedulable
	// LeftCordoned: the node was cordoned before this tool drained it, so it stays
	// cordoned (its drain annotations are removed).
	LeftCordoned
)

// Uncordon restores a node as it was before this tool touched it: schedulable, unless the
// tool's annotations show it was cordoned by someone else before a drain (then it stays
// cordoned, unless force). A node without the tool's annotations is uncordoned, as kubectl
// uncordon does. The tool's annotations are removed.
func Uncordon(ctx context.Context, c kubernetes.Interface, node *corev1.Node, force, serverDryRun bool) (UncordonResult, error) {
	ann := node.Annotations
	_, drained := ann[AnnotationDrain]
	_, cordonedByUs := ann[AnnotationCordoned]
	result := Uncordoned
	switch {
	case !node.Spec.Unschedulable:
		result = AlreadySchedulable
	case drained && !cordonedByUs && !force:
		result = LeftCordoned
	default:
		if err := setUnschedulable(ctx, c, node, false, serverDryRun); err != nil {
			return 0, err
		}
	}
	if drained || cordonedByUs {
		if err := patchAnnotations(ctx, c, node.Name, map[string]*string{AnnotationCordoned: nil, AnnotationDrain: nil}, serverDryRun); err != nil {
			return 0, err
		}
	}
	return result, nil
}

func setUnschedulable(ctx context.Context, c kubernetes.Interface, node *corev1.Node, desired, serverDryRun bool) error {
	h := kubectldrain.NewCordonHelper(node)
	if !h.UpdateIfRequired(desired) {
		return nil
	}
	err, patchErr := h.PatchOrReplaceWithContext(ctx, c, serverDryRun)
	if patchErr != nil {
		return fmt.Errorf("build patch for node %s: %w", node.Name, patchErr)
	}
	if err != nil {
		verb := "cordon"
		if !desired {
			verb = "uncordon"
		}
		return fmt.Errorf("%s node %s: %w", verb, node.Name, err)
	}
	return nil
}

// SetDrainState records the drain's progress on the node (AnnotationDrain).
func SetDrainState(ctx context.Context, c kubernetes.Interface, node, state string) error {
	return patchAnnotations(ctx, c, node, map[string]*string{AnnotationDrain: &state}, false)
}

// patchAnnotations sets (or, for nil values, removes) annotations with a JSON merge patch,
// which touches only these keys.
func patchAnnotations(ctx context.Context, c kubernetes.Interface, node string, set map[string]*string, serverDryRun bool) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": set}})
	if err != nil {
		return fmt.Errorf("encode annotation patch: %w", err)
	}
	opts := metav1.PatchOptions{}
	if serverDryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	if _, err := c.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, patch, opts); err != nil {
		return fmt.Errorf("annotate node %s: %w", node, err)
	}
	return nil
}

// recordNodeEvent writes a Kubernetes Event on the node (best effort: a failure is only
// logged by the caller).
func recordNodeEvent(ctx context.Context, c kubernetes.Interface, clk clock.Clock, node, eventType, reason, message string) error {
	now := metav1.NewTime(clk.Now())
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{GenerateName: node + ".", Namespace: metav1.NamespaceDefault},
		InvolvedObject: corev1.ObjectReference{Kind: "Node", Name: node, UID: types.UID(node),
			APIVersion: "v1"},
		Reason: reason, Message: message, Type: eventType,
		FirstTimestamp: now, LastTimestamp: now, Count: 1,
		Source:              corev1.EventSource{Component: "kubectl-maintenance"},
		ReportingController: "kubectl-maintenance.io/drain",
	}
	if _, err := c.CoreV1().Events(metav1.NamespaceDefault).Create(ctx, ev, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("record event on node %s: %w", node, err)
	}
	return nil
}

func ptrTo[T any](v T) *T { return &v }

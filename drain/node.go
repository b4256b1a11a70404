package drain

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// Annotations this tool keeps on a node so that a re-run after any interruption does the
// right thing. Whose cordon a node carries is not an annotation: it is read from the
// node's managedFields (see CordonedBy), so a plain "kubectl uncordon" invalidates it.
const (
	// AnnotationCordoned is set ("true") when this tool cordoned a node that was
	// schedulable. It is informational; CordonedByUs decides.
	AnnotationCordoned = "kubectl-maintenance.io/cordoned"
	// AnnotationDrain records the drain's progress on the node: "draining", "drained" or
	// "blocked" (see state.go: the same state is mirrored in LabelState).
	AnnotationDrain = "kubectl-maintenance.io/drain"
)

// Drain states recorded in AnnotationDrain.
const (
	StateDraining = "draining"
	StateDrained  = "drained"
)

// FieldManager is the field manager every write of this tool uses. The manager that owns
// a node's spec.unschedulable is the one that made its cordon.
const FieldManager = "kubectl-maintenance"

// CordonedBy returns the field managers that own node's spec.unschedulable, that is
// whoever set the cordon it carries now ("" entries are skipped).
func CordonedBy(node *corev1.Node) []string {
	var out []string
	for _, mf := range node.ManagedFields {
		if mf.FieldsV1 == nil || mf.Subresource != "" {
			continue
		}
		var fields map[string]map[string]any
		if err := json.Unmarshal(mf.FieldsV1.GetRawBytes(), &fields); err != nil {
			continue
		}
		if _, ok := fields["f:spec"]["f:unschedulable"]; ok && mf.Manager != "" {
			out = append(out, mf.Manager)
		}
	}
	return out
}

// CordonedByUs reports whether node is cordoned and its cordon is this tool's own (the
// only owner of spec.unschedulable is FieldManager). A cordon someone made after
// uncordoning ours is theirs.
func CordonedByUs(node *corev1.Node) bool {
	if !node.Spec.Unschedulable {
		return false
	}
	owners := CordonedBy(node)
	for _, m := range owners {
		if m != FieldManager {
			return false
		}
	}
	return len(owners) > 0
}

// Cordon marks node unschedulable as FieldManager. It reports whether the node was
// already cordoned. serverDryRun sends the change with dryRun=All.
func Cordon(ctx context.Context, c kubernetes.Interface, node *corev1.Node, serverDryRun bool) (already bool, err error) {
	return CordonAs(ctx, c, node, serverDryRun, time.Now(), nil)
}

// CordonAs is Cordon that also records the state StateCordoned (label and annotations),
// since now, and origin when given, in the same patch.
func CordonAs(ctx context.Context, c kubernetes.Interface, node *corev1.Node, serverDryRun bool, now time.Time, origin *Origin) (already bool, err error) {
	if node.Spec.Unschedulable {
		return true, nil
	}
	return false, patchNode(ctx, c, node.Name, map[string]any{"metadata": statePatch(StateCordoned, now, origin, ""),
		"spec": map[string]any{"unschedulable": true}}, serverDryRun)
}

// CordonForDrain writes the resume record and the cordon in one patch, before anything is
// said or evicted: AnnotationDrain=draining, and (when the node was schedulable)
// spec.unschedulable=true with AnnotationCordoned. The patch carries the node's
// resourceVersion and is retried on a conflict against a fresh read, so a cordon made by
// someone else in between is never taken for ours. It returns the node as written and
// whether it was already cordoned.
func CordonForDrain(ctx context.Context, c kubernetes.Interface, name string, serverDryRun bool) (node *corev1.Node, already bool, err error) {
	return CordonForDrainAs(ctx, c, name, serverDryRun, time.Now(), nil)
}

// CordonForDrainAs is CordonForDrain that also writes the state model (LabelState,
// AnnotationSince, and origin when given) in the same patch, with now as the time the
// node started draining.
func CordonForDrainAs(ctx context.Context, c kubernetes.Interface, name string, serverDryRun bool, now time.Time, origin *Origin) (node *corev1.Node, already bool, err error) {
	err = retry.RetryOnConflict(nodeRetry, func() error {
		cur, err := c.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		already = cur.Spec.Unschedulable
		node, err = patchNodeObj(ctx, c, name, cordonPatchOf(cur, now, origin), serverDryRun)
		return err
	})
	if err != nil {
		return nil, false, fmt.Errorf("cordon node %s: %w", name, err)
	}
	return node, already, nil
}

// cordonPatchOf is the cordon of node as known (its resourceVersion: the patch fails
// with a conflict if the node changed since) with the drain's record.
func cordonPatchOf(cur *corev1.Node, now time.Time, origin *Origin) map[string]any {
	meta := statePatch(StateDraining, now, origin, "")
	meta["resourceVersion"] = cur.ResourceVersion
	patch := map[string]any{"metadata": meta}
	if !cur.Spec.Unschedulable {
		meta["annotations"].(map[string]any)[AnnotationCordoned] = "true"
		patch["spec"] = map[string]any{"unschedulable": true}
	}
	return patch
}

// nodeRetry paces the retries of a node patch whose resourceVersion moved meanwhile
// (kwok and kubelets write node status often).
var nodeRetry = wait.Backoff{Steps: 10, Duration: 10 * time.Millisecond, Factor: 2, Jitter: 0.1, Cap: 2 * time.Second}

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
	case force || CordonedByUs(node):
		return Uncordoned
	}
	return LeftCordoned
}

// Uncordon makes node schedulable if the cordon it carries is this tool's own (or force),
// and removes this tool's annotations and state label, in one patch carrying the node's resourceVersion.
// A node that changed meanwhile is read again and decided again.
func Uncordon(ctx context.Context, c kubernetes.Interface, node *corev1.Node, force, serverDryRun bool) (UncordonResult, error) {
	var res UncordonResult
	first := true
	err := retry.RetryOnConflict(nodeRetry, func() error {
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
	remove := map[string]any{}
	for _, k := range StateAnnotations() {
		if _, ok := node.Annotations[k]; ok {
			remove[k] = nil
		}
	}
	_, labelled := node.Labels[LabelState]
	if res != Uncordoned && len(remove) == 0 && !labelled {
		return res, nil
	}
	meta := map[string]any{"resourceVersion": node.ResourceVersion}
	if len(remove) > 0 {
		meta["annotations"] = remove
	}
	if labelled {
		meta["labels"] = map[string]any{LabelState: nil}
	}
	patch := map[string]any{"metadata": meta}
	if res == Uncordoned {
		patch["spec"] = map[string]any{"unschedulable": nil}
	}
	_, err := patchNodeObj(ctx, c, node.Name, patch, serverDryRun)
	return res, err
}

// SetDrainState records the drain's progress on the node (AnnotationDrain, LabelState and
// AnnotationSince; see SetState).
func SetDrainState(ctx context.Context, c kubernetes.Interface, node, state string) error {
	return SetState(ctx, c, node, state, time.Now(), "")
}

func patchNode(ctx context.Context, c kubernetes.Interface, node string, patch map[string]any, serverDryRun bool) error {
	_, err := patchNodeObj(ctx, c, node, patch, serverDryRun)
	return err
}

// patchNodeObj sends a JSON merge patch as FieldManager; it touches only the keys given.
func patchNodeObj(ctx context.Context, c kubernetes.Interface, node string, patch map[string]any, serverDryRun bool) (*corev1.Node, error) {
	data, err := json.Marshal(patch)
	if err != nil {
		return nil, fmt.Errorf("encode patch of node %s: %w", node, err)
	}
	opts := metav1.PatchOptions{FieldManager: FieldManager}
	if serverDryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	n, err := c.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, data, opts)
	if err != nil {
		return nil, fmt.Errorf("patch node %s: %w", node, err)
	}
	return n, nil
}

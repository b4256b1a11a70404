package ownership

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// FieldManager is the field manager of every node write of this package: the same
// manager as the drain engine's cordon, so that "who cordoned this node" can be read from
// the node's managedFields.
const FieldManager = noderecord.FieldManager

// UpdateNode reads the node, computes its new labels, taints and annotations with
// compute, and writes them with a JSON merge patch that carries the node's
// resourceVersion: if anyone wrote the node in between, the API server answers 409 and the
// change is computed again from the fresh node, so no concurrent write is lost. It
// returns the node as written (or as read when nothing changed).
func UpdateNode(ctx context.Context, c kubernetes.Interface, name string, compute func(*corev1.Node) (*Desired, error)) (*corev1.Node, bool, error) {
	return UpdateNodeFrom(ctx, c, nil, name, compute)
}

// UpdateNodeFrom is UpdateNode starting from a node already read (e.g. from an informer's
// cache): the first attempt costs no GET, and only a conflict (the cached copy was stale)
// reads the node again.
func UpdateNodeFrom(ctx context.Context, c kubernetes.Interface, start *corev1.Node, name string, compute func(*corev1.Node) (*Desired, error)) (*corev1.Node, bool, error) {
	var out *corev1.Node
	changed := false
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n := start
		start = nil
		if n == nil {
			var err error
			if n, err = c.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{}); err != nil {
				return fmt.Errorf("get node %s: %w", name, err)
			}
		}
		d, err := compute(n)
		if err != nil {
			return err
		}
		if !d.Changed {
			out, changed = n, false
			return nil
		}
		patch, err := mergePatch(n, d)
		if err != nil {
			return err
		}
		out, err = c.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: FieldManager})
		if err != nil {
			if apierrors.IsConflict(err) {
				return err // RetryOnConflict reads the node again
			}
			return fmt.Errorf("patch node %s: %w", name, err)
		}
		changed = true
		return nil
	})
	return out, changed, err
}

// mergePatch builds the patch from n to d, with n's resourceVersion as precondition.
func mergePatch(n *corev1.Node, d *Desired) ([]byte, error) {
	labels := map[string]*string{}
	for k := range n.Labels {
		if _, ok := d.Labels[k]; !ok {
			labels[k] = nil
		}
	}
	for k, v := range d.Labels {
		if cur, ok := n.Labels[k]; !ok || cur != v {
			labels[k] = &v
		}
	}
	taints := d.Taints
	if taints == nil {
		taints = []corev1.Taint{}
	}
	spec := map[string]any{"taints": taints}
	if d.Unschedulable != nil {
		if *d.Unschedulable {
			spec["unschedulable"] = true
		} else {
			spec["unschedulable"] = nil // removes the field, as kubectl uncordon does
		}
	}
	patch := map[string]any{
		"metadata": map[string]any{
			"resourceVersion": n.ResourceVersion,
			"labels":          labels,
			"annotations":     d.Annotations,
		},
		"spec": spec,
	}
	b, err := json.Marshal(patch)
	if err != nil {
		return nil, fmt.Errorf("encode patch for node %s: %w", n.Name, err)
	}
	return b, nil
}

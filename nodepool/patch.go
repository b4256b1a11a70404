package nodepool

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// UpdateNode reads the node, computes its new labels, taints and annotations with
// compute, and writes them with a JSON merge patch that carries the node's
// resourceVersion: if anyone wrote the node in between, the API server answers 409 and the
// change is computed again from the fresh node, so no concurrent write is lost. It
// returns the node as written (or as read when nothing changed).
func UpdateNode(ctx context.Context, c kubernetes.Interface, name string, compute func(*corev1.Node) (*Desired, error)) (*corev1.Node, bool, error) {
	var out *corev1.Node
	changed := false
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := c.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("get node %s: %w", name, err)
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
		out, err = c.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
		if err != nil {
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
	patch := map[string]any{
		"metadata": map[string]any{
			"resourceVersion": n.ResourceVersion,
			"labels":          labels,
			"annotations":     d.Annotations,
		},
		"spec": map[string]any{"taints": taints},
	}
	b, err := json.Marshal(patch)
	if err != nil {
		return nil, fmt.Errorf("encode patch for node %s: %w", n.Name, err)
	}
	return b, nil
}

package reconciler

import (
	"context"
	"fmt"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/ownership"
)

// RuntimeClassFor is the RuntimeClass of a pool with spec.runtimeClass: named after the
// pool, its scheduling sends pods to the pool's nodes (role label and labels) and
// tolerates the pool's taints, so runtimeClassName alone picks the pool. Its owner
// reference to the NodePool lets the garbage collector remove it with the pool.
func RuntimeClassFor(p *v1alpha1.NodePool) *nodev1.RuntimeClass {
	var tolerations []corev1.Toleration
	for _, t := range p.Spec.Taints {
		tolerations = append(tolerations, corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOpEqual, Value: t.Value, Effect: t.Effect})
	}
	rc := &nodev1.RuntimeClass{
		ObjectMeta: metav1.ObjectMeta{
			Name:   p.Name,
			Labels: map[string]string{PoolLabel: p.Name},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: v1alpha1.GroupVersion.String(), Kind: "NodePool", Name: p.Name, UID: p.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Handler:    p.Spec.RuntimeClass.Handler,
		Overhead:   p.Spec.RuntimeClass.Overhead,
		Scheduling: &nodev1.Scheduling{NodeSelector: ownership.PoolLabels(p), Tolerations: tolerations},
	}
	return rc
}

// PoolLabel marks objects made for a pool (RuntimeClasses).
const PoolLabel = "maintenance.kubectl-maintenance.io/pool"

// syncRuntimeClass makes the pool's RuntimeClass match its spec: created, updated,
// recreated when the (immutable) handler changed, or deleted when the spec has none. A
// RuntimeClass of that name that the pool does not own is left alone and reported.
func syncRuntimeClass(ctx context.Context, c client.Client, p *v1alpha1.NodePool) error {
	cur := &nodev1.RuntimeClass{}
	err := c.Get(ctx, client.ObjectKey{Name: p.Name}, cur)
	exists := err == nil
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("get runtimeclass %s: %w", p.Name, err)
	}
	if exists && !metav1.IsControlledBy(cur, p) {
		return fmt.Errorf("runtimeclass %s exists and does not belong to pool %s; rename one of them", p.Name, p.Name)
	}
	if p.Spec.RuntimeClass == nil {
		if exists {
			if err := c.Delete(ctx, cur); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("delete runtimeclass %s: %w", p.Name, err)
			}
		}
		return nil
	}
	want := RuntimeClassFor(p)
	switch {
	case !exists:
		if err := c.Create(ctx, want); err != nil {
			return fmt.Errorf("create runtimeclass %s: %w", p.Name, err)
		}
	case cur.Handler != want.Handler:
		if err := c.Delete(ctx, cur); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("replace runtimeclass %s: %w", p.Name, err)
		}
		if err := c.Create(ctx, want); err != nil {
			return fmt.Errorf("replace runtimeclass %s: %w", p.Name, err)
		}
	case !reflect.DeepEqual(cur.Scheduling, want.Scheduling) || !reflect.DeepEqual(cur.Overhead, want.Overhead):
		cur.Scheduling, cur.Overhead = want.Scheduling, want.Overhead
		if err := c.Update(ctx, cur); err != nil {
			return fmt.Errorf("update runtimeclass %s: %w", p.Name, err)
		}
	}
	return nil
}

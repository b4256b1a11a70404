package maintenance

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// SetPaused sets spec.paused of Maintenance name (a merge patch: nothing else changes).
// Paused, its run stops taking new evictions and nodes (nodes keep their state); resumed,
// it goes on from the nodes' records. The error wraps the API server's (NotFound too).
func SetPaused(ctx context.Context, c client.Client, name string, paused bool) error {
	patch := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"spec":{"paused":%t}}`, paused))
	if err := c.Patch(ctx, &v1alpha1.Maintenance{ObjectMeta: metav1.ObjectMeta{Name: name}}, patch); err != nil {
		return fmt.Errorf("patch maintenance/%s: %w", name, err)
	}
	return nil
}

// Cancel deletes Maintenance name: the controller stops its run through the finalizer
// and leaves its nodes cordoned with their state. The error wraps the API server's.
func Cancel(ctx context.Context, c client.Client, name string) error {
	if err := c.Delete(ctx, &v1alpha1.Maintenance{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		return fmt.Errorf("delete maintenance/%s: %w", name, err)
	}
	return nil
}

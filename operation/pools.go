package operation

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/reconciler"
)

// The pools' actions besides moves and rollouts: one pass of the reconciler, deleting a
// pool (what the finalizer does, so no controller is needed). Installing the CRDs is
// package install's.

func (o *Operator) needPools() error {
	if o.Pools == nil {
		return errors.New("operation: a NodePool client is required")
	}
	return nil
}

// SyncPools applies the named pools (every pool when none is named; each must exist) to
// their nodes and RuntimeClass once, and returns how many it synced.
func (o *Operator) SyncPools(ctx context.Context, names []string) (int, error) {
	if err := o.needPools(); err != nil {
		return 0, err
	}
	r := &reconciler.Reconciler{Client: o.Pools, Kube: o.Kube}
	if len(names) > 0 {
		r.Only = map[string]bool{}
		for _, n := range names {
			if _, err := nodepool.GetPool(ctx, o.Pools, n); err != nil {
				return 0, err
			}
			r.Only[n] = true
		}
	}
	n, err := r.SyncAll(ctx)
	if nodepool.IsNotInstalled(err) {
		return n, nodepool.ErrNotInstalled
	}
	return n, err
}

// SyncPool applies one pool to its nodes and returns it as it is afterwards.
func (o *Operator) SyncPool(ctx context.Context, name string) (*v1alpha1.NodePool, error) {
	if err := o.needPools(); err != nil {
		return nil, err
	}
	if _, err := (&reconciler.Reconciler{Client: o.Pools, Kube: o.Kube}).Sync(ctx, name); err != nil {
		return nil, err
	}
	return nodepool.GetPool(ctx, o.Pools, name)
}

// DeletePool deletes pool name and removes from its nodes exactly what the pool applied,
// returning each node's change. A dry run changes nothing and returns what it would
// remove. A controller that cleaned the nodes first leaves no change to report.
func (o *Operator) DeletePool(ctx context.Context, name string, dryRun bool) ([]reconciler.NodeChange, error) {
	if err := o.needPools(); err != nil {
		return nil, err
	}
	p, err := nodepool.GetPool(ctx, o.Pools, name)
	if err != nil {
		return nil, err
	}
	r := &reconciler.Reconciler{Client: o.Pools, Kube: o.Kube}
	if dryRun {
		return r.Cleanup(ctx, p, true)
	}
	if err := o.Pools.Delete(ctx, p); err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("delete pool %s: %w", p.Name, err)
	}
	// Clean the nodes now (the finalizer's work), so no controller is needed.
	err = o.Pools.Get(ctx, types.NamespacedName{Name: p.Name}, p)
	switch {
	case err == nil && !p.DeletionTimestamp.IsZero():
		return r.Cleanup(ctx, p, false)
	case err != nil && !apierrors.IsNotFound(err):
		return nil, fmt.Errorf("get pool %s: %w", p.Name, err)
	}
	return nil, nil
}

package operation

import (
	"context"
	"errors"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/reconciler"
)

// The pools' actions besides moves and rollouts: one pass of the reconciler, deleting a
// pool (what the finalizer does, so no controller is needed) and installing the CRDs.

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

// InstalledCRD is what InstallCRD did to one CRD: its name and "created", "configured"
// or "unchanged".
type InstalledCRD struct {
	Name, Verb string
}

// InstallCRD creates or updates the CRDs of manifests (YAML; crd.All() are the
// project's), in order, each waiting until it is Established, and returns what it did to
// each. It stops at the first that fails, returning those done before it.
func InstallCRD(ctx context.Context, c client.Client, manifests [][]byte) ([]InstalledCRD, error) {
	var done []InstalledCRD
	for _, m := range manifests {
		name, verb, err := installCRD(ctx, c, m)
		if err != nil {
			return done, err
		}
		done = append(done, InstalledCRD{Name: name, Verb: verb})
	}
	return done, nil
}

// installCRD creates or updates the CRD of manifest and waits until it is Established. It
// returns the CRD's name and "created", "configured" or "unchanged".
func installCRD(ctx context.Context, c client.Client, manifest []byte) (name, verb string, err error) {
	want := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(manifest, want); err != nil {
		return "", "", fmt.Errorf("decode an embedded CRD: %w", err)
	}
	name = want.Name
	cur := &apiextensionsv1.CustomResourceDefinition{}
	verb = "created"
	err = c.Get(ctx, types.NamespacedName{Name: want.Name}, cur)
	switch {
	case apierrors.IsNotFound(err):
		if err := c.Create(ctx, want); err != nil {
			return "", "", fmt.Errorf("create the CRD %s: %w", name, err)
		}
	case err != nil:
		return "", "", fmt.Errorf("get the CRD %s: %w", name, err)
	default:
		// The stored spec carries the API server's defaults, so comparing it with the
		// embedded one would always differ. The server knows: an update that changes the
		// spec (after defaulting) raises metadata.generation; a no-op update writes nothing.
		gen := cur.Generation
		cur.Spec = want.Spec
		if err := c.Update(ctx, cur); err != nil {
			return "", "", fmt.Errorf("update the CRD %s: %w", name, err)
		}
		verb = "unchanged"
		if cur.Generation != gen {
			verb = "configured"
		}
	}
	// Establishing takes the API server a moment; there is no watch in controller-runtime's
	// plain client, so look every 100 ms for at most 30 s.
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		got := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, types.NamespacedName{Name: want.Name}, got); err != nil {
			return false, nil
		}
		for _, cond := range got.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return "", "", fmt.Errorf("wait for the CRD %s to be established: %w", name, err)
	}
	return name, verb, nil
}

package nodepool

import (
	"context"
	"fmt"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
)

// Get reads the pools named, in the order given, or every pool sorted by name when none
// is named. A name that does not exist is returned in missing (the others are read);
// ErrNotInstalled when the resource is not.
func Get(ctx context.Context, c client.Reader, names []string) (pools []v1alpha1.NodePool, missing []string, err error) {
	if len(names) == 0 {
		list := &v1alpha1.NodePoolList{}
		if err := c.List(ctx, list); err != nil {
			if IsNotInstalled(err) {
				return nil, nil, ErrNotInstalled
			}
			return nil, nil, fmt.Errorf("list pools: %w", err)
		}
		sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
		return list.Items, nil, nil
	}
	for _, name := range names {
		p := &v1alpha1.NodePool{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, p); err != nil {
			switch {
			case IsNotInstalled(err):
				return nil, nil, ErrNotInstalled
			case apierrors.IsNotFound(err):
				missing = append(missing, name)
				continue
			}
			return nil, nil, fmt.Errorf("get pool %s: %w", name, err)
		}
		pools = append(pools, *p)
	}
	return pools, missing, nil
}

package operation

import (
	"context"
	"fmt"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
)

// resolve returns the request's nodes (Nodes as given, deduplicated, each read once so
// that a name that is no node is a usage error found before anything changes; else the
// nodes Selector or Pool selects, sorted) and, for a Pool request, the pool (read once).
// Nothing selected is a UsageError. It is the one node resolution of every front end.
func (o *Operator) resolve(ctx context.Context, req Request) ([]string, *v1alpha1.NodePool, error) {
	names, pool, _, err := o.resolveNodes(ctx, req)
	return names, pool, err
}

// resolveNodes is resolve that also returns the nodes Karpenter is disrupting among them
// (taint karpenter.sh/disrupted), read from the same GETs or list.
func (o *Operator) resolveNodes(ctx context.Context, req Request) ([]string, *v1alpha1.NodePool, map[string]bool, error) {
	var pool *v1alpha1.NodePool
	if req.Pool != "" {
		if o.Pools == nil {
			return nil, nil, nil, fmt.Errorf("operation: pool %s: a NodePool client is required", req.Pool)
		}
		var err error
		if pool, err = nodepool.GetPool(ctx, o.Pools, req.Pool); err != nil {
			return nil, nil, nil, err
		}
	}
	disrupting := map[string]bool{}
	if len(req.Nodes) > 0 {
		seen := map[string]bool{}
		var names []string
		for _, n := range req.Nodes {
			if seen[n] {
				continue
			}
			seen[n] = true
			node, err := o.Kube.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{})
			if err != nil {
				if apierrors.IsNotFound(err) {
					return nil, nil, nil, &drain.NodeNotFoundError{Name: n}
				}
				return nil, nil, nil, fmt.Errorf("get node %s: %w", n, err)
			}
			if drain.Disrupting(node) {
				disrupting[n] = true
			}
			names = append(names, n)
		}
		return names, pool, disrupting, nil
	}
	sel := req.Selector
	if pool != nil {
		sel = nodepool.RoleLabel(pool.Name)
	}
	if sel == "" {
		return nil, nil, nil, usagef("no nodes given: name them, or give a selector or a pool")
	}
	if _, err := labels.Parse(sel); err != nil {
		return nil, nil, nil, usagef("invalid selector %q: %v", sel, err)
	}
	list, err := o.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("list nodes matching %q: %w", sel, err)
	}
	names := make([]string, len(list.Items))
	for i := range list.Items {
		names[i] = list.Items[i].Name
		if drain.Disrupting(&list.Items[i]) {
			disrupting[names[i]] = true
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		if pool != nil {
			return nil, nil, nil, usagef("pool %q has no nodes", pool.Name)
		}
		return nil, nil, nil, usagef("no nodes match selector %q", sel)
	}
	return names, pool, disrupting, nil
}

// Nodes returns the nodes req acts on (Nodes as given, deduplicated; else the nodes
// Selector or Pool selects, sorted), as Plan and Run resolve them. Nothing selected is a
// UsageError.
func (o *Operator) Nodes(ctx context.Context, req Request) ([]string, error) {
	names, _, err := o.resolve(ctx, req)
	return names, err
}

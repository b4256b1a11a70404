package operation

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
)

// resolve returns the request's nodes and, for a Pool request, the pool (read once). The
// nodes are Nodes as given, deduplicated, each read once (namedNodes), so that a name
// that is no node is a usage error found before anything changes; else the nodes Selector
// or Pool selects, sorted. Nothing selected is a UsageError. It is the one node
// resolution of every front end.
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
		names, err := o.namedNodes(ctx, req.Nodes, disrupting)
		return names, pool, disrupting, err
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

// getsUpTo is how many named nodes are read one GET each; more are found in one list of
// every node (100 names were 100 GETs, 0.3 s and 100 of the client's burst before the
// first cordon; the drain's plan lists every node anyway).
const getsUpTo = 10

// namedNodes reads the named nodes (deduplicated, in the order given) and marks those
// Karpenter is disrupting; a name that is no node is a NodeNotFoundError.
func (o *Operator) namedNodes(ctx context.Context, given []string, disrupting map[string]bool) ([]string, error) {
	seen := map[string]bool{}
	var names []string
	for _, n := range given {
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	get := func(n string) (*corev1.Node, error) {
		node, err := o.Kube.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, &drain.NodeNotFoundError{Name: n}
		}
		if err != nil {
			return nil, fmt.Errorf("get node %s: %w", n, err)
		}
		return node, nil
	}
	if len(names) > getsUpTo {
		list, err := o.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("list nodes: %w", err)
		}
		byName := make(map[string]*corev1.Node, len(list.Items))
		for i := range list.Items {
			byName[list.Items[i].Name] = &list.Items[i]
		}
		get = func(n string) (*corev1.Node, error) {
			if node := byName[n]; node != nil {
				return node, nil
			}
			return nil, &drain.NodeNotFoundError{Name: n}
		}
	}
	for _, n := range names {
		node, err := get(n)
		if err != nil {
			return nil, err
		}
		if drain.Disrupting(node) {
			disrupting[n] = true
		}
	}
	return names, nil
}

// Nodes returns the nodes req acts on (Nodes as given, deduplicated; else the nodes
// Selector or Pool selects, sorted), as Plan and Run resolve them. Nothing selected is a
// UsageError.
func (o *Operator) Nodes(ctx context.Context, req Request) ([]string, error) {
	names, _, err := o.resolve(ctx, req)
	return names, err
}

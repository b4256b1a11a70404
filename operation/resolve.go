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

// resolve returns the request's nodes and, for a Pool request, the pool (read once): the
// nodes Nodes names, deduplicated, each read once (namedNodes), so that a name that is no
// node is a usage error found before anything changes; else the nodes Selector or Pool
// selects, sorted. Nothing selected is a UsageError. It is the one node resolution of
// every front end; what it read (the nodes, the pool, which nodes Karpenter is
// disrupting) is carried on to the run.
func (o *Operator) resolve(ctx context.Context, req Request) (*Resolved, error) {
	rz := &Resolved{disrupting: map[string]bool{}, objects: map[string]*corev1.Node{}}
	if req.Pool != "" {
		if o.Pools == nil {
			return nil, fmt.Errorf("operation: pool %s: a NodePool client is required", req.Pool)
		}
		var err error
		if rz.pool, err = nodepool.GetPool(ctx, o.Pools, req.Pool); err != nil {
			return nil, err
		}
	}
	if len(req.Nodes) > 0 {
		return rz, o.namedNodes(ctx, req.Nodes, rz)
	}
	sel := req.Selector
	if rz.pool != nil {
		sel = nodepool.RoleLabel(rz.pool.Name)
	}
	if sel == "" {
		return nil, usagef("no nodes given: name them, or give a selector or a pool")
	}
	if _, err := labels.Parse(sel); err != nil {
		return nil, usagef("invalid selector %q: %v", sel, err)
	}
	list, err := o.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("list nodes matching %q: %w", sel, err)
	}
	for i := range list.Items {
		rz.add(&list.Items[i])
	}
	sort.Strings(rz.Nodes)
	if len(rz.Nodes) == 0 {
		if rz.pool != nil {
			return nil, usagef("pool %q has no nodes", rz.pool.Name)
		}
		return nil, usagef("no nodes match selector %q", sel)
	}
	return rz, nil
}

// add records one node the resolution read.
func (rz *Resolved) add(n *corev1.Node) {
	rz.Nodes = append(rz.Nodes, n.Name)
	rz.objects[n.Name] = n
	if drain.Disrupting(n) {
		rz.disrupting[n.Name] = true
	}
}

// getsUpTo is how many named nodes are read one GET each; more are found in one list of
// every node (100 names were 100 GETs, 0.3 s and 100 of the client's burst before the
// first cordon; the drain's plan lists every node anyway).
const getsUpTo = 10

// namedNodes reads the named nodes (deduplicated, in the order given) into rz; a name
// that is no node is a NodeNotFoundError.
func (o *Operator) namedNodes(ctx context.Context, given []string, rz *Resolved) error {
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
			return fmt.Errorf("list nodes: %w", err)
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
			return err
		}
		rz.add(node)
	}
	return nil
}

// Resolved is what a request resolved to (Resolve): its nodes, the pool of a pool request
// and the nodes Karpenter is disrupting among them. Set as Request.Resolved, Run carries
// the request out on these without reading the nodes again.
type Resolved struct {
	// Nodes are the nodes, as Plan and Run act on them.
	Nodes      []string
	pool       *v1alpha1.NodePool
	disrupting map[string]bool
	// objects are the nodes as read: a move plans from them instead of reading each
	// node again.
	objects map[string]*corev1.Node
}

// Resolve returns the nodes req acts on (Nodes as given, deduplicated, each checked to
// exist; else the nodes Selector or Pool selects, sorted), as Plan and Run resolve them:
// a caller that must know them first (the Maintenance controller, to see who else holds
// them) hands the answer to Run in Request.Resolved. Nothing selected is a UsageError.
func (o *Operator) Resolve(ctx context.Context, req Request) (*Resolved, error) {
	if err := o.check(&req); err != nil {
		return nil, err
	}
	return o.resolve(ctx, req)
}

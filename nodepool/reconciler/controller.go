package reconciler

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/ownership"
)

// nodePoolsIndex indexes cached nodes by the pools they concern (role labels and
// ownership records), so a reconcile reads exactly its pool's nodes from the cache.
const nodePoolsIndex = "nodepool.kubectl-maintenance.io/pools"

// CacheNodes reads a pool's nodes from a manager's cache through nodePoolsIndex: no API
// request.
type CacheNodes struct{ Reader client.Reader }

// PoolNodes implements NodeSource.
func (c CacheNodes) PoolNodes(ctx context.Context, pool string) ([]*corev1.Node, error) {
	list := &corev1.NodeList{}
	if err := c.Reader.List(ctx, list, client.MatchingFields{nodePoolsIndex: pool}); err != nil {
		return nil, fmt.Errorf("list the nodes of pool %s from the cache: %w", pool, err)
	}
	out := make([]*corev1.Node, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// poolsConcerned are the pools a node is a member of or carries a record of.
func poolsConcerned(n client.Object) []string {
	seen := map[string]bool{}
	var out []string
	for k := range n.GetLabels() {
		if p, ok := strings.CutPrefix(k, nodepool.RoleLabelPrefix); ok && p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for k := range n.GetAnnotations() {
		if p, ok := strings.CutPrefix(k, ownership.RecordAnnotationPrefix); ok && p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// NodeChanged is the predicate of the controller's node watch: a node matters when its
// role labels, the labels its pools recorded, its taints, its ownership records or its
// schedulability change. Heartbeats (status, leases) and everything else don't.
func NodeChanged(oldNode, newNode *corev1.Node) bool {
	if oldNode.Spec.Unschedulable != newNode.Spec.Unschedulable || !reflect.DeepEqual(poolTaints(oldNode), poolTaints(newNode)) {
		return true
	}
	recordKeys := func(n *corev1.Node) map[string]string {
		out := map[string]string{}
		for k, v := range n.Annotations {
			if strings.HasPrefix(k, ownership.RecordAnnotationPrefix) {
				out[k] = v
			}
		}
		return out
	}
	or, nr := recordKeys(oldNode), recordKeys(newNode)
	if !reflect.DeepEqual(or, nr) {
		return true
	}
	watched := map[string]bool{}
	for _, n := range []*corev1.Node{oldNode, newNode} {
		for k := range n.Labels {
			if strings.HasPrefix(k, nodepool.RoleLabelPrefix) {
				watched[k] = true
			}
		}
		if recs, err := ownership.Records(n); err == nil {
			for _, r := range recs {
				for k := range r.Labels {
					watched[k] = true
				}
			}
		}
	}
	for k := range watched {
		ov, oo := oldNode.Labels[k]
		nv, no := newNode.Labels[k]
		if oo != no || ov != nv {
			return true
		}
	}
	return false
}

// poolTaints are the node's taints a pool may own: not the node.kubernetes.io/ taints
// Kubernetes keeps (not-ready, unreachable, unschedulable, ...), which come and go with
// the node's health.
func poolTaints(n *corev1.Node) []corev1.Taint {
	var out []corev1.Taint
	for _, t := range n.Spec.Taints {
		if !strings.HasPrefix(t.Key, "node.kubernetes.io/") {
			out = append(out, t)
		}
	}
	return out
}

// SetupWithManager runs the reconciler in mgr, reading pools, RuntimeClasses and nodes
// from the manager's cache. A node event queues the pools the node concerns, and only
// when NodeChanged says it matters.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &corev1.Node{}, nodePoolsIndex, func(o client.Object) []string {
		return poolsConcerned(o)
	}); err != nil {
		return fmt.Errorf("index nodes by pool: %w", err)
	}
	if r.Nodes == nil {
		r.Nodes = CacheNodes{Reader: mgr.GetCache()}
	}
	nodePredicate := predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, ok1 := e.ObjectOld.(*corev1.Node)
			n, ok2 := e.ObjectNew.(*corev1.Node)
			return !ok1 || !ok2 || NodeChanged(o, n)
		},
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
	only := predicate.NewPredicateFuncs(func(o client.Object) bool { return len(r.Only) == 0 || r.Only[o.GetName()] })
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.NodePool{}, builder.WithPredicates(only)).
		Owns(&nodev1.RuntimeClass{}).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			var out []reconcile.Request
			for _, name := range poolsConcerned(o) {
				if len(r.Only) == 0 || r.Only[name] {
					out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: name}})
				}
			}
			return out
		}), builder.WithPredicates(nodePredicate)).
		Complete(r)
}

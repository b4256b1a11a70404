package roll

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/ownership"
)

// Plan validates a move of nodes to pool to (from the pools in from, or, when from is
// empty, every pool of the node that a NodePool or the node's ownership record covers)
// and computes each node's exact change, changing nothing. A node already in the target
// pool, with no move recorded, is Done. A target RuntimeClass handler the node does not
// list stops the plan (a HandlerError) unless AllowMissingHandler.
func (m *Mover) Plan(ctx context.Context, nodes []string, to string, from []string) ([]*NodeMove, *v1alpha1.NodePool, error) {
	target, err := nodepool.GetPool(ctx, m.Pools, to)
	if err != nil {
		return nil, nil, err
	}
	for _, f := range from {
		if f == to {
			return nil, nil, nodepool.Usagef("--from and --to are both %q", to)
		}
		if _, err := nodepool.GetPool(ctx, m.Pools, f); err != nil {
			return nil, nil, err
		}
	}
	pools, err := nodepool.ListPools(ctx, m.Pools)
	if err != nil {
		return nil, nil, err
	}
	var out []*NodeMove
	var missing []string
	for _, name := range nodes {
		n, err := m.node(ctx, name)
		if err != nil {
			return nil, nil, err
		}
		mv := &NodeMove{Node: name, To: to}
		out = append(out, mv)
		current := nodepool.PoolsOf(n)
		st, moving := nodepool.ReadMoveState(n)
		switch {
		case moving && st.To == to:
			mv.Resume, mv.From = true, st.From
		case slices.Contains(current, to):
			mv.Done = true
			continue
		case len(from) > 0:
			for _, f := range from {
				if !slices.Contains(current, f) {
					return nil, nil, nodepool.Usagef("node %s is not in pool %s (it is in %v)", name, f, current)
				}
			}
			mv.From = from
		default:
			mv.From, mv.Kept = ownedPools(n, pools)
		}
		if rc := target.Spec.RuntimeClass; rc != nil && !listsHandler(n, rc.Handler) {
			if !m.AllowMissingHandler {
				missing = append(missing, name)
			} else {
				mv.Warnings = append(mv.Warnings, fmt.Sprintf("node %s does not list runtime handler %q in status.runtimeHandlers: pods of RuntimeClass %s may fail to start there (--allow-missing-handler)", name, rc.Handler, target.Name))
			}
		}
		d, err := m.compute(n, target, mv.From, pools)
		if err != nil {
			return nil, nil, err
		}
		mv.Diff = ownership.Diff(n, d)
		if added := ownership.NewNoExecute(n.Spec.Taints, d.Taints); len(added) > 0 {
			pods, err := ownership.PodsOnNode(ctx, m.Kube, name)
			if err != nil {
				return nil, nil, err
			}
			// Ordinary pods are drained before the taint is written; DaemonSet and mirror
			// pods stay through a drain, and the taint removes them.
			mv.Removed = ownership.NoExecuteVictims(pods, added).Named
		}
	}
	if len(missing) > 0 {
		return nil, nil, &HandlerError{Pool: target.Name, Handler: target.Spec.RuntimeClass.Handler, Nodes: missing}
	}
	return out, target, nil
}

// HandlerError stops a move to a pool whose RuntimeClass handler some nodes don't list in
// status.runtimeHandlers: pods that pick the pool by runtimeClassName would fail to start
// there. Nothing was changed.
type HandlerError struct {
	Pool, Handler string
	Nodes         []string
}

func (e *HandlerError) Error() string {
	return fmt.Sprintf("pool %s runs RuntimeClass handler %q, which node(s) %s do not list in status.runtimeHandlers; nothing was changed (fix the nodes, or give --allow-missing-handler)",
		e.Pool, e.Handler, strings.Join(e.Nodes, ", "))
}

// Blocked marks a HandlerError as blocked by policy.
func (e *HandlerError) Blocked() bool { return true }

// ownedPools splits the node's role labels: the pools a NodePool or the node's ownership
// record covers (the move takes the node out of those), and the others, which no pool
// owns (e.g. node-role.kubernetes.io/worker set by the installer): the move leaves them.
func ownedPools(n *corev1.Node, pools map[string]*v1alpha1.NodePool) (owned, kept []string) {
	recs, _ := ownership.Records(n)
	for _, p := range nodepool.PoolsOf(n) {
		_, exists := pools[p]
		_, recorded := recs[p]
		if exists || recorded {
			owned = append(owned, p)
		} else {
			kept = append(kept, nodepool.RoleLabel(p))
		}
	}
	return owned, kept
}

// compute is the node after the move: the target and every pool it stays in applied,
// the pools it leaves removed (what they applied, and their role labels: leaving a pool
// is what the user asked for).
func (m *Mover) compute(n *corev1.Node, target *v1alpha1.NodePool, from []string, pools map[string]*v1alpha1.NodePool) (*ownership.Desired, error) {
	apply := []*v1alpha1.NodePool{target}
	for _, name := range nodepool.PoolsOf(n) {
		if name == target.Name || slices.Contains(from, name) {
			continue
		}
		if p, ok := pools[name]; ok {
			apply = append(apply, p)
		}
	}
	d, err := ownership.Compute(n, apply, from)
	if err != nil {
		return nil, err
	}
	for _, f := range from {
		if _, ok := d.Labels[nodepool.RoleLabel(f)]; ok {
			delete(d.Labels, nodepool.RoleLabel(f))
			d.Changed = true
		}
	}
	return d, nil
}

// node is the node as Known has it, else read.
func (m *Mover) node(ctx context.Context, name string) (*corev1.Node, error) {
	if n := m.Known[name]; n != nil {
		return n, nil
	}
	n, err := m.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nodepool.Usagef("node %q not found", name)
	}
	if err != nil {
		return nil, fmt.Errorf("get node %s: %w", name, err)
	}
	return n, nil
}

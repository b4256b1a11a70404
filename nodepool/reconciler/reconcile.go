package reconciler

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/ownership"
)

// Finalizer lets a deleted pool clean its nodes before it goes.
const Finalizer = "maintenance.kubectl-maintenance.io/cleanup"

// NodeSource gives the nodes a pool concerns: its members (role label) and the nodes
// that still carry its ownership record.
type NodeSource interface {
	PoolNodes(ctx context.Context, pool string) ([]*corev1.Node, error)
}

// Reconciler keeps every member node and the RuntimeClass of a pool in line with the
// pool's spec, and cleans the nodes when the pool is deleted. "pool sync" (one pass) and
// "pool controller" (a manager, reading from its informers' cache) run this same code.
type Reconciler struct {
	// Client reads and writes NodePools and RuntimeClasses.
	Client client.Client
	// Kube patches nodes and lists pods (only when a NoExecute taint is to be added).
	Kube kubernetes.Interface
	// Nodes reads nodes; nil lists them from the API (one list per reconcile).
	Nodes NodeSource
	// Only, when not empty, restricts the reconciler to these pools.
	Only map[string]bool
	// HeldBackRetry is how soon a pool whose NoExecute taint is held back looks again
	// (pods leaving a node are not watched). Default 1 minute.
	HeldBackRetry time.Duration
	// AutoRollout, when set, rolls a held-back NoExecute taint out by itself (pool
	// controller --rollout) instead of waiting for pool sync --rollout.
	AutoRollout Trigger
}

// Trigger starts a pool's NoExecute rollout unless one runs already; it never blocks
// (operation.AutoRollout: only the operations layer runs moves and rollouts).
type Trigger interface{ Trigger(pool string) }

// NodeChange is what a reconcile (or a pool's cleanup) did, or would do, to one node.
type NodeChange struct {
	Node string
	Diff []string
}

// Reconcile brings one pool's nodes and RuntimeClass to its spec and writes its status
// when it changed. A conflict or a held-back NoExecute taint is reported in the status
// and returned as a terminal error (no retry loop: the next change of the pool or of a
// node retries; a held-back taint looks again after HeldBackRetry).
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	res, err := r.Sync(ctx, req.Name)
	var de *DegradedError
	switch {
	case errors.As(err, &de) && res.RequeueAfter > 0:
		return res, nil // held back: the status says why; look again later
	case errors.As(err, &de):
		return res, reconcile.TerminalError(err)
	}
	return res, err
}

// Sync is Reconcile for one pool by name, returning a DegradedError as it is (the
// commands' one-pass sync).
func (r *Reconciler) Sync(ctx context.Context, name string) (reconcile.Result, error) {
	req := reconcile.Request{NamespacedName: types.NamespacedName{Name: name}}
	if len(r.Only) > 0 && !r.Only[req.Name] {
		return reconcile.Result{}, nil
	}
	p := &v1alpha1.NodePool{}
	if err := r.Client.Get(ctx, req.NamespacedName, p); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !p.DeletionTimestamp.IsZero() {
		_, err := r.cleanup(ctx, p, false)
		return reconcile.Result{}, err
	}
	if !controllerutil.ContainsFinalizer(p, Finalizer) {
		controllerutil.AddFinalizer(p, Finalizer)
		if err := r.Client.Update(ctx, p); err != nil {
			return reconcile.Result{}, fmt.Errorf("add finalizer to pool %s: %w", p.Name, err)
		}
	}
	nodes, err := r.nodes().PoolNodes(ctx, p.Name)
	if err != nil {
		return reconcile.Result{}, err
	}
	st := &poolState{}
	var apiErrs []error
	for _, n := range nodes {
		_, member := n.Labels[nodepool.RoleLabel(p.Name)]
		var err error
		switch {
		case member:
			st.members++
			if n.Spec.Unschedulable {
				st.inMaintenance++
			}
			err = r.applyTo(ctx, n, p, st)
		default:
			// The role label was removed by hand: take back what the pool applied.
			_, _, err = ownership.UpdateNodeFrom(ctx, r.Kube, n, n.Name, func(n *corev1.Node) (*ownership.Desired, error) {
				return ownership.Compute(n, nil, []string{p.Name})
			})
		}
		if err != nil {
			if !st.note(err) {
				apiErrs = append(apiErrs, err)
			}
		}
	}
	if err := syncRuntimeClass(ctx, r.Client, p); err != nil {
		st.problems = append(st.problems, err.Error())
	}
	if err := r.writeStatus(ctx, p, st); err != nil {
		apiErrs = append(apiErrs, err)
	}
	if len(apiErrs) > 0 {
		return reconcile.Result{}, errors.Join(apiErrs...)
	}
	res := reconcile.Result{}
	if st.heldBack > 0 && r.AutoRollout != nil {
		r.AutoRollout.Trigger(p.Name)
	}
	if st.heldBack > 0 {
		res.RequeueAfter = r.HeldBackRetry
		if res.RequeueAfter == 0 {
			res.RequeueAfter = time.Minute
		}
	}
	if len(st.problems) > 0 {
		return res, &DegradedError{Pool: p.Name, Problems: st.problems}
	}
	return res, nil
}

func (r *Reconciler) nodes() NodeSource {
	if r.Nodes != nil {
		return r.Nodes
	}
	return APINodes{Kube: r.Kube}
}

// poolState collects what one reconcile saw.
type poolState struct {
	members, inMaintenance int32
	heldBack               int
	problems               []string
	removes                []string // DaemonSet/mirror pods a NoExecute taint removed
}

// note records err as a problem for the status when it is the pool's (a conflict, a
// held-back taint); it returns false for other errors (API errors: retried).
func (s *poolState) note(err error) bool {
	var ce *ownership.ConflictError
	var ne *NoExecuteError
	switch {
	case errors.As(err, &ne):
		s.heldBack++
	case errors.As(err, &ce):
	default:
		return false
	}
	s.problems = append(s.problems, err.Error())
	return true
}

// applyTo applies the pool to one member node (as read from the cache: no GET unless the
// cached copy was stale), unless that would add a NoExecute taint while ordinary pods that
// don't tolerate it still run there: the taint manager would delete them without any PDB
// check, so the node is held back (pool sync --rollout drains them first). DaemonSet and
// mirror pods are not blockers; they are named.
func (r *Reconciler) applyTo(ctx context.Context, n *corev1.Node, p *v1alpha1.NodePool, st *poolState) error {
	apply, err := r.poolsOf(ctx, n, p)
	if err != nil {
		return err
	}
	var named []string
	_, _, err = ownership.UpdateNodeFrom(ctx, r.Kube, n, n.Name, func(n *corev1.Node) (*ownership.Desired, error) {
		d, err := ownership.Compute(n, apply, nil)
		if err != nil {
			return nil, err
		}
		named = nil
		if added := ownership.NewNoExecute(n.Spec.Taints, d.Taints); len(added) > 0 && d.Changed {
			pods, err := ownership.PodsOnNode(ctx, r.Kube, n.Name)
			if err != nil {
				return nil, err
			}
			v := ownership.NoExecuteVictims(pods, added)
			if len(v.Blocking) > 0 {
				return nil, &NoExecuteError{Node: n.Name, Pool: p.Name, Taint: added[0], Pods: v.Blocking}
			}
			named = v.Named
		}
		return d, nil
	})
	if err == nil && len(named) > 0 {
		st.removes = append(st.removes, named...)
	}
	return err
}

// poolsOf returns the pools to apply to the node: p and the other pools it is a member of
// (their specs), so that applying one pool never undoes another's.
func (r *Reconciler) poolsOf(ctx context.Context, n *corev1.Node, p *v1alpha1.NodePool) ([]*v1alpha1.NodePool, error) {
	out := []*v1alpha1.NodePool{p}
	for _, name := range nodepool.PoolsOf(n) {
		if name == p.Name {
			continue
		}
		o := &v1alpha1.NodePool{}
		if err := r.Client.Get(ctx, types.NamespacedName{Name: name}, o); err != nil {
			if apierrors.IsNotFound(err) {
				continue // a role label without a NodePool: not ours
			}
			return nil, fmt.Errorf("get pool %s: %w", name, err)
		}
		out = append(out, o)
	}
	return out, nil
}

// NoExecuteError is a NoExecute taint held back from a node that still runs ordinary
// pods that don't tolerate it.
type NoExecuteError struct {
	Node, Pool string
	Taint      corev1.Taint
	Pods       []string
}

func (e *NoExecuteError) Error() string {
	return fmt.Sprintf("node %s: pool %s holds back the NoExecute taint %s, which would delete %d running pod(s) without any PodDisruptionBudget check (%s); roll it out with kubectl maintenance pool sync %s --rollout (drains them node by node first)",
		e.Node, e.Pool, ownership.RenderTaint(e.Taint), len(e.Pods), strings.Join(e.Pods, ", "), e.Pool)
}

// Cleanup removes what the pool applied from every node that recorded it (the role label
// only where the pool wrote it), then lets the pool go; with dryRun it only computes the
// changes. The nodes' schedulability is not touched. It returns each node's change.
func (r *Reconciler) Cleanup(ctx context.Context, p *v1alpha1.NodePool, dryRun bool) ([]NodeChange, error) {
	return r.cleanup(ctx, p, dryRun)
}

func (r *Reconciler) cleanup(ctx context.Context, p *v1alpha1.NodePool, dryRun bool) ([]NodeChange, error) {
	nodes, err := r.nodes().PoolNodes(ctx, p.Name)
	if err != nil {
		return nil, err
	}
	var out []NodeChange
	for _, n := range nodes {
		var change []string
		compute := func(n *corev1.Node) (*ownership.Desired, error) {
			d, err := ownership.Compute(n, nil, []string{p.Name})
			if err == nil {
				change = ownership.Diff(n, d)
			}
			if dryRun && d != nil {
				d.Changed = false
			}
			return d, err
		}
		if _, _, err := ownership.UpdateNodeFrom(ctx, r.Kube, n, n.Name, compute); err != nil {
			return out, fmt.Errorf("clean node %s of pool %s: %w", n.Name, p.Name, err)
		}
		out = append(out, NodeChange{Node: n.Name, Diff: change})
	}
	if !dryRun && controllerutil.RemoveFinalizer(p, Finalizer) {
		if err := r.Client.Update(ctx, p); err != nil && !apierrors.IsNotFound(err) {
			return out, fmt.Errorf("remove finalizer from pool %s: %w", p.Name, err)
		}
	}
	return out, nil
}

// DegradedError says a pool could not be fully applied, and why.
type DegradedError struct {
	Pool     string
	Problems []string
}

func (e *DegradedError) Error() string {
	return fmt.Sprintf("pool %s: %s", e.Pool, strings.Join(e.Problems, "; "))
}

// Blocked marks a held-back NoExecute taint or a conflict as blocked by policy.
func (e *DegradedError) Blocked() bool { return true }

// SyncAll reconciles every pool once (the "pool sync" command) and returns the errors
// joined.
func (r *Reconciler) SyncAll(ctx context.Context) (int, error) {
	list := &v1alpha1.NodePoolList{}
	if err := r.Client.List(ctx, list); err != nil {
		return 0, fmt.Errorf("list pools: %w", err)
	}
	var errs []error
	n := 0
	for i := range list.Items {
		if len(r.Only) > 0 && !r.Only[list.Items[i].Name] {
			continue
		}
		n++
		if _, err := r.Sync(ctx, list.Items[i].Name); err != nil {
			errs = append(errs, err)
		}
	}
	return n, errors.Join(errs...)
}

// APINodes reads nodes from the API server: one list of every node per call.
type APINodes struct{ Kube kubernetes.Interface }

// PoolNodes implements NodeSource.
func (a APINodes) PoolNodes(ctx context.Context, pool string) ([]*corev1.Node, error) {
	list, err := a.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	var out []*corev1.Node
	for i := range list.Items {
		n := &list.Items[i]
		if concerns(n, pool) {
			out = append(out, n)
		}
	}
	return out, nil
}

// concerns reports whether the node is a member of pool or carries its record.
func concerns(n *corev1.Node, pool string) bool {
	_, member := n.Labels[nodepool.RoleLabel(pool)]
	_, recorded := n.Annotations[ownership.RecordAnnotation(pool)]
	return member || recorded
}

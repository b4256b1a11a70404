package nodepool

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
)

// Finalizer lets a deleted pool clean its nodes before it goes.
const Finalizer = "maintenance.kubectl-maintenance.io/cleanup"

// Reconciler keeps every member node and the RuntimeClass of a pool in line with the
// pool's spec, and cleans the nodes when the pool is deleted. "pool sync" (one pass) and
// "pool controller" (a manager) run this same code.
type Reconciler struct {
	// Client reads and writes NodePools and RuntimeClasses.
	Client client.Client
	// Kube reads and patches nodes and lists pods.
	Kube kubernetes.Interface
}

// Reconcile brings one pool's nodes and RuntimeClass to its spec and writes its status.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	p := &v1alpha1.NodePool{}
	if err := r.Client.Get(ctx, req.NamespacedName, p); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !p.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, r.cleanup(ctx, p)
	}
	if !controllerutil.ContainsFinalizer(p, Finalizer) {
		controllerutil.AddFinalizer(p, Finalizer)
		if err := r.Client.Update(ctx, p); err != nil {
			return reconcile.Result{}, fmt.Errorf("add finalizer to pool %s: %w", p.Name, err)
		}
	}
	nodes, err := r.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("list nodes: %w", err)
	}
	var problems []string
	var members, inMaintenance int32
	for i := range nodes.Items {
		n := &nodes.Items[i]
		_, member := n.Labels[RoleLabel(p.Name)]
		_, recorded := n.Annotations[RecordAnnotation(p.Name)]
		switch {
		case member:
			members++
			if n.Spec.Unschedulable {
				inMaintenance++
			}
			if err := r.applyTo(ctx, n, p); err != nil {
				problems = append(problems, err.Error())
			}
		case recorded:
			// The role label was removed by hand: take back what the pool applied.
			if _, _, err := UpdateNode(ctx, r.Kube, n.Name, func(n *corev1.Node) (*Desired, error) {
				return Compute(n, nil, []string{p.Name})
			}); err != nil {
				problems = append(problems, err.Error())
			}
		}
	}
	if err := syncRuntimeClass(ctx, r.Client, p); err != nil {
		problems = append(problems, err.Error())
	}
	return reconcile.Result{}, r.writeStatus(ctx, p, members, inMaintenance, problems)
}

// applyTo applies the pool to one member node, unless that would add a NoExecute taint
// to a node running pods that don't tolerate it: the taint manager would then delete them
// without any PDB check, so that node is held back with a message saying what to do.
func (r *Reconciler) applyTo(ctx context.Context, n *corev1.Node, p *v1alpha1.NodePool) error {
	others, err := r.poolsOf(ctx, n, p.Name)
	if err != nil {
		return err
	}
	apply := append(others, p)
	_, _, err = UpdateNode(ctx, r.Kube, n.Name, func(n *corev1.Node) (*Desired, error) {
		d, err := Compute(n, apply, nil)
		if err != nil {
			return nil, err
		}
		if added := newNoExecute(n.Spec.Taints, d.Taints); len(added) > 0 {
			if victims, err := r.intolerant(ctx, n.Name, added); err != nil {
				return nil, err
			} else if len(victims) > 0 {
				return nil, &NoExecuteError{Node: n.Name, Pool: p.Name, Taint: added[0], Pods: victims}
			}
		}
		return d, nil
	})
	return err
}

// poolsOf returns the other pools the node is a member of (their specs), so that
// applying one pool never undoes another's.
func (r *Reconciler) poolsOf(ctx context.Context, n *corev1.Node, skip string) ([]*v1alpha1.NodePool, error) {
	var out []*v1alpha1.NodePool
	for _, name := range PoolsOf(n) {
		if name == skip {
			continue
		}
		p := &v1alpha1.NodePool{}
		if err := r.Client.Get(ctx, types.NamespacedName{Name: name}, p); err != nil {
			if apierrors.IsNotFound(err) {
				continue // a role label without a NodePool: not ours
			}
			return nil, fmt.Errorf("get pool %s: %w", name, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// NoExecuteError is a NoExecute taint held back from an occupied node.
type NoExecuteError struct {
	Node, Pool string
	Taint      corev1.Taint
	Pods       []string
}

func (e *NoExecuteError) Error() string {
	return fmt.Sprintf("node %s: pool %s adds the NoExecute taint %s=%s, which would delete %d running pod(s) without any PodDisruptionBudget check (%s); drain the node first (kubectl maintenance drain %s --ignore-daemonsets), then run kubectl maintenance pool sync",
		e.Node, e.Pool, e.Taint.Key, e.Taint.Value, len(e.Pods), strings.Join(e.Pods, ", "), e.Node)
}

func newNoExecute(before, after []corev1.Taint) []corev1.Taint {
	var out []corev1.Taint
	for _, t := range after {
		if t.Effect == corev1.TaintEffectNoExecute && !hasTaint(before, t) {
			out = append(out, t)
		}
	}
	return out
}

// intolerant lists the running pods on node that don't tolerate every taint in taints.
func (r *Reconciler) intolerant(ctx context.Context, node string, taints []corev1.Taint) ([]string, error) {
	pods, err := r.Kube.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
	if err != nil {
		return nil, fmt.Errorf("list pods on node %s: %w", node, err)
	}
	var out []string
	for _, pod := range pods.Items {
		if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed || pod.DeletionTimestamp != nil {
			continue
		}
		for i := range taints {
			if !tolerates(pod.Spec.Tolerations, &taints[i]) {
				out = append(out, pod.Namespace+"/"+pod.Name)
				break
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

func tolerates(tols []corev1.Toleration, t *corev1.Taint) bool {
	for i := range tols {
		if tols[i].ToleratesTaint(klog.Background(), t, false) {
			return true
		}
	}
	return false
}

// cleanup removes what the pool applied from every node that recorded it (the role label
// too), then lets the pool go. The nodes' schedulability is not touched.
func (r *Reconciler) cleanup(ctx context.Context, p *v1alpha1.NodePool) error {
	nodes, err := r.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list nodes: %w", err)
	}
	for i := range nodes.Items {
		n := &nodes.Items[i]
		_, recorded := n.Annotations[RecordAnnotation(p.Name)]
		_, member := n.Labels[RoleLabel(p.Name)]
		if !recorded && !member {
			continue
		}
		if _, _, err := UpdateNode(ctx, r.Kube, n.Name, func(n *corev1.Node) (*Desired, error) {
			return Compute(n, nil, []string{p.Name})
		}); err != nil {
			return fmt.Errorf("clean node %s of pool %s: %w", n.Name, p.Name, err)
		}
	}
	if controllerutil.RemoveFinalizer(p, Finalizer) {
		if err := r.Client.Update(ctx, p); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("remove finalizer from pool %s: %w", p.Name, err)
		}
	}
	return nil
}

func (r *Reconciler) writeStatus(ctx context.Context, p *v1alpha1.NodePool, members, inMaintenance int32, problems []string) error {
	p.Status.ObservedGeneration = p.Generation
	p.Status.Nodes, p.Status.InMaintenance = members, inMaintenance
	ready := metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Applied", ObservedGeneration: p.Generation,
		Message: fmt.Sprintf("%d node(s) carry the pool's labels and taints", members)}
	degraded := metav1.Condition{Type: "Degraded", Status: metav1.ConditionFalse, Reason: "AsExpected", ObservedGeneration: p.Generation}
	if len(problems) > 0 {
		ready.Status, ready.Reason, ready.Message = metav1.ConditionFalse, "NotApplied", strings.Join(problems, "; ")
		degraded.Status, degraded.Reason, degraded.Message = metav1.ConditionTrue, degradedReason(problems), strings.Join(problems, "; ")
	}
	meta.SetStatusCondition(&p.Status.Conditions, ready)
	meta.SetStatusCondition(&p.Status.Conditions, degraded)
	if err := r.Client.Status().Update(ctx, p); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("update status of pool %s: %w", p.Name, err)
	}
	if len(problems) > 0 {
		return &DegradedError{Pool: p.Name, Problems: problems}
	}
	return nil
}

func degradedReason(problems []string) string {
	for _, p := range problems {
		switch {
		case strings.Contains(p, "NoExecute"):
			return "NoExecuteHeldBack"
		case strings.Contains(p, "conflict"), strings.Contains(p, "outside any pool"):
			return "Conflict"
		}
	}
	return "Error"
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

// SetupWithManager runs the reconciler in mgr, on changes of pools, their RuntimeClasses
// and nodes (a node change queues the pools it is or was a member of).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.NodePool{}).
		Owns(&nodev1.RuntimeClass{}).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			var out []reconcile.Request
			seen := map[string]bool{}
			for _, name := range PoolsOf(o.(*corev1.Node)) {
				seen[name] = true
				out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: name}})
			}
			for k := range o.GetAnnotations() {
				if name, ok := strings.CutPrefix(k, RecordAnnotationPrefix); ok && !seen[name] {
					out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: name}})
				}
			}
			return out
		})).
		Complete(r)
}

// SyncAll reconciles every pool once (the "pool sync" command) and returns the errors
// joined.
func (r *Reconciler) SyncAll(ctx context.Context) (int, error) {
	list := &v1alpha1.NodePoolList{}
	if err := r.Client.List(ctx, list); err != nil {
		return 0, fmt.Errorf("list pools: %w", err)
	}
	var errs []error
	for i := range list.Items {
		if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: types.NamespacedName{Name: list.Items[i].Name}}); err != nil {
			errs = append(errs, err)
		}
	}
	return len(list.Items), errors.Join(errs...)
}

package roll

import (
	"context"
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/ownership"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/reconciler"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// Rollout rolls a pool's new NoExecute taints out to its members that lack them, as the
// drain engine's node steps in the pool's window: each node is cordoned and drained of
// the ordinary pods the taints would remove (EvictOnly; every eviction under the
// budgets), then one patch writes the pool's labels and taints, removes the drain's
// records and uncordons it (only a cordon this tool made), as soon as it is drained.
// DaemonSet and mirror pods the taints remove are named, never blockers. The pool's
// RolloutProgressing condition shows progress and the budget it waits on.
type Rollout struct {
	Kube   kubernetes.Interface
	Client client.Client

	mu          sync.Mutex
	pool        *v1alpha1.NodePool
	pools       map[string]*v1alpha1.NodePool
	pending     []string
	res         RolloutResult
	lastBlocked string
}

// RolloutResult is what a rollout did.
type RolloutResult struct {
	// Nodes that now carry the pool's NoExecute taints.
	Nodes []string
	// Drained are the nodes that had pods the taints would remove, drained first.
	Drained []string
	// Removed are the DaemonSet and mirror pods the taints removed.
	Removed []string
}

// EvictOnly accepts the pods a rollout of p's NoExecute taints must drain first: the
// ordinary pods (not DaemonSet, not mirror) the taints would remove. Everything else
// stays on the node (drain.Config.Only).
func EvictOnly(p *v1alpha1.NodePool) func(*corev1.Pod) bool {
	taints := ownership.PoolTaints(p)
	return func(pod *corev1.Pod) bool {
		return len(ownership.NoExecuteVictims([]corev1.Pod{*pod}, taints).Blocking) > 0
	}
}

// Start reads pool and returns its members that lack its NoExecute taints: the nodes the
// engine rolls through (none: nothing to do). It sets the pool's condition.
func (ro *Rollout) Start(ctx context.Context, pool string) ([]string, error) {
	p, err := nodepool.GetPool(ctx, ro.Client, pool)
	if err != nil {
		return nil, err
	}
	pools, err := nodepool.ListPools(ctx, ro.Client)
	if err != nil {
		return nil, err
	}
	members, err := reconciler.APINodes{Kube: ro.Kube}.PoolNodes(ctx, pool)
	if err != nil {
		return nil, err
	}
	var pending, drained []string
	for _, n := range members {
		if _, member := n.Labels[nodepool.RoleLabel(pool)]; !member {
			continue
		}
		d, err := ownership.Compute(n, applyTo(n, p, pools), nil)
		if err != nil {
			return nil, err
		}
		if len(ownership.NewNoExecute(n.Spec.Taints, d.Taints)) == 0 {
			continue
		}
		pending = append(pending, n.Name)
		pods, err := ownership.PodsOnNode(ctx, ro.Kube, n.Name)
		if err != nil {
			return nil, err
		}
		if len(ownership.NoExecuteVictims(pods, ownership.PoolTaints(p)).Blocking) > 0 {
			drained = append(drained, n.Name)
		}
	}
	ro.mu.Lock()
	ro.pool, ro.pools, ro.pending, ro.res = p, pools, pending, RolloutResult{Drained: drained}
	ro.mu.Unlock()
	if len(pending) > 0 {
		ro.condition(ctx, metav1.ConditionTrue, "RollingOut", fmt.Sprintf("0 of %d node(s) carry the pool's NoExecute taints", len(pending)))
	}
	return pending, nil
}

// Pool is the pool as Start read it.
func (ro *Rollout) Pool() *v1alpha1.NodePool {
	ro.mu.Lock()
	defer ro.mu.Unlock()
	return ro.pool
}

// Window is the rollout's window: its nodes count in the pool.
func (ro *Rollout) Window() *Window {
	ro.mu.Lock()
	defer ro.mu.Unlock()
	w := &Window{Kube: ro.Kube, Pools: map[string]*v1alpha1.NodePool{ro.pool.Name: ro.pool}, Of: map[string][]string{}}
	for _, n := range ro.pending {
		w.Of[n] = []string{ro.pool.Name}
	}
	return w
}

// Before implements drain.NodeSteps: nothing before the cordon.
func (ro *Rollout) Before(context.Context, string) error { return nil }

// After implements drain.NodeSteps: one patch writes the pool onto the drained node
// (labels, taints, drain records removed, uncordoned if the cordon is ours), after
// checking that no ordinary pod the NoExecute taints would remove is left. Its event is
// node.moved (the node carries the taints), with the DaemonSet/mirror pods named.
func (ro *Rollout) After(ctx context.Context, name string) ([]event.Event, error) {
	ro.mu.Lock()
	p, pools := ro.pool, ro.pools
	ro.mu.Unlock()
	var named []string
	result := drain.AlreadySchedulable
	_, _, err := ownership.UpdateNode(ctx, ro.Kube, name, func(n *corev1.Node) (*ownership.Desired, error) {
		d, err := ownership.Compute(n, applyTo(n, p, pools), nil)
		if err != nil {
			return nil, err
		}
		if named, err = ownership.CheckNoExecute(ctx, ro.Kube, n, d.Taints); err != nil {
			return nil, err
		}
		for _, k := range noderecord.Annotations() {
			if _, ok := n.Annotations[k]; ok {
				d.Annotations[k], d.Changed = nil, true
			}
		}
		if _, ok := d.Labels[noderecord.LabelState]; ok {
			delete(d.Labels, noderecord.LabelState) // the drain's state label goes with its record
			d.Changed = true
		}
		result = drain.AlreadySchedulable
		if n.Spec.Unschedulable {
			result = drain.LeftCordoned
			if nodepool.CordonedByUs(n) {
				result = drain.Uncordoned
				d.Unschedulable, d.Changed = new(bool), true
			}
		}
		return d, nil
	})
	if err != nil {
		return nil, fmt.Errorf("roll out to node %s: %w", name, err)
	}
	ro.mu.Lock()
	ro.res.Nodes = append(ro.res.Nodes, name)
	ro.res.Removed = append(ro.res.Removed, named...)
	done, total := len(ro.res.Nodes), len(ro.pending)
	ro.mu.Unlock()
	ro.condition(ctx, metav1.ConditionTrue, "RollingOut", fmt.Sprintf("%d of %d node(s) carry the pool's NoExecute taints", done, total))
	return MovedEvents(&NodeMove{Node: name, To: p.Name, Removed: named, Moved: true, Uncordon: result}), nil
}

// Result is what the rollout did so far.
func (ro *Rollout) Result() RolloutResult {
	ro.mu.Lock()
	defer ro.mu.Unlock()
	r := ro.res
	r.Nodes, r.Drained, r.Removed = append([]string(nil), r.Nodes...), append([]string(nil), r.Drained...), append([]string(nil), r.Removed...)
	return r
}

// Finish sets the pool's condition at the end of the run: Complete, or Blocked with err.
func (ro *Rollout) Finish(ctx context.Context, err error) {
	r := ro.Result()
	ro.mu.Lock()
	total := len(ro.pending)
	ro.mu.Unlock()
	if total == 0 {
		return
	}
	if err != nil {
		ro.condition(ctx, metav1.ConditionTrue, "Blocked", fmt.Sprintf("%d of %d node(s) done; %v", len(r.Nodes), total, err))
		return
	}
	msg := fmt.Sprintf("%d node(s) carry the pool's NoExecute taints", total)
	if len(r.Removed) > 0 {
		msg += "; DaemonSet/mirror pods removed by them: " + strings.Join(r.Removed, ", ")
	}
	ro.condition(ctx, metav1.ConditionFalse, "Complete", msg)
}

// Observe is told each event of the rollout's run (by whoever reads them): a budget an
// eviction waits on, or the pool's window being full, is named in the pool's condition.
// Repeats are not written again.
func (ro *Rollout) Observe(ctx context.Context, ev event.Event) {
	var key, reason, msg string
	switch {
	case ev.Type == event.EventEvictionBlocked && ev.PDB != "":
		key, reason, msg = ev.Node+"|"+ev.PDB, "WaitingForPDB", fmt.Sprintf("node %s: waiting on pdb %s: %s", ev.Node, ev.PDB, ev.Message)
	case ev.Type == event.EventWarning && ev.Reason == drain.ReasonRoom:
		key, reason, msg = ev.Message, "WaitingForBudget", ev.Message
	default:
		return
	}
	ro.mu.Lock()
	if key == ro.lastBlocked {
		ro.mu.Unlock()
		return
	}
	ro.lastBlocked = key
	ro.mu.Unlock()
	ro.condition(ctx, metav1.ConditionTrue, reason, msg)
}

func applyTo(n *corev1.Node, p *v1alpha1.NodePool, pools map[string]*v1alpha1.NodePool) []*v1alpha1.NodePool {
	out := []*v1alpha1.NodePool{p}
	for _, name := range nodepool.PoolsOf(n) {
		if o, ok := pools[name]; ok && name != p.Name {
			out = append(out, o)
		}
	}
	return out
}

// condition sets the pool's RolloutProgressing condition (best effort: a failure to
// write the status does not stop the rollout).
func (ro *Rollout) condition(ctx context.Context, status metav1.ConditionStatus, reason, message string) {
	ro.mu.Lock()
	name := ro.pool.Name
	ro.mu.Unlock()
	_ = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p := &v1alpha1.NodePool{}
		if err := ro.Client.Get(ctx, types.NamespacedName{Name: name}, p); err != nil {
			return err
		}
		changed := meta.SetStatusCondition(&p.Status.Conditions, metav1.Condition{Type: reconciler.ConditionRollout, Status: status, Reason: reason,
			Message: message, ObservedGeneration: p.Generation})
		if !reconciler.SetHealth(&p.Status, p.Generation) && !changed {
			return nil
		}
		return ro.Client.Status().Update(ctx, p)
	})
}

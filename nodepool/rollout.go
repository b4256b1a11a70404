package nodepool

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// Rollout rolls a pool's new NoExecute taints out node by node, at most the pool's
// maxUnavailable at a time (members already cordoned or NotReady count against it). A
// node that still runs ordinary pods the taints would remove is first cordoned and
// drained through the engine (every eviction under the budgets); then one patch writes
// the pool's labels and taints, removes the drain's records and uncordons it (only a
// cordon this tool made). DaemonSet and mirror pods the taints remove are named, never
// blockers. The pool's RolloutProgressing condition shows progress and the budget it
// waits on.
type Rollout struct {
	Kube    kubernetes.Interface
	Client  client.Client
	Drainer Drainer
	// Timeout bounds the whole rollout; 0 means no limit.
	Timeout time.Duration
	// Progress, when set, is told about batches, waits and finished nodes.
	Progress func(MoveEvent)

	mu          sync.Mutex
	pool        string
	lastBlocked string
}

// EvictOnly accepts the pods a rollout of p's NoExecute taints must drain first: the
// ordinary pods (not DaemonSet, not mirror) the taints would remove. Everything else
// stays on the node (drain.Config.Only).
func EvictOnly(p *v1alpha1.NodePool) func(*corev1.Pod) bool {
	taints := PoolTaints(p)
	return func(pod *corev1.Pod) bool {
		return len(NoExecuteVictims([]corev1.Pod{*pod}, taints).Blocking) > 0
	}
}

// RolloutResult is what a rollout did.
type RolloutResult struct {
	// Nodes that now carry the pool's NoExecute taints.
	Nodes []string
	// Drained are the nodes that had to be drained first.
	Drained []string
	// Removed are the DaemonSet and mirror pods the taints removed.
	Removed []string
}

// Run rolls pool's NoExecute taints out to its members that lack them.
func (ro *Rollout) Run(ctx context.Context, pool string) (*RolloutResult, error) {
	ro.mu.Lock()
	ro.pool = pool
	ro.mu.Unlock()
	m := &Mover{Kube: ro.Kube, Pools: ro.Client, Timeout: ro.Timeout, Progress: ro.Progress}
	p, err := GetPool(ctx, ro.Client, pool)
	if err != nil {
		return nil, err
	}
	pools, err := m.poolsByName(ctx)
	if err != nil {
		return nil, err
	}
	var deadline time.Time
	if ro.Timeout > 0 {
		deadline = time.Now().Add(ro.Timeout)
	}
	members, err := APINodes{Kube: ro.Kube}.PoolNodes(ctx, pool)
	if err != nil {
		return nil, err
	}
	res := &RolloutResult{}
	var pending []string
	sources := map[string][]string{}
	for _, n := range members {
		if _, member := n.Labels[RoleLabel(pool)]; !member {
			continue
		}
		d, err := Compute(n, ro.applyTo(n, p, pools), nil)
		if err != nil {
			return nil, err
		}
		if len(NewNoExecute(n.Spec.Taints, d.Taints)) > 0 {
			pending = append(pending, n.Name)
			sources[n.Name] = []string{pool}
		}
	}
	total := len(pending)
	if total == 0 {
		return res, nil
	}
	ro.condition(ctx, metav1.ConditionTrue, "RollingOut", fmt.Sprintf("0 of %d node(s) carry the pool's NoExecute taints", total))
	roller := &Roller{Kube: ro.Kube, Pools: map[string]*v1alpha1.NodePool{pool: p}, Limit: p.MaxUnavailableOrDefault()}
	for len(pending) > 0 {
		batch, waitOn, err := roller.Next(ctx, pending, sources, nil)
		if err != nil {
			return res, err
		}
		if len(batch) == 0 {
			ro.condition(ctx, metav1.ConditionTrue, "WaitingForBudget", "waiting: "+waitOn)
			m.progress(MoveEvent{Type: MoveWaiting, Message: "waiting: " + waitOn})
			if err := m.wait(ctx, deadline, roller, []string{pool}, waitOn); err != nil {
				return res, err
			}
			continue
		}
		var toDrain []string
		for _, name := range batch {
			pods, err := PodsOnNode(ctx, ro.Kube, name)
			if err != nil {
				return res, err
			}
			if len(NoExecuteVictims(pods, PoolTaints(p)).Blocking) > 0 {
				toDrain = append(toDrain, name)
			}
		}
		m.progress(MoveEvent{Type: MoveBatch, Nodes: batch, Message: fmt.Sprintf("rolling the NoExecute taints of pool %s out to %v (draining %v first)", pool, batch, toDrain)})
		if len(toDrain) > 0 {
			ro.condition(ctx, metav1.ConditionTrue, "Draining", fmt.Sprintf("%d of %d node(s) done; draining %s of pods the taints would remove", len(res.Nodes), total, strings.Join(toDrain, ", ")))
			if err := m.drain(ctx, ro.Drainer, toDrain, deadline); err != nil {
				ro.condition(ctx, metav1.ConditionTrue, "Blocked", fmt.Sprintf("%d of %d node(s) done; %v", len(res.Nodes), total, err))
				return res, err
			}
			res.Drained = append(res.Drained, toDrain...)
		}
		for _, name := range batch {
			named, err := ro.taint(ctx, name, p, pools)
			if err != nil {
				return res, err
			}
			res.Nodes = append(res.Nodes, name)
			res.Removed = append(res.Removed, named...)
			m.progress(MoveEvent{Type: MoveNodeMoved, Node: name, Message: fmt.Sprintf("node %s carries the NoExecute taints of pool %s", name, pool),
				Move: &NodeMove{Node: name, To: pool, Removed: named, Moved: true}})
		}
		ro.condition(ctx, metav1.ConditionTrue, "RollingOut", fmt.Sprintf("%d of %d node(s) carry the pool's NoExecute taints", len(res.Nodes), total))
		pending = slices.DeleteFunc(pending, func(n string) bool { return slices.Contains(batch, n) })
	}
	msg := fmt.Sprintf("%d node(s) carry the pool's NoExecute taints", total)
	if len(res.Removed) > 0 {
		msg += "; DaemonSet/mirror pods removed by them: " + strings.Join(res.Removed, ", ")
	}
	ro.condition(ctx, metav1.ConditionFalse, "Complete", msg)
	return res, nil
}

func (ro *Rollout) applyTo(n *corev1.Node, p *v1alpha1.NodePool, pools map[string]*v1alpha1.NodePool) []*v1alpha1.NodePool {
	out := []*v1alpha1.NodePool{p}
	for _, name := range PoolsOf(n) {
		if o, ok := pools[name]; ok && name != p.Name {
			out = append(out, o)
		}
	}
	return out
}

// taint writes the pool onto one node in one patch (labels, taints, drain records
// removed, uncordoned if the cordon is ours), after checking that no ordinary pod the
// NoExecute taints would remove is left. It returns the DaemonSet/mirror pods named.
func (ro *Rollout) taint(ctx context.Context, name string, p *v1alpha1.NodePool, pools map[string]*v1alpha1.NodePool) ([]string, error) {
	var named []string
	_, _, err := UpdateNode(ctx, ro.Kube, name, func(n *corev1.Node) (*Desired, error) {
		d, err := Compute(n, ro.applyTo(n, p, pools), nil)
		if err != nil {
			return nil, err
		}
		if named, err = CheckNoExecute(ctx, ro.Kube, n, d.Taints); err != nil {
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
		if n.Spec.Unschedulable && CordonedByUs(n) {
			d.Unschedulable, d.Changed = new(bool), true
		}
		return d, nil
	})
	if err != nil {
		return nil, fmt.Errorf("roll out to node %s: %w", name, err)
	}
	return named, nil
}

// Blocked is told (by whoever reads the drain's events) that an eviction of the rollout
// waits on a budget; the pool's condition then names it. Repeats are not written again.
func (ro *Rollout) Blocked(ctx context.Context, node, pdb, message string) {
	ro.mu.Lock()
	key := node + "|" + pdb
	if key == ro.lastBlocked {
		ro.mu.Unlock()
		return
	}
	ro.lastBlocked = key
	ro.mu.Unlock()
	ro.condition(ctx, metav1.ConditionTrue, "WaitingForPDB", fmt.Sprintf("node %s: waiting on pdb %s: %s", node, pdb, message))
}

// condition sets the pool's RolloutProgressing condition (best effort: a failure to
// write the status does not stop the rollout).
func (ro *Rollout) condition(ctx context.Context, status metav1.ConditionStatus, reason, message string) {
	ro.mu.Lock()
	name := ro.pool
	ro.mu.Unlock()
	_ = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p := &v1alpha1.NodePool{}
		if err := ro.Client.Get(ctx, types.NamespacedName{Name: name}, p); err != nil {
			return err
		}
		if !meta.SetStatusCondition(&p.Status.Conditions, metav1.Condition{Type: ConditionRollout, Status: status, Reason: reason,
			Message: message, ObservedGeneration: p.Generation}) {
			return nil
		}
		return ro.Client.Status().Update(ctx, p)
	})
}

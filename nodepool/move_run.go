package nodepool

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// Run carries out planned moves, rolling: batches of at most each source pool's
// maxUnavailable (counting members already cordoned or NotReady), and at most the
// target's. Per batch: record the move on each node, cordon and drain (the drainer),
// then per node one patch that relabels and retaints, removes the move record and
// uncordons (only a cordon this tool made); then the next batch. Nodes already in the
// target pool are done. Interrupted at any step, the same call finishes from where it
// stopped. It returns the drains' summary added up over the batches. Nodes a drain gives
// up under --on-blocked=skip stay cordoned and are not moved; the others go on, and the
// move ends with a drain.SkippedError.
func (m *Mover) Run(ctx context.Context, moves []*NodeMove, target *v1alpha1.NodePool, d Drainer) (drain.Summary, error) {
	var total drain.Summary
	var deadline time.Time
	if m.Timeout > 0 {
		deadline = m.now().Add(m.Timeout)
	}
	pools, err := m.poolsByName(ctx)
	if err != nil {
		return total, err
	}
	byNode := map[string]*NodeMove{}
	sources := map[string][]string{}
	var resumed, fresh []string
	for _, mv := range moves {
		if mv.Done {
			m.progress(MoveEvent{Type: MoveNodeDone, Node: mv.Node, Move: mv,
				Message: fmt.Sprintf("node %s is already in pool %s: nothing to do", mv.Node, mv.To)})
			continue
		}
		byNode[mv.Node], sources[mv.Node] = mv, mv.From
		if mv.Resume {
			resumed = append(resumed, mv.Node)
		} else {
			fresh = append(fresh, mv.Node)
		}
	}
	pending := append(resumed, fresh...)
	roller := &Roller{Kube: m.Kube, Pools: pools, Limit: target.MaxUnavailableOrDefault()}
	var skipped []drain.BlockedNode // given up by --on-blocked=skip: left cordoned, not moved
	givenUp := map[string]bool{}    // not counted against the pools any more, as a drain --pool's finished nodes
	for len(pending) > 0 {
		batch, waitOn, err := roller.Next(ctx, pending, sources, givenUp)
		if err != nil {
			return total, err
		}
		if len(batch) == 0 {
			m.progress(MoveEvent{Type: MoveWaiting, Message: "waiting: " + waitOn})
			if err := m.wait(ctx, deadline, roller, sourceNames(sources, pending), waitOn); err != nil {
				return total, err
			}
			continue
		}
		m.progress(MoveEvent{Type: MoveBatch, Nodes: batch, Message: fmt.Sprintf("moving %v to pool %s", batch, target.Name)})
		for _, name := range batch {
			mv := byNode[name]
			if err := m.recordMove(ctx, name, &MoveState{From: mv.From, To: mv.To, Step: StepDraining}); err != nil {
				return total, err
			}
		}
		sum, err := m.drainBatch(ctx, d, batch, deadline)
		total = total.Add(sum)
		var late *drain.NotStartedError
		if errors.As(err, &late) {
			// --not-after: the later batches are not started either; list them too.
			rest := slices.DeleteFunc(slices.Clone(pending), func(n string) bool { return slices.Contains(batch, n) })
			total.NotStarted = append(total.NotStarted, rest...)
			return total, &drain.NotStartedError{NotAfter: late.NotAfter, Nodes: append(slices.Clone(late.Nodes), rest...)}
		}
		var se *drain.SkippedError
		if errors.As(err, &se) {
			skipped, err = append(skipped, se.Nodes...), nil
			for _, b := range se.Nodes {
				givenUp[b.Node] = true
			}
		}
		if err != nil {
			return total, err
		}
		for _, name := range batch {
			mv := byNode[name]
			if slices.ContainsFunc(skipped, func(b drain.BlockedNode) bool { return b.Node == name }) {
				continue // its move stays recorded; a re-run resumes it
			}
			if err := m.finish(ctx, mv, target, pools); err != nil {
				return total, err
			}
			m.progress(MoveEvent{Type: MoveNodeMoved, Node: name, Move: mv, Message: mv.To})
		}
		pending = slices.DeleteFunc(pending, func(n string) bool { return slices.Contains(batch, n) })
	}
	if len(skipped) > 0 {
		return total, &drain.SkippedError{Nodes: skipped}
	}
	return total, nil
}

// WaitTimeoutError is a move that reached its --timeout while no node could start (the
// source pool's budget was spent by nodes out of service).
type WaitTimeoutError struct {
	Timeout time.Duration
	WaitOn  string
}

func (e *WaitTimeoutError) Error() string {
	return fmt.Sprintf("move timed out after %s waiting: %s", e.Timeout, e.WaitOn)
}

// Unwrap lets errors.Is(err, context.DeadlineExceeded) hold.
func (e *WaitTimeoutError) Unwrap() error { return context.DeadlineExceeded }

func (m *Mover) wait(ctx context.Context, deadline time.Time, r *Roller, pools []string, waitOn string) error {
	wctx := ctx
	if !deadline.IsZero() {
		var cancel context.CancelFunc
		wctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	err := r.Wait(wctx, pools)
	if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		return &WaitTimeoutError{Timeout: m.Timeout, WaitOn: waitOn}
	}
	return err
}

// drain runs the drainer on a batch with what is left of the move's timeout.
func (m *Mover) drain(ctx context.Context, d Drainer, batch []string, deadline time.Time) error {
	_, err := m.drainBatch(ctx, d, batch, deadline)
	return err
}

// drainBatch runs the drainer on a batch with what is left of the move's timeout and
// returns the batch's summary.
func (m *Mover) drainBatch(ctx context.Context, d Drainer, batch []string, deadline time.Time) (drain.Summary, error) {
	if td, ok := d.(TimedDrainer); ok {
		left := time.Duration(0)
		if !deadline.IsZero() {
			if left = deadline.Sub(m.now()); left <= 0 {
				left = time.Millisecond
			}
		}
		sum, err := td.RunWithin(ctx, batch, left)
		var te *drain.TimeoutError
		if errors.As(err, &te) && m.Timeout > 0 {
			te.Timeout = m.Timeout // the move's --timeout, not what was left for the batch
		}
		return sum, err
	}
	return d.Run(ctx, batch)
}

// finish is the last step of one node's move, one optimistic-lock patch: the target
// pool's labels and taints on, the old pools' off, the move and drain records removed,
// and the node uncordoned when the cordon is this tool's. Before it, pods still on the
// node that the target's new NoExecute taints would remove are checked: an ordinary one
// stops the move (a VictimsError; the taint manager would delete it with no budget
// check), DaemonSet and mirror pods are named.
func (m *Mover) finish(ctx context.Context, mv *NodeMove, target *v1alpha1.NodePool, pools map[string]*v1alpha1.NodePool) error {
	var named []string
	result := drain.AlreadySchedulable
	_, _, err := UpdateNode(ctx, m.Kube, mv.Node, func(n *corev1.Node) (*Desired, error) {
		d, err := m.compute(n, target, mv.From, pools)
		if err != nil {
			return nil, err
		}
		if named, err = CheckNoExecute(ctx, m.Kube, n, d.Taints); err != nil {
			return nil, err
		}
		for _, k := range append([]string{MoveAnnotation}, noderecord.Annotations()...) {
			if _, ok := n.Annotations[k]; ok {
				d.Annotations[k] = nil
			}
		}
		delete(d.Labels, noderecord.LabelState) // the drain's state label goes with its record
		result = drain.AlreadySchedulable
		if n.Spec.Unschedulable {
			result = drain.LeftCordoned
			if CordonedByUs(n) {
				result = drain.Uncordoned
				d.Unschedulable = new(bool)
			}
		}
		d.Changed = true
		return d, nil
	})
	if err != nil {
		return fmt.Errorf("finish the move of node %s: %w", mv.Node, err)
	}
	mv.Removed, mv.Uncordon, mv.Moved = named, result, true
	return nil
}

// CordonedByUs reports whether the node's cordon is this tool's (noderecord.CordonedByUs:
// the node's managedFields name noderecord.FieldManager as the only owner of
// spec.unschedulable). A cordon anyone else made, or made again after a plain uncordon, stays.
func CordonedByUs(n *corev1.Node) bool { return noderecord.CordonedByUs(n) }

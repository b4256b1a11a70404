package operation

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// ReassertEvery is how often a run reads the nodes it drains now to keep their
// DrainInProgress condition True: one List of the nodes that carry this tool's record
// (noderecord.LabelState, which every node a run drains carries), not a read of each
// node (at 100 nodes that was 50 reads a second, half the client's rate, in front of the
// evictions). KEP-6249 has the kubelet set it False when it starts,
// and anyone may write it: while the run still drains the node that False is wrong, so
// the run sets True again (within this interval and one write). It never reads the
// condition as a cancel: only the node record (noderecord) says who holds a node.
const ReassertEvery = 2 * time.Second

// markDraining records whether the run drains node now and reports whether it did.
func (t *conditionTap) markDraining(node string, on bool) (was bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	was = t.inProgress[node]
	if on {
		t.inProgress[node] = true
	} else {
		delete(t.inProgress, node)
	}
	return was
}

// draining lists the nodes the run drains now.
func (t *conditionTap) draining() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]string, 0, len(t.inProgress))
	for n := range t.inProgress {
		out = append(out, n)
	}
	return out
}

// reassert reads, every ReassertEvery until ctx ends, each node the run drains and
// queues DrainInProgress True again for one whose condition someone else set otherwise.
// The queueing checks, under the lock, that the node is still being drained: a node's
// end (Drained, Failed, ...) marks it done before queueing its own False, which then
// replaces a True still pending, so the run's last word on a node is never overwritten.
func (t *conditionTap) reassert(ctx context.Context) {
	every := t.every
	if every <= 0 {
		every = ReassertEvery
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		draining := t.draining()
		if len(draining) == 0 {
			continue
		}
		off, err := t.drainInProgressOff(ctx)
		if err != nil {
			continue // nothing known to correct; the next tick reads again
		}
		for _, node := range draining {
			if !off[node] {
				continue
			}
			t.mu.Lock()
			if t.inProgress[node] && !t.denied {
				w, ok := t.pending[node]
				if !ok {
					w = &condWrite{conds: map[corev1.NodeConditionType]corev1.NodeCondition{}}
					t.pending[node] = w
					t.order = append(t.order, node)
				}
				w.conds[ConditionDrainInProgress] = cond(ConditionDrainInProgress, true, ReasonDraining, "draining: "+t.origin)
			}
			t.mu.Unlock()
			t.poke()
			t.o.logger().Info("DrainInProgress was not True on a node the run drains: set True again", "node", node)
		}
	}
}

// drainInProgressOff lists the nodes that carry this tool's record and returns those
// whose DrainInProgress is not True (a node not listed, or unreadable, has nothing to
// correct).
func (t *conditionTap) drainInProgressOff(ctx context.Context) (map[string]bool, error) {
	rctx, cancel := context.WithTimeout(ctx, conditionsTimeout)
	defer cancel()
	nodes, err := t.o.Kube.CoreV1().Nodes().List(rctx, metav1.ListOptions{LabelSelector: noderecord.LabelState})
	if err != nil {
		return nil, fmt.Errorf("list the nodes this tool records on: %w", err)
	}
	off := map[string]bool{}
	for i := range nodes.Items {
		n := &nodes.Items[i]
		on := false
		for _, c := range n.Status.Conditions {
			if c.Type == ConditionDrainInProgress {
				on = c.Status == corev1.ConditionTrue
			}
		}
		if !on {
			off[n.Name] = true
		}
	}
	return off, nil
}

package roll

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/ownership"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// ReasonAlreadyInPool qualifies the node.moved event of a node that was in the target
// pool already (nothing was done).
const ReasonAlreadyInPool = "AlreadyInPool"

// ReasonLeftCordoned qualifies the node.uncordoned event of a moved node whose cordon is
// someone else's: it stays cordoned.
const ReasonLeftCordoned = "LeftCordoned"

// Mover moves nodes between pools. Plan validates the move and computes each node's exact
// change; Steps are its per-node steps for the drain engine, which runs the move in the
// window: record the move on the node, cordon and drain (the engine), then one patch that
// relabels and retaints the node (removing exactly what the old pools applied), removes
// the records and uncordons it (only a cordon this tool made), as soon as it is drained.
type Mover struct {
	Kube  kubernetes.Interface
	Pools client.Client
	// AllowMissingHandler lets a move go on to nodes that don't list the target pool's
	// RuntimeClass handler in status.runtimeHandlers (a warning instead of a stop).
	AllowMissingHandler bool
	// Known, when set, holds nodes read a moment ago (the operations layer's
	// resolution): Plan uses them instead of reading each node again.
	Known map[string]*corev1.Node
}

// NodeMove is the plan (and, after the run, the result) of moving one node.
type NodeMove struct {
	Node string
	From []string
	To   string
	// Diff is the exact change: "+label k=v", "-label k=v", "+taint k=v:Effect", ...
	Diff []string
	// Resume is true when the node was already mid-move (a re-run).
	Resume bool
	// Done is true when the node is already in the target pool with no move recorded:
	// nothing to do (a re-run after the move finished).
	Done bool
	// Kept lists the node's role labels the move leaves because no NodePool owns them
	// (e.g. node-role.kubernetes.io/worker).
	Kept []string
	// Removed lists the DaemonSet and mirror pods the target's NoExecute taints will
	// remove from the node (a drain never removes those; they are not blockers).
	Removed []string
	// Warnings for a person (a RuntimeClass handler the node does not list, with
	// --allow-missing-handler).
	Warnings []string
	// Uncordon says what happened at the end.
	Uncordon drain.UncordonResult
	// Moved is true once the node carries the target pool.
	Moved bool
}

// MoveSteps carries planned moves out as the drain engine's node steps
// (drain.NodeSteps). Build it with Mover.Steps.
type MoveSteps struct {
	m      *Mover
	target *v1alpha1.NodePool
	pools  map[string]*v1alpha1.NodePool
	mu     sync.Mutex
	byNode map[string]*NodeMove
}

// Steps returns the steps of moves to target (the moves not Done), with the pools as
// they are now.
func (m *Mover) Steps(ctx context.Context, moves []*NodeMove, target *v1alpha1.NodePool) (*MoveSteps, error) {
	pools, err := nodepool.ListPools(ctx, m.Pools)
	if err != nil {
		return nil, err
	}
	s := &MoveSteps{m: m, target: target, pools: pools, byNode: map[string]*NodeMove{}}
	for _, mv := range moves {
		if !mv.Done {
			s.byNode[mv.Node] = mv
		}
	}
	return s, nil
}

// Window is the window of the moves: each node counts in the pools it leaves, and the
// engine's MaxParallelNodes (the target's maxUnavailable) bounds the nodes in progress.
func (s *MoveSteps) Window() *Window {
	w := &Window{Kube: s.m.Kube, Pools: map[string]*v1alpha1.NodePool{}, Of: map[string][]string{}}
	for name, mv := range s.byNode {
		from := mv.From
		if len(from) == 0 {
			from = []string{} // counts in no pool: only the engine's bound
		}
		w.Of[name] = from
		for _, p := range mv.From {
			w.Pools[p] = s.pools[p]
		}
	}
	return w
}

func (s *MoveSteps) move(node string) (*NodeMove, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	mv := s.byNode[node]
	if mv == nil {
		return nil, fmt.Errorf("node %s is not in the move's plan", node)
	}
	return mv, nil
}

// Before implements drain.NodeSteps: the move is recorded on the node before its
// cordon, so that a re-run knows the node is mid-move and which pools it leaves even
// after its role labels changed.
func (s *MoveSteps) Before(ctx context.Context, node string) error {
	mv, err := s.move(node)
	if err != nil {
		return err
	}
	b, err := json.Marshal(&nodepool.MoveState{From: mv.From, To: mv.To, Step: nodepool.StepDraining})
	if err != nil {
		return fmt.Errorf("encode move record: %w", err)
	}
	v := string(b)
	_, _, err = ownership.UpdateNode(ctx, s.m.Kube, node, func(n *corev1.Node) (*ownership.Desired, error) {
		d := &ownership.Desired{Labels: n.Labels, Taints: n.Spec.Taints, Annotations: map[string]*string{}}
		if n.Annotations[nodepool.MoveAnnotation] != v {
			d.Annotations[nodepool.MoveAnnotation], d.Changed = &v, true
		}
		return d, nil
	})
	if err != nil {
		return fmt.Errorf("record move on node %s: %w", node, err)
	}
	return nil
}

// After implements drain.NodeSteps: the last step of one node's move, one
// optimistic-lock patch: the target pool's labels and taints on, the old pools' off, the
// move and drain records removed, and the node uncordoned when the cordon is this
// tool's. Before it, pods still on the node that the target's new NoExecute taints would
// remove are checked: an ordinary one stops the node (a ownership.VictimsError: the taint
// manager would delete it with no budget check), DaemonSet and mirror pods are named.
// Its events: the warnings, node.moved and node.uncordoned.
func (s *MoveSteps) After(ctx context.Context, node string) ([]event.Event, error) {
	mv, err := s.move(node)
	if err != nil {
		return nil, err
	}
	var named []string
	result := drain.AlreadySchedulable
	_, _, err = ownership.UpdateNode(ctx, s.m.Kube, node, func(n *corev1.Node) (*ownership.Desired, error) {
		d, err := s.m.compute(n, s.target, mv.From, s.pools)
		if err != nil {
			return nil, err
		}
		if named, err = ownership.CheckNoExecute(ctx, s.m.Kube, n, d.Taints); err != nil {
			return nil, err
		}
		for _, k := range append([]string{nodepool.MoveAnnotation}, noderecord.Annotations()...) {
			if _, ok := n.Annotations[k]; ok {
				d.Annotations[k] = nil
			}
		}
		delete(d.Labels, noderecord.LabelState) // the drain's state label goes with its record
		result = drain.AlreadySchedulable
		if n.Spec.Unschedulable {
			result = drain.LeftCordoned
			if nodepool.CordonedByUs(n) {
				result = drain.Uncordoned
				d.Unschedulable = new(bool)
			}
		}
		d.Changed = true
		return d, nil
	})
	if err != nil {
		return nil, fmt.Errorf("finish the move of node %s: %w", node, err)
	}
	s.mu.Lock()
	mv.Removed, mv.Uncordon, mv.Moved = named, result, true
	s.mu.Unlock()
	return MovedEvents(mv), nil
}

// MovedEvents are the events of a moved node: the DaemonSet and mirror pods the new
// NoExecute taints removed, its warnings, node.moved and node.uncordoned.
func MovedEvents(mv *NodeMove) []event.Event {
	var out []event.Event
	if len(mv.Removed) > 0 {
		out = append(out, event.Event{Type: event.EventWarning, Node: mv.Node, Reason: "NoExecuteRemoves",
			Message: fmt.Sprintf("node %s: the NoExecute taints of pool %s remove DaemonSet/mirror pod(s) %s", mv.Node, mv.To, strings.Join(mv.Removed, ", "))})
	}
	for _, w := range mv.Warnings {
		out = append(out, event.Event{Type: event.EventWarning, Node: mv.Node, Message: w})
	}
	out = append(out, event.Event{Type: event.EventNodeMoved, Node: mv.Node, Message: mv.To})
	switch mv.Uncordon {
	case drain.Uncordoned:
		out = append(out, event.Event{Type: event.EventNodeUncordoned, Node: mv.Node})
	case drain.LeftCordoned:
		out = append(out, event.Event{Type: event.EventNodeUncordoned, Node: mv.Node, Reason: ReasonLeftCordoned,
			Message: "left cordoned: someone else cordoned it"})
	}
	return out
}

// DoneEvent is the node.moved event of a node already in the target pool.
func DoneEvent(mv *NodeMove) event.Event {
	return event.Event{Type: event.EventNodeMoved, Node: mv.Node, Reason: ReasonAlreadyInPool, Message: mv.To}
}

func listsHandler(n *corev1.Node, handler string) bool {
	for _, h := range n.Status.RuntimeHandlers {
		if h.Name == handler {
			return true
		}
	}
	return false
}

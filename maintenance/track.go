package maintenance

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// Node states in a Maintenance's status (the API's names).
const (
	NodePending    = v1alpha1.NodeStatePending
	NodeCordoned   = v1alpha1.NodeStateCordoned
	NodeDraining   = v1alpha1.NodeStateDraining
	NodeDrained    = v1alpha1.NodeStateDrained
	NodeBlocked    = v1alpha1.NodeStateBlocked
	NodeFailed     = v1alpha1.NodeStateFailed
	NodeReleased   = v1alpha1.NodeStateReleased
	NodeNotStarted = v1alpha1.NodeStateNotStarted
	NodeMoved      = v1alpha1.NodeStateMoved
	NodeUncordoned = v1alpha1.NodeStateUncordoned
	NodeGone       = v1alpha1.NodeStateGone
)

// maxBlockers bounds the blockers kept per node (the CRD's limit).
const maxBlockers = 64

// tracker folds a run's events into per-node status. It is not safe for concurrent use:
// one goroutine (the run's) owns it. dirty says whether something a reader cares about
// changed since the last take: a wait said again unchanged is not a change.
type tracker struct {
	nodes map[string]*v1alpha1.NodeStatus
	order []string
	dirty bool
	// evicted counts the pods this run evicted and requests its eviction requests (as
	// they are sent, so that a progress write says them); goneBefore the pods an earlier
	// run of the object evicted that went after its last status write, and askedBefore
	// the requests it sent after that write (counts).
	evicted, requests       int32
	goneBefore, askedBefore int32
	// resumed names the nodes an earlier status of the object had.
	resumed map[string]bool
	// action is the Maintenance's: it says when a node is finished (NodeStateDone).
	action v1alpha1.Action
	// waiting says, per node another run holds, who holds it (the engine's line).
	waiting map[string]string
	// over names the nodes whose end this run reported (drained, failed, released, ...):
	// an answer to an eviction sent before that end still counts, but never takes the
	// node back to Draining.
	over map[string]bool
}

// newTracker starts from the nodes of an earlier status (a resumed run) and names, the
// run's nodes in order.
func newTracker(prev []v1alpha1.NodeStatus, names []string, action v1alpha1.Action) *tracker {
	t := &tracker{nodes: map[string]*v1alpha1.NodeStatus{}, action: action, waiting: map[string]string{}, resumed: map[string]bool{}, over: map[string]bool{}}
	for i := range prev {
		n := prev[i]
		n.Blockers = slices.Clone(n.Blockers)
		t.nodes[n.Name] = &n
		t.resumed[n.Name] = true
	}
	for _, name := range names {
		t.order = append(t.order, name)
		if _, ok := t.nodes[name]; !ok {
			t.nodes[name] = &v1alpha1.NodeStatus{Name: name, State: NodePending}
			t.dirty = true
		}
	}
	return t
}

func (t *tracker) node(name string) *v1alpha1.NodeStatus {
	n, ok := t.nodes[name]
	if !ok {
		n = &v1alpha1.NodeStatus{Name: name, State: NodePending}
		t.nodes[name] = n
		t.order = append(t.order, name)
	}
	return n
}

func (t *tracker) setState(n *v1alpha1.NodeStatus, state string, ev event.Event) {
	if n.State == state {
		return
	}
	n.State = state
	ts := metav1.NewTime(ev.Time)
	n.Since = &ts
	t.dirty = true
}

// apply folds one event in, its sentences in the spec's words (SpecWording).
func (t *tracker) apply(ev event.Event) {
	ev.Message, ev.Cause, ev.Remedy = SpecWording(ev.Message), SpecWording(ev.Cause), SpecWording(ev.Remedy)
	t.noteWait(ev)
	switch ev.Type {
	case event.EventPlan:
		t.plan(ev)
	case event.EventNodeCordoned:
		if n := t.node(ev.Node); n.State == NodePending {
			t.setState(n, NodeCordoned, ev)
		}
	case event.EventEvictionStarted:
		t.requests++
		t.dirty = true
		if !t.over[ev.Node] {
			t.setState(t.node(ev.Node), NodeDraining, ev)
		}
	case event.EventEvictionAccepted:
		if n := t.node(ev.Node); !t.over[ev.Node] {
			t.setState(n, NodeDraining, ev)
			t.setBlocker(n, v1alpha1.Blocker{Pod: ev.Pod, Message: TerminatingBlocker})
		}
	case event.EventPodEvicted:
		n := t.node(ev.Node)
		if n.PodsLeft > 0 {
			n.PodsLeft--
		}
		n.Blockers = slices.DeleteFunc(n.Blockers, func(b v1alpha1.Blocker) bool { return b.Pod == ev.Pod })
		t.evicted++
		t.dirty = true
	case event.EventEvictionBlocked:
		if t.over[ev.Node] {
			return
		}
		t.setBlocker(t.node(ev.Node), v1alpha1.Blocker{Pod: ev.Pod, PDB: ev.PDB, Message: ev.Message, Cause: ev.Cause, Remedy: ev.Remedy})
	default:
		t.ended(ev)
	}
}

// plan folds the run's plan in: each node's pods to evict (and, for a node an earlier
// run of the object left, what that run's status said of them: inherit).
func (t *tracker) plan(ev event.Event) {
	if ev.Plan == nil {
		return
	}
	for _, np := range ev.Plan.Nodes {
		n := t.node(np.Name)
		left := int32(len(np.Steps))
		if t.resumed[np.Name] && n.State != NodeDrained {
			t.inherit(n, np.Steps)
		}
		if n.PodsLeft != left && n.State != NodeDrained {
			n.PodsLeft = left
			t.dirty = true
		}
	}
}

// ended folds in an event that ends a node's work (drained, failed, blocked, not
// started, gone, moved, uncordoned); any other event changes nothing.
func (t *tracker) ended(ev event.Event) {
	switch ev.Type {
	case event.EventNodeDrained, event.EventNodeFailed, event.EventNodeBlocked, event.EventNodeGone:
		t.over[ev.Node] = true
	}
	switch ev.Type {
	case event.EventNodeDrained:
		n := t.node(ev.Node)
		n.PodsLeft, n.Blockers, n.Message = 0, nil, ""
		t.setState(n, NodeDrained, ev)
		t.dirty = true
	case event.EventNodeFailed:
		n := t.node(ev.Node)
		n.Message = ev.Message
		if ev.Reason == drain.ReasonReleased {
			n.Blockers = nil
			t.setState(n, NodeReleased, ev)
			return
		}
		t.setState(n, NodeFailed, ev)
	case event.EventNodeBlocked:
		n := t.node(ev.Node)
		n.Message = ev.Message
		t.setState(n, NodeBlocked, ev)
	case event.EventNodeNotStarted:
		t.setState(t.node(ev.Node), NodeNotStarted, ev)
	case event.EventNodeGone:
		n := t.node(ev.Node)
		n.Message = ev.Message
		t.setState(n, NodeGone, ev)
	case event.EventNodeMoved:
		t.setState(t.node(ev.Node), NodeMoved, ev)
	case event.EventNodeUncordoned:
		n := t.node(ev.Node)
		if n.State == NodeNotStarted && t.action != v1alpha1.ActionUncordon {
			return // a node the deadline kept from starting, let go by the run: still not started
		}
		t.setState(n, NodeUncordoned, ev)
	}
}

// setBlocker records what pod b.Pod waits on (replacing what it waited on before).
func (t *tracker) setBlocker(n *v1alpha1.NodeStatus, b v1alpha1.Blocker) {
	i := slices.IndexFunc(n.Blockers, func(o v1alpha1.Blocker) bool { return o.Pod == b.Pod })
	switch {
	case i >= 0 && n.Blockers[i] == b:
		// the same wait said again: not a change
	case i >= 0:
		n.Blockers[i] = b
		t.dirty = true
	case len(n.Blockers) < maxBlockers:
		n.Blockers = append(n.Blockers, b)
		t.dirty = true
	}
}

// take returns the nodes' status in order and clears dirty.
func (t *tracker) take() []v1alpha1.NodeStatus {
	t.dirty = false
	out := make([]v1alpha1.NodeStatus, 0, len(t.order))
	for _, name := range t.order {
		n := *t.nodes[name]
		n.Blockers = slices.Clone(n.Blockers)
		out = append(out, n)
	}
	return out
}

// counts are the status counts: the nodes' from their states, the pods' from base (the
// earlier runs of the object) plus this run's (its summary once it ended, when sum is set).
func (t *tracker) counts(base v1alpha1.Counts, sum *drain.Summary) v1alpha1.Counts {
	c := v1alpha1.Counts{PodsEvicted: base.PodsEvicted + t.goneBefore + t.evicted, Evictions: base.Evictions + t.askedBefore + t.requests, Refusals: base.Refusals}
	if sum != nil {
		c.PodsEvicted = base.PodsEvicted + t.goneBefore + int32(sum.PodsEvicted)
		c.Evictions = base.Evictions + t.askedBefore + int32(sum.Evictions)
		c.Refusals += int32(sum.Refusals)
	}
	for _, name := range t.order {
		n := t.nodes[name]
		switch {
		case v1alpha1.NodeStateDone(n.State, t.action):
			c.NodesDrained++
		case n.State == NodeFailed || n.State == NodeReleased:
			c.NodesFailed++
		case n.State == NodeBlocked:
			c.NodesBlocked++
		case n.State == NodeNotStarted:
			c.NodesNotStarted++
		case n.State == NodeGone:
			c.NodesGone++
		default:
			c.NodesPending++
		}
		c.PodsPending += n.PodsLeft
	}
	if sum != nil {
		c.PodsPending = int32(sum.PodsPending)
		c.PodsForced, c.PodsLeftOnDeadNodes = int32(sum.PodsForced), int32(sum.PodsLeftOnDeadNodes)
	}
	return c
}

// noteWait keeps who holds each node the run waits for: set by the engine's warning,
// cleared by anything the run then does on the node.
func (t *tracker) noteWait(ev event.Event) {
	if ev.Node == "" {
		return
	}
	if ev.Type == event.EventWarning && ev.Reason == drain.ReasonHeld {
		if t.waiting[ev.Node] != ev.Message {
			t.waiting[ev.Node] = ev.Message
			t.dirty = true
		}
		return
	}
	if _, ok := t.waiting[ev.Node]; ok && ev.Type != event.EventWarning {
		delete(t.waiting, ev.Node)
		t.dirty = true
	}
}

// waits says who holds the nodes the run waits for, in the run's order ("" when none).
func (t *tracker) waits() string {
	var parts []string
	for _, name := range t.order {
		if w := t.waiting[name]; w != "" {
			parts = append(parts, w)
		}
	}
	return strings.Join(parts, "; ")
}

// leftOver says the nodes not finished by action: "n1 (Draining, 2 pods left), n2 (Pending)".
func leftOver(nodes []v1alpha1.NodeStatus, action v1alpha1.Action) string {
	var parts []string
	for _, n := range nodes {
		if v1alpha1.NodeStateDone(n.State, action) {
			continue
		}
		s := n.Name + " (" + n.State
		if n.PodsLeft > 0 {
			s += fmt.Sprintf(", %d pods left", n.PodsLeft)
		}
		parts = append(parts, s+")")
	}
	return strings.Join(parts, ", ")
}

package operation

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
)

// The standard Node conditions of KEP-5683 (Node lifecycle conditions) this layer writes.
// No other condition type is ever touched.
const (
	// ConditionDrainInProgress is True while a run drains the node.
	ConditionDrainInProgress corev1.NodeConditionType = "DrainInProgress"
	// ConditionDrained is True once a run has emptied the node (its drain criteria met).
	ConditionDrained corev1.NodeConditionType = "Drained"
	// ConditionMaintenanceInProgress is True while a move (or a rollout) works on the node.
	ConditionMaintenanceInProgress corev1.NodeConditionType = "MaintenanceInProgress"
)

// Condition reasons.
const (
	ReasonDraining    = "Draining"
	ReasonDrained     = "Drained"
	ReasonBlocked     = "Blocked"
	ReasonFailed      = "Failed"
	ReasonStopped     = "Stopped"
	ReasonMoving      = "Moving"
	ReasonUncordoned  = "Uncordoned"
	conditionsTimeout = 10 * time.Second
)

// condWrite is one node's pending condition change. clear marks a change that only sets
// False the conditions the node has True (an uncordon must not add conditions to a node
// that never had them).
type condWrite struct {
	conds map[corev1.NodeConditionType]corev1.NodeCondition
	clear bool
}

// conditionTap watches a run's events on their way to the caller and writes the Node
// conditions they imply, off the critical path: one writer goroutine, pending changes
// merged per node, so a drain never waits on a condition write. A user who may not patch
// nodes/status gets one warning event and the run goes on.
type conditionTap struct {
	o      *Operator
	action Action
	to     string
	origin string

	// owned by the forwarding goroutine
	// setTrue: the conditions this run set True, per node (clearing them needs no read)
	setTrue map[string]map[corev1.NodeConditionType]bool

	mu sync.Mutex
	// inProgress: the nodes this run drains now, whose DrainInProgress it keeps True
	// (reassert.go)
	inProgress map[string]bool
	started    chan struct{} // closed when the first node is marked draining
	startOnce  sync.Once
	order      []string
	pending    map[string]*condWrite
	stopped    bool
	denied     bool
	warnings   []event.Event
	wake       chan struct{}
}

// newConditionTap returns the tap of req, or nil when req writes no condition (a dry
// run, a cordon).
func (o *Operator) newConditionTap(req Request) *conditionTap {
	if req.Drain.DryRun != drain.DryRunNone || req.Action == Cordon {
		return nil
	}
	origin := req.origin.Command
	if origin == "" {
		origin = "kubectl-maintenance"
	}
	if u := req.origin.User; u != "" {
		origin += " (user " + u + ")"
	}
	return &conditionTap{o: o, action: req.Action, to: req.To, origin: origin, inProgress: map[string]bool{},
		setTrue: map[string]map[corev1.NodeConditionType]bool{},
		pending: map[string]*condWrite{}, wake: make(chan struct{}, 1), started: make(chan struct{})}
}

// run forwards every event of in to out, in order, and writes the conditions they imply.
// It returns when in is closed and every write has been made (or given up), having sent
// the warnings the writes gave.
func (t *conditionTap) run(ctx context.Context, in <-chan event.Event, out chan<- event.Event) {
	var wg sync.WaitGroup
	wg.Add(1)
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	go func() {
		defer wg.Done()
		t.writeAll(wctx)
	}()
	rctx, stopReassert := context.WithCancel(ctx)
	wg.Add(1)
	go func() {
		defer wg.Done()
		t.reassert(rctx)
	}()
	for ev := range in {
		t.observe(ev)
		for _, w := range t.takeWarnings() {
			out <- w
		}
		out <- ev
	}
	stopReassert()
	// A node this run left mid-drain is no longer being drained (a re-run says so again).
	for node := range t.draining() {
		t.markDraining(node, false)
		t.set(node, false, cond(ConditionDrainInProgress, false, ReasonStopped, "the run stopped before the node was empty: "+t.origin))
	}
	t.mu.Lock()
	t.stopped = true
	t.mu.Unlock()
	t.poke()
	// The last writes get a bounded time: a run that ends because the API server is gone
	// does not hang on them.
	timer := time.AfterFunc(conditionsTimeout, cancel)
	wg.Wait()
	timer.Stop()
	for _, w := range t.takeWarnings() {
		out <- w
	}
}

// observe turns one event into condition changes.
func (t *conditionTap) observe(ev event.Event) {
	if ev.Node == "" || ev.DryRun != "" {
		return
	}
	switch ev.Type {
	case event.EventNodeCordoned:
		if t.action == Uncordon {
			return
		}
		t.markDraining(ev.Node, true)
		conds := []corev1.NodeCondition{
			cond(ConditionDrainInProgress, true, ReasonDraining, "draining: "+t.origin),
			cond(ConditionDrained, false, ReasonDraining, "draining: "+t.origin),
		}
		if t.action == Move || t.action == Rollout {
			what := "moving to pool " + t.to
			if t.action == Rollout {
				what = "rolling out its pool's taints"
			}
			conds = append(conds, cond(ConditionMaintenanceInProgress, true, ReasonMoving, what+": "+t.origin))
		}
		t.set(ev.Node, false, conds...)
	case event.EventNodeDrained:
		t.markDraining(ev.Node, false)
		t.set(ev.Node, false, cond(ConditionDrainInProgress, false, ReasonDrained, "drained: "+t.origin),
			cond(ConditionDrained, true, ReasonDrained, "drained: "+t.origin))
	case event.EventNodeFailed, event.EventNodeBlocked:
		if !t.markDraining(ev.Node, false) {
			return
		}
		reason := ReasonFailed
		if ev.Type == event.EventNodeBlocked {
			reason = ReasonBlocked
		}
		t.set(ev.Node, false, cond(ConditionDrainInProgress, false, reason, shorten(ev.Message)))
	case event.EventNodeMoved, event.EventNodeUncordoned:
		if ev.Reason == ReasonLeftCordoned || ev.Reason == ReasonAlreadyInPool {
			return
		}
		t.markDraining(ev.Node, false)
		msg := "uncordoned: " + t.origin
		all := []corev1.NodeCondition{cond(ConditionDrainInProgress, false, ReasonUncordoned, msg),
			cond(ConditionDrained, false, ReasonUncordoned, msg), cond(ConditionMaintenanceInProgress, false, ReasonUncordoned, msg)}
		if set := t.setTrue[ev.Node]; len(set) > 0 {
			// This run set them: clear those, no need to read the node.
			var ours []corev1.NodeCondition
			for _, c := range all {
				if set[c.Type] {
					ours = append(ours, c)
				}
			}
			delete(t.setTrue, ev.Node)
			t.set(ev.Node, false, ours...)
			return
		}
		t.set(ev.Node, true, all...)
	}
}

func cond(typ corev1.NodeConditionType, status bool, reason, msg string) corev1.NodeCondition {
	s := corev1.ConditionFalse
	if status {
		s = corev1.ConditionTrue
	}
	return corev1.NodeCondition{Type: typ, Status: s, Reason: reason, Message: msg}
}

// shorten keeps a condition's message readable (a node's failure can name many pods).
func shorten(s string) string {
	const most = 512
	if len(s) <= most {
		return s
	}
	return s[:most-3] + "..."
}

// set queues conds for node, merged with what is pending for it.
func (t *conditionTap) set(node string, clear bool, conds ...corev1.NodeCondition) {
	for _, c := range conds {
		if c.Status == corev1.ConditionTrue {
			if t.setTrue[node] == nil {
				t.setTrue[node] = map[corev1.NodeConditionType]bool{}
			}
			t.setTrue[node][c.Type] = true
		}
	}
	t.mu.Lock()
	w, ok := t.pending[node]
	if !ok {
		w = &condWrite{conds: map[corev1.NodeConditionType]corev1.NodeCondition{}, clear: clear}
		t.pending[node] = w
		t.order = append(t.order, node)
	}
	w.clear = w.clear && clear
	for _, c := range conds {
		w.conds[c.Type] = c
	}
	t.mu.Unlock()
	t.poke()
}

func (t *conditionTap) poke() {
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// next takes the oldest pending change; ok is false once the run ended and nothing is
// left (or writing was refused).
func (t *conditionTap) next(ctx context.Context) (node string, w *condWrite, ok bool) {
	for {
		t.mu.Lock()
		if len(t.order) > 0 && !t.denied {
			node, t.order = t.order[0], t.order[1:]
			w = t.pending[node]
			delete(t.pending, node)
			t.mu.Unlock()
			return node, w, true
		}
		done := t.stopped || t.denied
		t.mu.Unlock()
		if done {
			return "", nil, false
		}
		select {
		case <-t.wake:
		case <-ctx.Done():
			return "", nil, false
		}
	}
}

func (t *conditionTap) writeAll(ctx context.Context) {
	for {
		node, w, ok := t.next(ctx)
		if !ok {
			return
		}
		t.write(ctx, node, w)
	}
}

// write patches node's status with w: a strategic merge patch of the conditions list
// (merged by type), so every other condition and status field is left as it is.
func (t *conditionTap) write(ctx context.Context, node string, w *condWrite) {
	nodes := t.o.Kube.CoreV1().Nodes()
	rctx, cancel := context.WithTimeout(ctx, conditionsTimeout)
	defer cancel()
	var have map[corev1.NodeConditionType]bool
	if w.clear {
		n, err := nodes.Get(rctx, node, metav1.GetOptions{})
		if err != nil {
			t.o.logger().V(2).Info("node conditions not read", "node", node, "err", err)
			return
		}
		have = map[corev1.NodeConditionType]bool{}
		for _, c := range n.Status.Conditions {
			have[c.Type] = c.Status == corev1.ConditionTrue
		}
	}
	var list []corev1.NodeCondition
	for _, typ := range []corev1.NodeConditionType{ConditionDrainInProgress, ConditionDrained, ConditionMaintenanceInProgress} {
		c, ok := w.conds[typ]
		if !ok || (w.clear && !have[typ]) {
			continue
		}
		list = append(list, c)
	}
	if len(list) == 0 {
		return
	}
	err := PatchNodeConditions(rctx, t.o.Kube, node, t.o.now(), list...)
	switch {
	case err == nil:
	case apierrors.IsForbidden(err):
		t.mu.Lock()
		t.denied = true
		t.warnings = append(t.warnings, event.Event{Type: event.EventWarning, Node: node, Reason: "ConditionsForbidden", Time: t.o.now(),
			Message: fmt.Sprintf("cannot patch nodes/status%s: the Node conditions DrainInProgress and Drained (KEP-5683) are not written; the %s goes on", t.userSuffix(), t.action)})
		t.mu.Unlock()
	default:
		t.o.logger().V(1).Info("node conditions not written", "node", node, "err", err)
	}
}

func (t *conditionTap) userSuffix() string {
	t.o.mu.Lock()
	defer t.o.mu.Unlock()
	if t.o.user == "" {
		return ""
	}
	return fmt.Sprintf(" (user %q)", t.o.user)
}

func (t *conditionTap) takeWarnings() []event.Event {
	t.mu.Lock()
	defer t.mu.Unlock()
	w := t.warnings
	t.warnings = nil
	return w
}

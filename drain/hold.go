package drain

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// newNodeHolds holds the run's nodes for run.
func newNodeHolds(c *core, run holdRun) nodeHolds { return nodeHolds{c: c, run: run} }

// A run owns the nodes it works on. Its record on a node (noderecord) names it; while it
// drains the node it renews a heartbeat there; every write of a node's cordon or record
// is conditional on the record not being another live run's. A run that finds a node held
// by another says so in one line naming the other run and waits for it (or, with
// --on-blocked=fail, stops); a run that ends before a node it holds is drained leaves the
// node cordoned in noderecord.StateFailed, with why.

// ReasonHeld is the Reason of the warning a run sends for a node another live run holds;
// its message names that run.
const ReasonHeld = "HeldByAnotherRun"

// heldPoll is how often a run waiting for a node another run holds looks at it again.
const heldPoll = 5 * time.Second

// releaseTimeout bounds the writes that let nodes go when a run ends by its timeout or
// an interruption (its own context has ended by then).
const releaseTimeout = 10 * time.Second

// self is the run's identity as recorded on its nodes.
func (nh *nodeHolds) self() *noderecord.Run { return nh.c.cfg.origin() }

// ours reports whether the node's record names this run.
func (nh *nodeHolds) ours(n *corev1.Node) bool {
	return noderecord.Read(n, "").Run.ID == nh.self().ID
}

// heldByLocked says, once per holder, that another run holds the node, and decides: wait
// for it (true), or stop the run (--on-blocked=fail; false: the node failed, untouched).
func (nh *nodeHolds) heldByLocked(ns *nodeState, held *noderecord.HeldError) bool {
	ns.pol.held, ns.pol.cordonedHere = false, false
	fail := nh.c.cfg.OnBlocked == OnBlockedFail
	ns.pol.heldMsg = held.Error()
	if ns.pol.heldBy != held.Holder.ID {
		ns.pol.heldBy = held.Holder.ID
		what := "waiting for it to let the node go (its heartbeat stops when it ends or dies)"
		if fail {
			what = "stopping (--on-blocked=fail)"
		}
		nh.c.emit(event.Event{Type: event.EventWarning, Node: ns.name, Reason: ReasonHeld,
			Message: fmt.Sprintf("%s; %s", held.Error(), what)})
	}
	if !fail {
		return true
	}
	msg := held.Error()
	nh.run.stoppedLocked(event.Blocker{Node: ns.name, Message: msg})
	nh.run.failNodeLocked(ns, msg)
	return false
}

// waitingOnHoldersLocked names the nodes, in plan order, the run was still waiting for
// another run to let go of: a Blocker with no pod, its message the holder as said.
func (r *run) waitingOnHoldersLocked() []event.Blocker {
	var out []event.Blocker
	for _, np := range r.pf.plan.Nodes {
		if ns := r.nodes[np.Name]; ns != nil && !ns.finished && !ns.pol.held && ns.pol.heldMsg != "" {
			out = append(out, event.Blocker{Node: ns.name, Message: ns.pol.heldMsg})
		}
	}
	return out
}

// waitHeld marks this run as waiting on the node (best effort: the holder leaves a node
// it never started cordoned for it) and waits heldPoll; false when ctx ended or the
// --not-after deadline passed (the node is then not started).
func (nh *nodeHolds) waitHeld(ctx context.Context, ns *nodeState) bool {
	id := nh.self().ID
	_, err := noderecord.Update(ctx, nh.c.cfg.Client.CoreV1(), ns.name, false, func(n *corev1.Node) (map[string]any, error) {
		if n.Annotations[noderecord.AnnotationWaiting] == id || nh.ours(n) {
			return nil, nil
		}
		return map[string]any{"metadata": map[string]any{"annotations": map[string]any{noderecord.AnnotationWaiting: id}}}, nil
	})
	if err != nil {
		nh.c.cfg.Logger.V(2).Info("could not mark the wait for a held node", "node", ns.name, "err", err)
	}
	t := nh.c.cfg.Clock.NewTimer(heldPoll)
	defer t.Stop()
	deadline, stop := nh.run.deadline()
	defer stop()
	select {
	case <-t.C():
	case <-deadline:
	case <-ctx.Done():
		return false
	}
	nh.c.lock()
	defer nh.c.unlock()
	if reason, msg := nh.run.mayStartLocked(); reason != "" {
		nh.run.notStartedLocked([]event.NodePlan{ns.plan}, reason, msg)
		return false
	}
	return true
}

// setState writes the node's state as this run's (see SetState), and lets the node go
// unless the state is noderecord.StateDraining. A node another live run holds now is not written:
// that is said, and the error returned.
func (nh *nodeHolds) setState(ctx context.Context, ns *nodeState, state, why string) error {
	err := nh.c.retryTransient(ctx, func() error {
		return SetState(ctx, nh.c.cfg.Client, ns.name, state, nh.c.cfg.Clock.Now(), why, nh.self())
	})
	nh.c.lock()
	defer nh.c.unlock()
	if held := asHeld(err); held != nil {
		ns.pol.held = false
		nh.c.emit(event.Event{Type: event.EventWarning, Node: ns.name, Reason: ReasonHeld,
			Message: fmt.Sprintf("%s; this run leaves the node to it (state %s not written)", held.Error(), state)})
		return err
	}
	if err == nil && state != noderecord.StateDraining {
		ns.pol.held = false
	}
	return err
}

// heartbeatWorkers is how many heartbeats a run renews at once: a round over 300 held
// nodes one after the other took 30 s and more on a loaded API server, long enough for a
// heartbeat to pass noderecord.HeartbeatExpiry (77 s seen in the fleet bench's F4) and a
// live run to be taken for dead.
const heartbeatWorkers = 8

// heartbeatCheck is how often the run looks for heartbeats to renew: a renewal that failed
// is tried again this much later, several times before noderecord.HeartbeatExpiry.
const heartbeatCheck = noderecord.HeartbeatInterval / 5

// heartbeat renews the heartbeat on every node the run holds once it is
// noderecord.HeartbeatInterval old (a write of the node's cordon or record renews it too),
// looking every heartbeatCheck, oldest first, heartbeatWorkers at once, until ctx ends. A
// heartbeat is so never much older than the interval and a check, well within
// noderecord.HeartbeatExpiry. A node whose record another run has taken meanwhile (this
// run was taken for dead) is left to it: said, and failed here without a write.
func (nh *nodeHolds) heartbeat(ctx context.Context) {
	nh.c.every(ctx, heartbeatCheck, func() {
		nh.c.lock()
		now := nh.c.cfg.Clock.Now()
		var held []*nodeState
		for _, ns := range nh.run.nodesLocked() {
			if ns.pol.held && !ns.finished && now.Sub(ns.pol.beatAt) >= noderecord.HeartbeatInterval {
				held = append(held, ns)
			}
		}
		sort.Slice(held, func(i, j int) bool { return held[i].pol.beatAt.Before(held[j].pol.beatAt) })
		nh.c.unlock()
		atOnce(held, heartbeatWorkers, func(ns *nodeState) { nh.renew(ctx, ns, now) })
	})
}

// renew renews the heartbeat of one held node at now: one PATCH while the record is this
// run's; otherwise it reads the node to learn why.
func (nh *nodeHolds) renew(ctx context.Context, ns *nodeState, now time.Time) {
	nh.c.lock()
	still := ns.pol.held && !ns.finished
	nh.c.unlock()
	if !still {
		return
	}
	if err := noderecord.RenewHeartbeat(ctx, nh.c.cfg.Client.CoreV1(), ns.name, *nh.self(), now); err == nil {
		nh.c.lock()
		ns.pol.beatAt = now
		nh.c.unlock()
		return
	}
	var lost noderecord.Run
	_, err := noderecord.Update(ctx, nh.c.cfg.Client.CoreV1(), ns.name, false, func(n *corev1.Node) (map[string]any, error) {
		rec := noderecord.Read(n, "")
		nh.c.lock()
		still := ns.pol.held && !ns.finished
		nh.c.unlock()
		switch {
		case !still:
			return nil, nil // let go meanwhile (released, not started, ...): no heartbeat
		case rec.Run.ID == nh.self().ID:
			return map[string]any{"metadata": noderecord.HeartbeatPatch(nh.c.cfg.Clock.Now())}, nil
		case rec.Run.ID == "":
			return nil, nil // the record was removed (uncordon): the drain cordons it again
		}
		lost = rec.Run
		return nil, nil
	})
	if err != nil {
		nh.c.cfg.Logger.V(2).Info("could not renew the heartbeat", "node", ns.name, "err", err)
		return
	}
	if lost.ID != "" {
		nh.c.lock()
		ns.pol.held = false
		nh.c.emit(event.Event{Type: event.EventWarning, Node: ns.name, Reason: "TakenByAnotherRun",
			Message: fmt.Sprintf("node %s was taken over by %s; this run leaves it", ns.name, lost)})
		nh.run.failNodeLocked(ns, "taken over by "+lost.String())
		nh.c.unlock()
	}
}

// releaseUnfinished is the end of a run by its timeout or an interruption: every node it
// still holds stays cordoned, in noderecord.StateFailed with why (never left "draining"), within
// releaseTimeout. Nodes another run took meanwhile are not written.
func (nh *nodeHolds) releaseUnfinished(result error) {
	why := "the run was interrupted before the node was drained; run the same command again to finish"
	var te *TimeoutError
	if errors.As(result, &te) {
		why = fmt.Sprintf("the run timed out (--timeout %s) before the node was drained", te.Timeout)
	}
	nh.c.lock()
	var held []*nodeState
	for _, ns := range nh.run.nodesLocked() {
		if ns.pol.held && !ns.finished {
			held = append(held, ns)
		}
	}
	nh.c.unlock()
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	atOnce(held, cordonsAtOnce, func(ns *nodeState) {
		_, err := noderecord.Update(ctx, nh.c.cfg.Client.CoreV1(), ns.name, false, func(n *corev1.Node) (map[string]any, error) {
			if !nh.ours(n) {
				return nil, nil
			}
			return map[string]any{"metadata": noderecord.StatePatch(noderecord.StateFailed, nh.c.cfg.Clock.Now(), nh.self(), why)}, nil
		})
		if err != nil {
			nh.c.cfg.Logger.V(2).Info("could not record the node failed", "node", ns.name, "err", err)
		}
	})
}

// atOnce calls fn for each item, at most k at a time, in the items' order, and returns
// once every call has.
func atOnce[T any](items []T, k int, fn func(T)) {
	sem := make(chan struct{}, max(1, k))
	var wg sync.WaitGroup
	for _, it := range items {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			fn(it)
		}()
	}
	wg.Wait()
}

// releaseNotStarted lets a node this run holds but never started go: a node it cordoned
// is uncordoned and its record removed (as "uncordon" does), unless another run waits
// for it (then it stays cordoned for that run, the record removed); a node cordoned
// before keeps its cordon, the record removed. A node another run holds by now is left
// to it, and that is said.
func (nh *nodeHolds) releaseNotStarted(name string, cordonedHere bool) {
	var waiter, other string
	var uncordoned bool
	// Not cut by the run's own end (its context ends once every node is finished, which
	// this node now is): bounded as releaseUnfinished's writes are.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(nh.run.context()), releaseTimeout)
	defer cancel()
	_, err := noderecord.Update(ctx, nh.c.cfg.Client.CoreV1(), name, false, func(n *corev1.Node) (map[string]any, error) {
		waiter, other, uncordoned = "", "", false
		if rec := noderecord.Read(n, ""); !nh.ours(n) {
			if rec.Run.ID != "" {
				other = rec.Run.String()
			}
			return nil, nil
		}
		meta := noderecord.RemovePatch(n)
		if meta == nil {
			meta = map[string]any{}
		}
		patch := map[string]any{"metadata": meta}
		waiter = n.Annotations[noderecord.AnnotationWaiting]
		switch {
		case waiter != "":
			ann, _ := meta["annotations"].(map[string]any)
			delete(ann, noderecord.AnnotationWaiting) // the waiter takes it
			delete(ann, noderecord.AnnotationCordoned)
		case cordonedHere && noderecord.CordonedByUs(n):
			patch["spec"] = map[string]any{"unschedulable": nil}
			uncordoned = true
		}
		return patch, nil
	})
	switch {
	case err != nil:
		nh.c.cfg.Logger.V(2).Info("could not let a node not started go", "node", name, "err", err)
	case other != "":
		nh.c.emit(event.Event{Type: event.EventWarning, Node: name, Reason: "NotStarted",
			Message: fmt.Sprintf("node %s not started: left to %s, which holds it now", name, other)})
	case waiter != "":
		nh.c.emit(event.Event{Type: event.EventWarning, Node: name, Reason: "NotStarted",
			Message: fmt.Sprintf("node %s not started: left cordoned to run %s, which waits for it", name, waiter)})
	case uncordoned:
		nh.c.emit(event.Event{Type: event.EventNodeUncordoned, Node: name, Reason: "NotStarted", Message: "uncordoned: not started"})
	}
}

// takeNode makes the node this run's for its drain: cordoned, with this run's record and
// heartbeat. A node another live run holds is waited for (said once per holder) until it
// lets the node go; with --on-blocked=fail, or past --not-after, the node ends there
// (errNodeEnded).
func (nh *nodeHolds) takeNode(ctx context.Context, ns *nodeState) error {
	for {
		var already bool
		err := nh.c.retryTransient(ctx, func() error {
			if nh.run.justCordoned(ns.name, nh.c.cfg.Clock.Now()) { // this run cordoned it a moment ago (faststart.go)
				return nil
			}
			node, err := nh.c.cfg.Client.CoreV1().Nodes().Get(ctx, ns.name, metav1.GetOptions{})
			if err != nil || (node.Spec.Unschedulable && node.Annotations[noderecord.AnnotationDrain] == noderecord.StateDraining && nh.ours(node)) {
				return err
			}
			nh.c.lock()
			had := ns.pol.held
			nh.c.unlock()
			// Uncordoned (or its record removed) since the batch cordon: cordon it again.
			if had && !node.Spec.Unschedulable {
				nh.c.emit(event.Event{Type: event.EventWarning, Node: ns.name, Reason: "Uncordoned",
					Message: fmt.Sprintf("node %s was uncordoned after this drain cordoned it; cordoning it again", ns.name)})
			}
			_, already, err = CordonForDrainAs(ctx, nh.c.cfg.Client, ns.name, false, nh.c.cfg.Clock.Now(), nh.self())
			if err == nil {
				nh.c.lock()
				if !had {
					ns.pol.cordonedHere = !already
				}
				ns.pol.held = true
				ns.pol.beatAt = nh.c.cfg.Clock.Now()
				nh.c.unlock()
			}
			return err
		})
		held := asHeld(err)
		if held == nil {
			return err
		}
		nh.c.lock()
		wait := nh.heldByLocked(ns, held)
		nh.c.unlock()
		if !wait || !nh.waitHeld(ctx, ns) {
			return errNodeEnded
		}
	}
}

// errNodeEnded: the node ended while the run waited for it (already said).
var errNodeEnded = errors.New("node ended while waiting for it")

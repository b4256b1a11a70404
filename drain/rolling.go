package drain

import (
	"context"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// newRoller rolls the plan's nodes (in order, and as the plan read them: known) for run.
func newRoller(c *core, run rollHost, nodes []event.NodePlan, known map[string]*corev1.Node) roller {
	return roller{c: c, run: run, nodes: nodes, known: known}
}

// ReasonRoom is the Reason of the warning a rolling drain gives while no node may start.
const ReasonRoom = "PoolBudget"

func (w *rolling) stop() { w.haltOnce.Do(func() { close(w.halt) }) }

// admit waits until Config.Rolling lets node start, saying once per change what it
// waits on; transient API errors are retried. False when it did not admit the node: the
// run halted or ctx ended, or a lasting error, which fails the node.
func (ro *roller) admit(ctx context.Context, w *rolling, node string, pending []int) bool {
	c := ro.c
	said := ""
	for {
		var why string
		err := c.retryTransient(ctx, func() (err error) {
			why, err = c.cfg.Rolling.Room(ctx, ro.admission(node))
			return err
		})
		if err != nil {
			if ctx.Err() == nil {
				c.lock()
				ro.run.failNodeLocked(ro.run.nodeLocked(node), "may not start: "+err.Error())
				c.unlock()
			}
			return false
		}
		if why == "" {
			return true
		}
		for _, j := range pending {
			if other := ro.nodes[j].Name; other != node && c.cfg.Rolling.Unavailable(other) {
				return false // a pending member out of service goes first: the caller picks again
			}
		}
		if why != said {
			said = why
			c.emit(event.Event{Type: event.EventWarning, Reason: ReasonRoom, Node: node, Message: why})
		}
		wctx, cancel := context.WithCancel(ctx)
		waited := make(chan struct{})
		c.goroutine(func() {
			defer close(waited)
			_ = c.cfg.Rolling.Wait(wctx) // an error: look again (Room retries)
		})
		select {
		case <-waited:
		case <-w.freed:
		case <-w.halt:
		case <-ctx.Done():
		}
		cancel()
		<-waited
		select {
		case <-w.halt:
			return false
		default:
		}
		if ctx.Err() != nil {
			return false
		}
	}
}

// admission is what the engine knows of the run for node's admission.
func (ro *roller) admission(node string) Admission {
	ro.c.lock()
	defer ro.c.unlock()
	a := Admission{Node: node}
	for _, np := range ro.nodes {
		switch ns := ro.run.nodeLocked(np.Name); {
		case ns.soaking:
			a.Running = append(a.Running, ns.name) // its slot is held while it soaks
		case ns.finished && !ns.failed:
			a.Done = append(a.Done, ns.name)
		case ns.cordoning && !ns.finished:
			a.Running = append(a.Running, ns.name)
		}
	}
	return a
}

// drainRolling is drainNodes for a rolling drain (Config.Rolling): at most
// MaxParallelNodes nodes in progress, each cordoned only as it starts, once Rolling admits
// it. When a slot frees, the node that starts is the first pending one, in plan order,
// whose pods the budgets let go now (nextLocked), so that a node free to drain does not
// queue behind one a budget holds: a held node would keep its slot, cordoned, for as long
// as the budget holds it (a StatefulSet's pod can hold its budget for 2 minutes).
func (ro *roller) drainRolling(ctx context.Context) {
	c := ro.c
	slots := make(chan struct{}, c.cfg.MaxParallelNodes)
	w := &rolling{freed: make(chan struct{}, 1), halt: make(chan struct{})}
	c.lock()
	ro.run.rollingLocked(w)
	c.unlock()
	defer ro.haltAtDeadline(ctx, w)()
	pending := make([]int, len(ro.nodes)) // indexes into the plan's nodes
	for i := range pending {
		pending[i] = i
	}
	for len(pending) > 0 {
		select {
		case slots <- struct{}{}:
		case <-w.halt:
		case <-ctx.Done():
			// Stopped before they started: not started when the run could not have
			// started them anyway, else left as a pause leaves them (run.stopUnstarted).
			c.lock()
			ro.stopLocked(pending)
			c.unlock()
			return
		}
		c.lock()
		stopped := ro.stopLocked(pending)
		i := -1
		if !stopped {
			i = ro.nextLocked(pending)
		}
		c.unlock()
		if stopped {
			return
		}
		np := ro.nodes[i]
		admitted := ro.admit(ctx, w, np.Name, pending)
		if ctx.Err() != nil {
			return
		}
		c.lock()
		ns := ro.run.nodeLocked(np.Name)
		failed := ns.finished // admission failed for good
		stopped = !failed && ro.stopLocked(pending)
		if admitted && !stopped {
			ns.cordoning = true // counted as running from now on
		}
		c.unlock()
		if stopped {
			return
		}
		if failed || !admitted {
			<-slots
			pending = slices.DeleteFunc(pending, func(j int) bool { return failed && j == i })
			continue
		}
		pending = slices.DeleteFunc(pending, func(j int) bool { return j == i })
		ro.start(ctx, w, ns, slots)
	}
}

// haltAtDeadline halts w when --not-after passes (one reader of its timer: every wait
// sees the run halt); the returned func stops the timer.
func (ro *roller) haltAtDeadline(ctx context.Context, w *rolling) func() {
	deadline, stop := ro.run.deadline()
	if deadline != nil {
		ro.c.goroutine(func() {
			select {
			case <-deadline:
				w.stop()
			case <-ctx.Done():
			}
		})
	}
	return stop
}

// start cordons an admitted node (its Before step first) and drains and soaks it in the
// slot it took; the slot is given back, and a waiter told, when it ends.
func (ro *roller) start(ctx context.Context, w *rolling, ns *nodeState, slots chan struct{}) {
	if !ro.run.startNode(ctx, ns.name) {
		<-slots
		return
	}
	ro.c.goroutine(func() {
		defer func() {
			<-slots
			select {
			case w.freed <- struct{}{}:
			default:
			}
		}()
		ro.run.drainNode(ctx, ns)
		ro.soak(ctx, w, ns)
	})
}

// soak holds a drained node's slot for Policy.Soak (counted as in progress by the
// window) while another node of the run is still to start; it ends early when the run
// halts or is cancelled.
func (ro *roller) soak(ctx context.Context, w *rolling, ns *nodeState) {
	c := ro.c
	d := c.cfg.Soak - ro.drainedBefore(ns.name)
	c.lock()
	waiting := false
	for _, other := range ro.run.nodesLocked() {
		waiting = waiting || (!other.cordoning && !other.finished)
	}
	do := d > 0 && ns.finished && !ns.failed && waiting
	ns.soaking = do
	c.unlock()
	if !do {
		return
	}
	c.cfg.Logger.V(1).Info("soaking", "node", ns.name, "for", d)
	t := c.cfg.Clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
	case <-w.halt:
	case <-ctx.Done():
	}
	c.lock()
	ns.soaking = false
	c.unlock()
}

// drainedBefore is how long ago an earlier run drained the node, as the plan found its
// record (0 when this run drains it): a run resumed by a new leader soaks such a node for
// what is left of its soak, not for a whole one again.
func (ro *roller) drainedBefore(name string) time.Duration {
	n := ro.known[name]
	if n == nil {
		return 0
	}
	rec := noderecord.Read(n, "")
	if (rec.State != noderecord.StateDrained && rec.State != noderecord.StateSelectedDrained) || rec.Since.IsZero() {
		return 0
	}
	return max(0, ro.c.cfg.Clock.Since(rec.Since))
}

// stopLocked records the pending nodes as not started when the run may start no more
// (--not-after passed, --on-blocked=fail stopped it), and says so.
func (ro *roller) stopLocked(pending []int) bool {
	reason, msg := ro.run.mayStartLocked()
	if reason == "" {
		return false
	}
	var rest []event.NodePlan
	for _, j := range pending {
		rest = append(rest, ro.nodes[j])
	}
	ro.run.notStartedLocked(rest, reason, msg)
	return true
}

// nextLocked picks the pending node a rolling drain starts next: the first out of service
// (cordoned before the run, or NotReady), else the first in plan order none of whose pods
// a budget would hold back now, else the one with the fewest such pods.
func (ro *roller) nextLocked(pending []int) int {
	for _, i := range pending {
		if np := ro.nodes[i]; np.AlreadyCordoned || ro.c.cfg.Rolling.Unavailable(np.Name) {
			return i
		}
	}
	best, fewest := pending[0], -1
	for _, i := range pending {
		held := ro.heldLocked(ro.nodes[i])
		if held == 0 {
			return i
		}
		if fewest < 0 || held < fewest {
			best, fewest = i, held
		}
	}
	return best
}

// heldLocked counts the planned pods of a node that a budget would hold back now: under a
// budget that allows no disruption, or on which pods of this run already wait.
func (ro *roller) heldLocked(np event.NodePlan) int {
	n := 0
	for _, s := range np.Steps {
		for _, b := range s.Decision.Budgets {
			key := b.Key()
			if live := ro.run.budgetLocked(key); ro.run.parkedOnLocked(key) > 0 || (live != nil && live.Allowed() <= 0) {
				n++
				break
			}
		}
	}
	return n
}

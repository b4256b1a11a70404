package operation

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// Reasons qualifying a node.uncordoned event.
const (
	// ReasonLeftCordoned: the cordon is someone else's, so the node stays cordoned (this
	// tool's records are removed).
	ReasonLeftCordoned = "LeftCordoned"
	// ReasonAlreadySchedulable: the node was schedulable; nothing was done.
	ReasonAlreadySchedulable = "AlreadySchedulable"
)

// planCordon reads each node and decides, as the real run and both dry runs do.
func (o *Operator) planCordon(ctx context.Context, req Request, names []string) ([]NodeChange, error) {
	out := make([]NodeChange, 0, len(names))
	for _, name := range names {
		n, err := o.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("get node %s: %w", name, err)
		}
		out = append(out, decide(req, n))
	}
	return out, nil
}

func decide(req Request, n *corev1.Node) NodeChange {
	c := NodeChange{Node: n.Name, CordonedBy: noderecord.CordonedBy(n)}
	if req.Action == Cordon {
		c.Already = n.Spec.Unschedulable
	} else {
		c.Uncordon = drain.DecideUncordon(n, req.Force)
	}
	return c
}

// runCordon cordons or uncordons each node in turn: one node.cordoned or node.uncordoned
// event per node, or node.failed. An uncordon first restores the Deployments a --surge
// drain left surged for the nodes' pods (unwindSurges). Cancelled, it stops before the next change (a node
// whose read was in flight is left as it was).
func (o *Operator) runCordon(ctx context.Context, req Request, names []string, events chan<- event.Event) (Summary, error) {
	var sum Summary
	var failed []string
	fail := func(node string, err error) {
		msg := strings.Join(strings.Fields(err.Error()), " ")
		failed = append(failed, msg)
		o.emit(events, event.Event{Type: event.EventNodeFailed, Node: node, Message: msg, DryRun: dryRunLabel(req.Drain.DryRun)})
	}
	server := req.Drain.DryRun == drain.DryRunServer
	held := map[string]bool{}
	if req.Action == Uncordon {
		// A node another live run holds is that run's: uncordon neither uncordons it nor
		// unwinds its surges (unless --force).
		for _, name := range names {
			if err := o.heldByLiveRun(ctx, req, name); err != nil {
				held[name] = true
				fail(name, err)
			}
		}
		// What a --surge drain left surged for pods of the nodes goes back first.
		for _, name := range names {
			if held[name] {
				continue
			}
			for _, msg := range o.unwindSurges(ctx, req, name, events) {
				failed = append(failed, msg)
				o.emit(events, event.Event{Type: event.EventNodeFailed, Node: name, Message: msg, DryRun: dryRunLabel(req.Drain.DryRun)})
			}
		}
	}
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return sum, err
		}
		if held[name] {
			continue
		}
		n, err := o.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if ctx.Err() != nil {
			return sum, ctx.Err() // cancelled while asking: change nothing
		}
		if err != nil {
			fail(name, fmt.Errorf("get node %s: %w", name, err))
			continue
		}
		c := decide(req, n)
		if req.Action == Cordon {
			if req.Drain.DryRun != drain.DryRunClient {
				if c.Already, err = drain.CordonAs(ctx, o.Kube, n, server, o.now(), &req.origin); err != nil {
					fail(name, err)
					continue
				}
			}
			sum.Changes = append(sum.Changes, c)
			o.emit(events, event.Event{Type: event.EventNodeCordoned, Node: name, Already: c.Already, DryRun: dryRunLabel(req.Drain.DryRun)})
			continue
		}
		if req.Drain.DryRun != drain.DryRunClient {
			if c.Uncordon, err = drain.Uncordon(ctx, o.Kube, n, req.Force, server); err != nil {
				fail(name, err)
				continue
			}
		}
		sum.Changes = append(sum.Changes, c)
		o.emit(events, UncordonEvent(name, c.Uncordon, c.CordonedBy, req.Drain.DryRun))
	}
	if len(failed) > 0 {
		return sum, &NodesError{Failed: failed}
	}
	return sum, nil
}

// heldByLiveRun returns a *noderecord.HeldError (wrapped, with what to do) when another
// live run holds the node: an uncordon without Force leaves it to that run.
func (o *Operator) heldByLiveRun(ctx context.Context, req Request, name string) error {
	if req.Force {
		return nil
	}
	n, err := o.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil // the uncordon's own read says it
	}
	rec := noderecord.Read(n, "")
	holder, ok := noderecord.DefaultLiveness.HeldBy(rec, "", o.now())
	if !ok {
		return nil
	}
	return fmt.Errorf("%w: uncordon leaves it to that run; stop that run first (Ctrl-C, or kubectl maintenance cancel for a Maintenance) or use --force",
		&noderecord.HeldError{Node: name, Holder: holder, Heartbeat: rec.Heartbeat, Since: rec.Since})
}

// UncordonEvent is the node.uncordoned event of an uncordon that ended in res: Reason is
// empty, LeftCordoned or AlreadySchedulable, and Message says it for a person ("left
// cordoned: its cordon was made by kubectl, not kubectl-maintenance").
func UncordonEvent(node string, res drain.UncordonResult, cordonedBy []string, dryRun drain.DryRun) event.Event {
	ev := event.Event{Type: event.EventNodeUncordoned, Node: node, DryRun: dryRunLabel(dryRun)}
	switch res {
	case drain.AlreadySchedulable:
		ev.Reason, ev.Message = ReasonAlreadySchedulable, "already uncordoned"
	case drain.LeftCordoned:
		by := strings.Join(cordonedBy, ", ")
		if by == "" {
			by = "someone else"
		}
		ev.Reason = ReasonLeftCordoned
		ev.Message = fmt.Sprintf("left cordoned: its cordon was made by %s, not %s", by, noderecord.FieldManager)
	}
	return ev
}

// dryRunLabel is an event's DryRun field: "" for a real run.
func dryRunLabel(d drain.DryRun) string {
	if d == drain.DryRunNone {
		return ""
	}
	return string(d)
}

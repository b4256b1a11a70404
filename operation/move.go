package operation

import (
	"context"
	"fmt"
	"strings"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool"
)

// ReasonAlreadyInPool qualifies the node.moved event of a node that was in the target
// pool already (nothing was done).
const ReasonAlreadyInPool = "AlreadyInPool"

func (o *Operator) mover(req Request, events chan<- event.Event) *nodepool.Mover {
	m := &nodepool.Mover{Kube: o.Kube, Pools: o.Pools, AllowMissingHandler: req.AllowMissingHandler, Timeout: req.Drain.Timeout}
	if events != nil {
		m.Progress = func(ev nodepool.MoveEvent) {
			for _, e := range MoveEvents(ev) {
				o.emit(events, e)
			}
		}
	}
	return m
}

// planMove is the move's plan: per node the pools it leaves and the exact label and
// taint change. Bad input (an unknown pool, a node not in From, a missing RuntimeClass
// handler) is an error before anything changes.
func (o *Operator) planMove(ctx context.Context, req Request, names []string) (*MovePlan, error) {
	moves, target, err := o.mover(req, nil).Plan(ctx, names, req.To, req.From)
	if err != nil {
		return nil, err
	}
	return &MovePlan{Moves: moves, Target: target}, nil
}

// runMove carries a move out (req.Moves, or a fresh plan): rolling, batch by batch. A dry
// run drains the nodes still to move in that mode and changes no label.
func (o *Operator) runMove(ctx context.Context, req Request, names []string, events chan<- event.Event) (Summary, error) {
	plan := req.Moves
	if plan == nil {
		var err error
		if plan, err = o.planMove(ctx, req, names); err != nil {
			return Summary{}, err
		}
	}
	sum := Summary{Moves: plan.Moves}
	d := o.Drainer(req, events)
	if req.DryRun != drain.DryRunNone {
		var todo []string
		for _, mv := range plan.Moves {
			if !mv.Done {
				todo = append(todo, mv.Node)
			}
		}
		if len(todo) == 0 {
			return sum, nil
		}
		var err error
		sum.Summary, err = d.Run(ctx, todo)
		return sum, err
	}
	var err error
	sum.Summary, err = o.mover(req, events).Run(ctx, plan.Moves, plan.Target, d)
	return sum, err
}

// MoveEvents turns a step of a rolling move or rollout into the layer's events: a batch
// is pool.batch, a wait on a pool's budget a warning, a node in the target already
// node.moved (AlreadyInPool), a moved node its warnings, node.moved and node.uncordoned.
func MoveEvents(ev nodepool.MoveEvent) []event.Event {
	switch ev.Type {
	case nodepool.MoveBatch:
		return []event.Event{{Type: event.EventPoolBatch, Message: ev.Message}}
	case nodepool.MoveWaiting:
		return []event.Event{{Type: event.EventWarning, Reason: "PoolBudget", Message: ev.Message}}
	case nodepool.MoveNodeDone:
		return []event.Event{{Type: event.EventNodeMoved, Node: ev.Node, Reason: ReasonAlreadyInPool, Message: ev.Move.To}}
	case nodepool.MoveNodeMoved:
		mv := ev.Move
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
	return nil
}

package operation

import (
	"context"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/roll"
)

// ReasonAlreadyInPool qualifies the node.moved event of a node that was in the target
// pool already (nothing was done).
const ReasonAlreadyInPool = roll.ReasonAlreadyInPool

// NodeMove is one node's move: its plan, and after Run its result.
type NodeMove = roll.NodeMove

// RolloutResult is what a rollout did.
type RolloutResult = roll.RolloutResult

func (o *Operator) mover(req Request) *roll.Mover {
	return &roll.Mover{Kube: o.Kube, Pools: o.Pools, AllowMissingHandler: req.AllowMissingHandler}
}

// planMove is the move's plan: per node the pools it leaves and the exact label and
// taint change. Bad input (an unknown pool, a node not in From, a missing RuntimeClass
// handler) is an error before anything changes.
func (o *Operator) planMove(ctx context.Context, req Request, rz *Resolved) (*MovePlan, error) {
	m := o.mover(req)
	m.Known = rz.objects // read by the resolution a moment ago: not read again
	moves, target, err := m.Plan(ctx, rz.Nodes, req.To, req.From)
	if err != nil {
		return nil, err
	}
	return &MovePlan{Moves: moves, Target: target}, nil
}

// runMove carries a move out (req.Moves, or a fresh plan): one run of the drain engine
// in the window of the pools the nodes leave (roll.Window), at most the target's
// maxUnavailable nodes at once, each node relabelled and uncordoned as soon as it is
// drained (roll.MoveSteps). Nodes mid-move (a re-run) go first. A dry run drains the
// nodes still to move in that mode and changes no label.
func (o *Operator) runMove(ctx context.Context, req Request, rz *Resolved, events chan<- event.Event) (Summary, error) {
	plan := req.Moves
	if plan == nil {
		var err error
		if plan, err = o.planMove(ctx, req, rz); err != nil {
			return Summary{}, err
		}
	}
	sum := Summary{Moves: plan.Moves}
	var resumed, fresh []string
	for _, mv := range plan.Moves {
		switch {
		case mv.Done && req.Drain.DryRun == drain.DryRunNone:
			o.emit(events, roll.DoneEvent(mv))
		case mv.Done:
		case mv.Resume:
			resumed = append(resumed, mv.Node)
		default:
			fresh = append(fresh, mv.Node)
		}
	}
	todo := append(resumed, fresh...)
	if len(todo) == 0 {
		return sum, nil
	}
	var w wiring
	if req.Drain.DryRun == drain.DryRunNone {
		steps, err := o.mover(req).Steps(ctx, plan.Moves, plan.Target)
		if err != nil {
			return sum, err
		}
		w.rolling, w.steps = steps.Window(), steps
		if limit := plan.Target.MaxUnavailableOrDefault(); req.Drain.MaxParallelNodes == 0 || req.Drain.MaxParallelNodes > limit {
			req.Drain.MaxParallelNodes = limit
		}
	}
	eng, err := o.engine(req, events, w)
	if err != nil {
		return sum, err
	}
	sum.Summary, err = eng.Run(ctx, todo)
	return sum, err
}

package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-maintenance/kubectl-maintenance/dashboard/source"
	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance"
	"github.com/kubectl-maintenance/kubectl-maintenance/operation"
	"github.com/kubectl-maintenance/kubectl-maintenance/render"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui/confirm"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui/data"
)

// backend is the dashboard's tui.Backend: snapshots from dashsource, actions planned and
// run by the operations layer. Several actions may run at once; a node is in at most one.
type backend struct {
	ctx  context.Context
	c    *Common
	op   *operation.Operator
	runs *operation.Runs
	src  *source.Source
	// ledger is the budgets' view the dashboard's concurrent drains share (drain.Ledger):
	// a pod whose budget another action's evictions took the room of is not asked.
	ledger *drain.Ledger

	mu sync.Mutex // guards shown
	// shown is the move plan the dialog showed last (Plan), with its request's key: Start
	// carries out what the user confirmed instead of planning again.
	shown struct {
		req  confirm.Request
		plan *operation.Plan
	}
}

func newBackend(ctx context.Context, c *Common, cs kubernetes.Interface, pc client.Client, src *source.Source) *backend {
	op := &operation.Operator{Kube: cs, Pools: pc, Logger: klog.Background(), User: c.fallbackUser()}
	return &backend{ctx: ctx, c: c, op: op, runs: op.Runs(ctx, render.ErrorLine), src: src, ledger: drain.NewLedger()}
}

// Snapshots implements tui.Backend (nothing without a source).
func (b *backend) Snapshots() <-chan data.Snapshot {
	if b.src == nil {
		return nil
	}
	return b.src.Snapshots()
}

// DashboardBackend is the dashboard's Backend on the cluster c's flags point at, without
// a terminal and without the watches (Snapshots delivers nothing): what a test drives the
// dashboard's actions through. wait waits for the actions once ctx is cancelled.
func DashboardBackend(ctx context.Context, c *Common) (backend tui.Backend, wait func(), err error) {
	cs, err := c.Client()
	if err != nil {
		return nil, nil, err
	}
	pc, err := c.PoolClient()
	if err != nil {
		return nil, nil, err
	}
	b := newBackend(ctx, c, cs, pc, nil)
	return b, b.wait, nil
}

// request turns a confirmed dialog into the operations layer's request: the drain
// settings are the dialog's (which start from drain.DefaultSettings, as the commands').
func (b *backend) request(req confirm.Request) operation.Request {
	d := NewDrainOptions(b.c)
	d.Settings = req.Options.Settings // the dialog fills the drain's settings
	d.Nodes.Names = req.Nodes
	r := d.request(operation.Action(req.Action))
	r.To = req.Pool
	r.Command = fmt.Sprintf("kubectl maintenance dashboard (%s %s)", req.Action, strings.Join(req.Nodes, " "))
	r.Drain.Ledger = b.ledger
	return r
}

// planTimeout bounds the dialog's plan.
const planTimeout = 30 * time.Second

// Plan implements tui.Backend: the drain's plan, as the plan command prints it, after a
// move's label and taint changes.
func (b *backend) Plan(req confirm.Request) (string, error) {
	switch req.Action {
	case confirm.Cordon:
		return fmt.Sprintf("Mark %d node(s) unschedulable; no pod is evicted.", len(req.Nodes)), nil
	case confirm.Uncordon:
		return fmt.Sprintf("Make %d node(s) schedulable again (a node cordoned by someone else stays cordoned).", len(req.Nodes)), nil
	}
	// A plan is a few lists: bounded, so that a server that stopped answering shows as an
	// error in the dialog rather than "Planning..." for ever.
	ctx, cancel := context.WithTimeout(b.ctx, planTimeout)
	defer cancel()
	r := b.request(req)
	var head bytes.Buffer
	if req.Action == confirm.Move {
		p, err := b.op.Plan(ctx, r)
		if err != nil {
			return "", errors.New(render.ErrorLine(err))
		}
		b.keep(req, p)
		for _, mv := range p.Move.Moves {
			fmt.Fprintf(&head, "node/%s -> %s: %v\n", mv.Node, mv.To, mv.Diff)
		}
		head.WriteString("\n")
		r.Resolved = p.Resolved // the drain's plan of the same nodes: not resolved again
	}
	r.Action = operation.Drain
	p, err := b.op.Plan(ctx, r)
	if err != nil {
		return "", errors.New(render.ErrorLine(err))
	}
	render.Plan(&head, p.Drain)
	return head.String(), nil
}

// Start implements tui.Backend: the operation runs in the layer's Runs (each node in at
// most one running action).
func (b *backend) Start(req confirm.Request) (<-chan event.Event, func(), error) {
	r, err := b.planned(b.ctx, b.op, req, b.request(req))
	if err != nil {
		return nil, nil, err
	}
	events, cancel, err := b.runs.Start(r)
	return events, cancel, err
}

// planned is a move's request with its plan (Request.Moves) and the plan's resolution, as
// the pool move command runs it: the plan the dialog showed and the user confirmed
// (Plan), else planned now (the permission preflight included). Any other request is
// returned as it is.
func (b *backend) planned(ctx context.Context, op *operation.Operator, req confirm.Request, r operation.Request) (operation.Request, error) {
	if r.Action != operation.Move {
		return r, nil
	}
	p := b.take(req)
	if p == nil {
		var err error
		if p, err = op.Plan(ctx, r); err != nil {
			return r, err
		}
	}
	r.Moves, r.Resolved = p.Move, p.Resolved
	return r, nil
}

// keep remembers the move plan the dialog shows for req (the dialog shows one at a time).
func (b *backend) keep(req confirm.Request, p *operation.Plan) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.shown.req, b.shown.plan = req, p
}

// take returns (and forgets) the plan the dialog showed for req, nil if it showed none.
func (b *backend) take(req confirm.Request) *operation.Plan {
	b.mu.Lock()
	defer b.mu.Unlock()
	// The same action, nodes, pool and settings (as tui's dialog compares them).
	if b.shown.plan == nil || !reflect.DeepEqual(b.shown.req, req) {
		return nil
	}
	p := b.shown.plan
	b.shown.req, b.shown.plan = confirm.Request{}, nil
	return p
}

// wait waits for every action to end (after the backend's context is cancelled).
func (b *backend) wait() { b.runs.Wait() }

// ControlMaintenance pauses, resumes or cancels a Maintenance for the dashboard.
func (b *backend) ControlMaintenance(name, op string) error {
	if b.op.Pools == nil {
		return fmt.Errorf("no client for Maintenances")
	}
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	switch op {
	case tui.MaintenancePause, tui.MaintenanceResume:
		return maintenance.SetPaused(ctx, b.op.Pools, []string{name}, false, op == tui.MaintenancePause, func(string) {})
	case tui.MaintenanceCancel:
		return maintenance.Cancel(ctx, b.op.Pools, name)
	}
	return fmt.Errorf("unknown maintenance action %q", op)
}

// Events implements tui.Backend: the object's Events, from both Event APIs.
func (b *backend) Events(ref data.Ref) ([]data.EventRow, error) {
	ctx, cancel := context.WithTimeout(b.ctx, source.DefaultRequestTimeout)
	defer cancel()
	return source.Events(ctx, b.op.Kube, ref)
}

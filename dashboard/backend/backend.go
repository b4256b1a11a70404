// Package backend is the dashboard's side that talks to the API: the tui.Backend that
// plans and runs the actions the dialog confirms (through the operations layer, several
// at once, a node in at most one), keeps the plan the dialog showed so that the action
// carries out what the user confirmed, controls Maintenances and reads an object's
// Events. The views (tui) never call the API; they are handed this backend.
package backend

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

	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/render"
	"github.com/kubectl-maintenance/kubectl-maintenance/dashboard/source"
	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance"
	"github.com/kubectl-maintenance/kubectl-maintenance/operation"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui/confirm"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui/data"
)

// RequestFunc turns a confirmed action on nodes, with the drain settings of the dialog,
// into the operations layer's request, as the commands build theirs (the front end's
// wiring: the client's burst, the wait lines, the command line recorded on the nodes).
type RequestFunc func(action operation.Action, settings drain.Settings, nodes []string) operation.Request

// Config is what a Backend works with.
type Config struct {
	// Kube is the cluster's clientset; EventKube the one for node Events (nil: Kube).
	Kube, EventKube kubernetes.Interface
	// Pools is the NodePool and Maintenance client (nil: no move, no Maintenance control).
	Pools client.Client
	// User names the user when the API server will not say (operation.Operator.User).
	User string
	// Source feeds the views' snapshots (nil: Snapshots delivers nothing).
	Source *source.Source
	// Request builds the request of every action (required).
	Request RequestFunc
}

// Backend is the dashboard's tui.Backend: snapshots from the source, actions planned and
// run by the operations layer. Several actions may run at once; a node is in at most one.
type Backend struct {
	ctx        context.Context
	op         *operation.Operator
	runs       *operation.Runs
	src        *source.Source
	newRequest RequestFunc
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

var _ tui.Backend = (*Backend)(nil)

// New returns the backend of cfg; its actions run until ctx is cancelled (then Wait).
func New(ctx context.Context, cfg Config) *Backend {
	op := &operation.Operator{Kube: cfg.Kube, EventKube: cfg.EventKube, Pools: cfg.Pools, Logger: klog.Background(), User: cfg.User}
	return &Backend{ctx: ctx, op: op, runs: op.Runs(ctx, render.ErrorLine), src: cfg.Source, newRequest: cfg.Request, ledger: drain.NewLedger()}
}

// Snapshots implements tui.Backend (nothing without a source).
func (b *Backend) Snapshots() <-chan data.Snapshot {
	if b.src == nil {
		return nil
	}
	return b.src.Snapshots()
}

// Request turns a confirmed dialog into the operations layer's request (a move's plan
// not yet added: Planned): the drain settings are the dialog's (which start from
// drain.DefaultSettings, as the commands').
func (b *Backend) Request(req confirm.Request) operation.Request {
	r := b.newRequest(operation.Action(req.Action), req.Options.Settings, req.Nodes)
	r.To = req.Pool
	r.Command = fmt.Sprintf("kubectl maintenance dashboard (%s %s)", req.Action, strings.Join(req.Nodes, " "))
	r.Ledger = b.ledger
	return r
}

// planTimeout bounds the dialog's plan.
const planTimeout = 30 * time.Second

// Plan implements tui.Backend: the drain's plan, as the plan command prints it, after a
// move's label and taint changes.
func (b *Backend) Plan(req confirm.Request) (string, error) {
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
	r := b.Request(req)
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
func (b *Backend) Start(req confirm.Request) (<-chan event.Event, func(), error) {
	r, err := b.Planned(b.ctx, req)
	if err != nil {
		return nil, nil, err
	}
	events, cancel, err := b.runs.Start(r)
	return events, cancel, err
}

// Planned is the request Start runs for req: a move's carries its plan (Request.Moves)
// and the plan's resolution, as the pool move command runs it: the plan the dialog
// showed and the user confirmed (Plan), else planned now (the permission preflight
// included). Any other request is Request's.
func (b *Backend) Planned(ctx context.Context, req confirm.Request) (operation.Request, error) {
	r := b.Request(req)
	if r.Action != operation.Move {
		return r, nil
	}
	p := b.take(req)
	if p == nil {
		var err error
		if p, err = b.op.Plan(ctx, r); err != nil {
			return r, err
		}
	}
	r.Moves, r.Resolved = p.Move, p.Resolved
	return r, nil
}

// keep remembers the move plan the dialog shows for req (the dialog shows one at a time).
func (b *Backend) keep(req confirm.Request, p *operation.Plan) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.shown.req, b.shown.plan = req, p
}

// take returns (and forgets) the plan the dialog showed for req, nil if it showed none.
func (b *Backend) take(req confirm.Request) *operation.Plan {
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

// Wait waits for every action to end (after the backend's context is cancelled).
func (b *Backend) Wait() { b.runs.Wait() }

// ControlMaintenance pauses, resumes or cancels a Maintenance for the dashboard.
func (b *Backend) ControlMaintenance(name, op string) error {
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
func (b *Backend) Events(ref data.Ref) ([]data.EventRow, error) {
	ctx, cancel := context.WithTimeout(b.ctx, source.DefaultRequestTimeout)
	defer cancel()
	return source.Events(ctx, b.op.Kube, ref)
}

package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-maintenance/kubectl-maintenance/dashsource"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/operation"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui/confirm"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui/data"
)

// backend is the dashboard's tui.Backend: snapshots from dashsource, actions planned and
// run by the operations layer. Several actions may run at once; a node is in at most one.
type backend struct {
	ctx context.Context
	c   *Common
	op  *operation.Operator
	src *dashsource.Source

	wg   sync.WaitGroup
	mu   sync.Mutex
	busy map[string]bool               // nodes in a running action
	runs map[chan event.Event]struct{} // event channels not closed yet
}

func newBackend(ctx context.Context, c *Common, cs kubernetes.Interface, pc client.Client, src *dashsource.Source) *backend {
	return &backend{ctx: ctx, c: c, op: &operation.Operator{Kube: cs, Pools: pc, Logger: klog.Background()}, src: src,
		busy: map[string]bool{}, runs: map[chan event.Event]struct{}{}}
}

// Snapshots implements tui.Backend.
func (b *backend) Snapshots() <-chan data.Snapshot { return b.src.Snapshots() }

// request turns a confirmed dialog into the operations layer's request: the drain
// settings start from the commands' defaults (NewDrainOptions), with the dialog's.
func (b *backend) request(req confirm.Request) operation.Request {
	d := NewDrainOptions(b.c)
	o := req.Options
	d.GracePeriod, d.Timeout, d.IgnoreDaemonSets = o.GracePeriodSeconds, o.Timeout, o.IgnoreDaemonSets
	d.DeleteEmptyDirData, d.Force = o.DeleteEmptyDirData, o.Force
	r := d.request(operation.Action(req.Action), req.Nodes)
	r.To = req.Pool
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
			return "", errors.New(oneLine(describe(err)))
		}
		for _, mv := range p.Move.Moves {
			fmt.Fprintf(&head, "node/%s -> %s: %v\n", mv.Node, mv.To, mv.Diff)
		}
		head.WriteString("\n")
	}
	r.Action = operation.Drain
	p, err := b.op.Plan(ctx, r)
	if err != nil {
		return "", errors.New(oneLine(describe(err)))
	}
	printPlan(&head, p.Drain)
	return head.String(), nil
}

// Start implements tui.Backend.
func (b *backend) Start(req confirm.Request) (<-chan event.Event, func(), error) {
	b.mu.Lock()
	var busy []string
	for _, n := range req.Nodes {
		if b.busy[n] {
			busy = append(busy, n)
		}
	}
	if len(busy) > 0 {
		b.mu.Unlock()
		sort.Strings(busy)
		return nil, nil, fmt.Errorf("%s already in a running action", strings.Join(busy, ", "))
	}
	for _, n := range req.Nodes {
		b.busy[n] = true
	}
	events := make(chan event.Event, 256)
	b.runs[events] = struct{}{}
	b.mu.Unlock()

	ctx, cancel := context.WithCancel(b.ctx)
	b.wg.Go(func() {
		defer func() {
			cancel()
			b.mu.Lock()
			for _, n := range req.Nodes {
				delete(b.busy, n)
			}
			delete(b.runs, events)
			b.mu.Unlock()
			close(events)
		}()
		b.run(ctx, req, events)
	})
	return events, cancel, nil
}

// run does one action through the operations layer, which sends its events. An error
// the layer did not report as an event (a cancel is none) ends the action as node.failed.
func (b *backend) run(ctx context.Context, req confirm.Request, events chan<- event.Event) {
	_, err := b.op.Run(ctx, b.request(req), events)
	var reported *operation.NodesError
	if err != nil && !errors.Is(err, context.Canceled) && !errors.As(err, &reported) {
		events <- event.Event{Type: event.EventNodeFailed, Message: oneLine(describe(err)), Time: time.Now()}
	}
}

// wait waits for every action to end. Call it after cancelling the context the backend
// was built with: the events nobody reads any more are read here, so that no engine
// blocks on a send.
func (b *backend) wait() {
	b.mu.Lock()
	chans := make([]chan event.Event, 0, len(b.runs))
	for ch := range b.runs {
		chans = append(chans, ch)
	}
	b.mu.Unlock()
	for _, ch := range chans {
		for range ch { //nolint:revive // draining
		}
	}
	b.wg.Wait()
}

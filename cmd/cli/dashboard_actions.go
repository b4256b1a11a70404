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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-maintenance/kubectl-maintenance/dashsource"
	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui/confirm"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui/data"
)

// backend is the dashboard's tui.Backend: snapshots from dashsource, actions run with the
// engines. Several actions may run at once; a node is in at most one.
type backend struct {
	ctx context.Context
	c   *Common
	cs  kubernetes.Interface
	pc  client.Client
	src *dashsource.Source

	wg   sync.WaitGroup
	mu   sync.Mutex
	busy map[string]bool               // nodes in a running action
	runs map[chan event.Event]struct{} // event channels not closed yet
}

func newBackend(ctx context.Context, c *Common, cs kubernetes.Interface, pc client.Client, src *dashsource.Source) *backend {
	return &backend{ctx: ctx, c: c, cs: cs, pc: pc, src: src, busy: map[string]bool{}, runs: map[chan event.Event]struct{}{}}
}

// Snapshots implements tui.Backend.
func (b *backend) Snapshots() <-chan data.Snapshot { return b.src.Snapshots() }

func (b *backend) drainOptions(o confirm.Options) *DrainOptions {
	d := NewDrainOptions(b.c)
	d.GracePeriod, d.Timeout, d.IgnoreDaemonSets = o.GracePeriodSeconds, o.Timeout, o.IgnoreDaemonSets
	d.DeleteEmptyDirData, d.Force = o.DeleteEmptyDirData, o.Force
	return &d
}

// planTimeout bounds the dialog's plan.
const planTimeout = 30 * time.Second

// Plan implements tui.Backend: the drain's plan, as the plan command prints it.
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
	var head string
	if req.Action == confirm.Move {
		moves, _, err := (&nodepool.Mover{Kube: b.cs, Pools: b.pc}).Plan(ctx, req.Nodes, req.Pool, nil)
		if err != nil {
			return "", err
		}
		var hb bytes.Buffer
		for _, mv := range moves {
			fmt.Fprintf(&hb, "node/%s -> %s: %v\n", mv.Node, mv.To, mv.Diff)
		}
		head = hb.String() + "\n"
	}
	eng, err := drain.NewEngine(b.drainOptions(req.Options).engineConfig(b.cs, make(chan event.Event), klog.Background()))
	if err != nil {
		return "", err
	}
	plan, err := eng.Plan(ctx, req.Nodes)
	if err != nil {
		return "", errors.New(oneLine(describe(err)))
	}
	var out bytes.Buffer
	printPlan(&out, plan)
	return head + out.String(), nil
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

// run does one action, sending its events. A cordon emits node.cordoned only, an uncordon
// node.uncordoned, a move the drain's events and then node.moved.
func (b *backend) run(ctx context.Context, req confirm.Request, events chan<- event.Event) {
	emit := func(ev event.Event) {
		ev.Time = time.Now()
		events <- ev
	}
	var err error
	switch req.Action {
	case confirm.Cordon, confirm.Uncordon:
		err = b.cordon(ctx, req, emit)
	case confirm.Drain:
		err = b.runDrain(ctx, req, events, req.Nodes)
	case confirm.Move:
		m := &nodepool.Mover{Kube: b.cs, Pools: b.pc}
		moves, target, perr := m.Plan(ctx, req.Nodes, req.Pool, nil)
		if err = perr; err == nil {
			err = m.Run(ctx, moves, target, drainerFunc(func(ctx context.Context, names []string) (drain.Summary, error) {
				return drain.Summary{}, b.runDrain(ctx, req, events, names)
			}))
			if err == nil {
				for _, mv := range moves {
					emit(event.Event{Type: event.EventNodeMoved, Node: mv.Node, Message: mv.To})
				}
			}
		}
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		emit(event.Event{Type: event.EventNodeFailed, Message: oneLine(describe(err))})
	}
}

type drainerFunc func(ctx context.Context, names []string) (drain.Summary, error)

func (f drainerFunc) Run(ctx context.Context, names []string) (drain.Summary, error) {
	return f(ctx, names)
}

func (b *backend) runDrain(ctx context.Context, req confirm.Request, events chan<- event.Event, names []string) error {
	eng, err := drain.NewEngine(b.drainOptions(req.Options).engineConfig(b.cs, events, klog.Background()))
	if err != nil {
		return err
	}
	_, err = eng.Run(ctx, names)
	return err
}

func (b *backend) cordon(ctx context.Context, req confirm.Request, emit func(event.Event)) error {
	for _, name := range req.Nodes {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := b.cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if ctx.Err() != nil {
			return ctx.Err() // cancelled while asking: change nothing
		}
		if err != nil {
			emit(event.Event{Type: event.EventNodeFailed, Node: name, Message: oneLine(describe(fmt.Errorf("get node %s: %w", name, err)))})
			continue
		}
		if req.Action == confirm.Cordon {
			already, err := drain.Cordon(ctx, b.cs, n, false)
			if err != nil {
				emit(event.Event{Type: event.EventNodeFailed, Node: name, Message: oneLine(describe(err))})
				continue
			}
			emit(event.Event{Type: event.EventNodeCordoned, Node: name, Already: already})
			continue
		}
		res, err := drain.Uncordon(ctx, b.cs, n, false, false)
		if err != nil {
			emit(event.Event{Type: event.EventNodeFailed, Node: name, Message: oneLine(describe(err))})
			continue
		}
		ev := event.Event{Type: event.EventNodeUncordoned, Node: name}
		switch res {
		case drain.AlreadySchedulable:
			ev.Reason, ev.Message = "AlreadySchedulable", "already uncordoned"
		case drain.LeftCordoned:
			ev.Reason, ev.Message = "LeftCordoned", "left cordoned: someone else cordoned it"
		}
		emit(ev)
	}
	return nil
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

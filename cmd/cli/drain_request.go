package cli

import (
	"context"
	"os"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/operation"
	"github.com/kubectl-maintenance/kubectl-maintenance/render"
)

// request turns the drain flags into the operations layer's request for action on the
// selected nodes, with the command line recorded on them.
func (o *DrainOptions) request(action operation.Action) operation.Request {
	req := operation.Request{Action: action, DryRun: drain.DryRun(o.DryRun), Surge: o.Surge,
		Drain: o.engineConfig(nil, nil, klog.Background()), Command: commandLine(os.Args)}
	o.Nodes.into(&req)
	if req.Pool != "" && !o.maxParallelSet {
		req.Drain.MaxParallelNodes = 0 // the pool's maxUnavailable
	}
	return req
}

// operator is the operations layer on the command's clients; the NodePool client only
// when pools are involved.
func (c *Common) operator(ctx context.Context, cs kubernetes.Interface, pools bool) (*operation.Operator, error) {
	op := &operation.Operator{Kube: cs, Logger: klog.FromContext(ctx), User: c.fallbackUser()}
	if c.ConfigFlags != nil { // (a test's Common has no cluster flags: its Events share cs)
		ec, err := c.EventClient()
		if err != nil {
			return nil, err
		}
		op.EventKube = ec
	}
	if pools {
		pc, err := c.PoolClient()
		if err != nil {
			return nil, err
		}
		op.Pools = pc
	}
	return op, nil
}

// eventPrinter prints the events of a drain, a move or a rollout: kubectl-style lines, or
// NDJSON with -o json.
func (o *DrainOptions) eventPrinter() render.Printer {
	if o.Output == "json" {
		return render.NewNDJSON(o.Out, version, time.Now, o.APIRequests)
	}
	return &render.Human{Out: o.Out, ErrOut: o.ErrOut, Verbose: klog.V(1).Enabled()}
}

// runPrinted runs an operation while its events are printed as they come (or shown in the
// live progress view when view is true), and returns what the operation returned. Every
// event is printed before it returns.
func runPrinted(ctx context.Context, view bool, p render.Printer, run func(events chan<- event.Event) (operation.Summary, error)) (operation.Summary, error) {
	events := make(chan event.Event, 256)
	type result struct {
		sum operation.Summary
		err error
	}
	done := make(chan result, 1)
	go func() {
		sum, err := run(events)
		close(events)
		done <- result{sum, err}
	}()
	if view {
		runProgressView(ctx, events)
	} else {
		for ev := range events {
			p.Event(ev)
		}
	}
	res := <-done
	return res.sum, res.err
}

// settingFlags names the flag of each drain setting (drain.Config's names, which the
// settings' own validation uses): the CLI says its flags in its error lines.
var settingFlags = strings.NewReplacer(
	"gracePeriodSeconds", "--grace-period", "skipWaitForDeleteTimeoutSeconds", "--skip-wait-for-delete-timeout",
	"maxParallelNodes", "--max-parallel-nodes", "chunkSize", "--chunk-size", "dryRun", "--dry-run",
	"onBlocked", "--on-blocked", "blockedAfter", "--blocked-after", "timeout", "--timeout")

// settingsError is the drain settings' validation error as a usage error naming the
// flags (nil when the settings are valid).
func settingsError(err error) error {
	if err == nil {
		return nil
	}
	return UsageErrorf("%s", settingFlags.Replace(err.Error()))
}

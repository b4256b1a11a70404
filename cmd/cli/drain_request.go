package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/render"
	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
	"github.com/kubectl-maintenance/kubectl-maintenance/operation"
)

// request turns the drain flags into the operations layer's request for action on the
// selected nodes, with the command line recorded on them: the settings as Validate
// checked them (their DryRun the --dry-run it normalized) and the command's wiring of
// the engine; the operations layer adds the clients.
func (o *DrainOptions) request(action operation.Action) operation.Request {
	req := operation.Request{Action: action, Surge: o.Surge, Drain: o.Settings, Command: noderecord.CommandLine(os.Args),
		RecordEvents: true, ClientBurst: o.Burst, WaitInterval: o.WaitInterval}
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
		return o.newNDJSON()
	}
	return &render.Human{Out: o.Out, ErrOut: o.ErrOut, Verbose: klog.V(1).Enabled()}
}

// settingFlags names the flag of each drain setting (the names of drain.Settings'
// mistakes, the Maintenance spec's): the CLI says its flags in its error lines.
var settingFlags = map[string]string{
	"gracePeriodSeconds": "--grace-period", "timeout": "--timeout", "podSelector": "--pod-selector",
	"skipWaitForDeleteTimeoutSeconds": "--skip-wait-for-delete-timeout", "chunkSize": "--chunk-size",
	"dryRun": "--dry-run", "maxParallelNodes": "--max-parallel-nodes", "onBlocked": "--on-blocked",
	"blockedAfter": "--blocked-after", "soak": "--soak", "forceAfter": "--force-after", "neverForce": "--never-force",
	"drainOrder": "--drain-order", "settle": "--settle",
}

// flagWords says a rule between settings in flags ("forceAfter needs onBlocked force":
// "--force-after needs --on-blocked=force").
var flagWords = strings.NewReplacer("onBlocked force", "--on-blocked=force", "onBlocked", "--on-blocked",
	"forceAfter", "--force-after", "neverForce", "--never-force", "drainOrder", "--drain-order")

// flagsError is the drain settings' validation error (Settings.Validate) as one usage
// line naming the flags: "invalid --grace-period -2: must be -1 (each pod's own) or
// more", the rule in the same words as the settings' (and the CRD's). nil when err is.
func flagsError(err error) error {
	var u *drain.UsageError
	if err == nil || !errors.As(err, &u) || len(u.Mistakes) == 0 {
		return err
	}
	lines := make([]string, 0, len(u.Mistakes))
	for _, m := range u.Mistakes {
		if flag, ok := settingFlags[m.Setting]; ok && m.Value != "" {
			lines = append(lines, fmt.Sprintf("invalid %s %s: %s", flag, m.Value, m.Rule))
			continue
		}
		lines = append(lines, flagWords.Replace(m.String()))
	}
	return UsageErrorf("%s", strings.Join(lines, "; "))
}

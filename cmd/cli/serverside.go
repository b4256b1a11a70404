package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-maintenance/kubectl-maintenance/access"
	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/render"
	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance"
	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// ServerSideFlags are --server-side, --detach and --name: create a Maintenance instead of
// running locally.
type ServerSideFlags struct {
	ServerSide bool
	Detach     bool
	Name       string

	// flags are the command's: a command with -o (drain, pool move) prints the followed
	// object as its local run does (-o json: NDJSON events).
	flags *pflag.FlagSet
}

// followedEventsHelp says what the NDJSON stream of a followed Maintenance carries.
const followedEventsHelp = `With -o json the progress is NDJSON events on stdout, made from the object's status:
node.cordoned, node.drained, node.moved, node.uncordoned, node.failed, node.blocked,
node.not_started and pod.eviction_blocked (a new blocker), first a "version" event and
last the "summary" (counts, exit_code). The status has no per-pod steps, so
pod.eviction_started, pod.evicted, the plan, warnings and pacing are not sent, and a
state that lasts less than the 1 s between two reads may be missed.`

func (f *ServerSideFlags) addServerSideFlags(cmd *cobra.Command) {
	f.flags = cmd.Flags()
	cmd.Flags().BoolVar(&f.ServerSide, "server-side", false, "create a Maintenance object that the in-cluster controller runs (kubectl maintenance controller), and follow it (-o json: NDJSON events from its status, ending in a summary; see kubectl maintenance follow --help)")
	cmd.Flags().BoolVar(&f.Detach, "detach", false, "with --server-side: return once the Maintenance is created")
	cmd.Flags().StringVar(&f.Name, "name", "", "with --server-side: the Maintenance's name (default: generated)")
}

// output is the command's -o ("" when it has none).
func (f ServerSideFlags) output() string {
	if f.flags == nil {
		return ""
	}
	if o := f.flags.Lookup("output"); o != nil {
		return o.Value.String()
	}
	return ""
}

func (f *ServerSideFlags) validateServerSide(dryRun string) error {
	if !f.ServerSide && (f.Detach || f.Name != "") {
		return UsageErrorf("--detach and --name go with --server-side")
	}
	if f.ServerSide && dryRun != "" && dryRun != "none" {
		return UsageErrorf("--server-side and --dry-run don't go together: use --dry-run alone to see the plan")
	}
	return nil
}

// maintenanceSpec is the Maintenance's spec of the command: its nodes, and its drain
// settings by maintenance.SpecFromSettings (the one translation). Unless
// --max-parallel-nodes was given, the spec leaves parallelism to the controller's
// default (5, or the pool's maxUnavailable).
func (o *DrainOptions) maintenanceSpec(action mntv1.Action) mntv1.MaintenanceSpec {
	s := mntv1.MaintenanceSpec{Action: action, Nodes: o.Nodes.Names, Selector: o.Nodes.Selector, Pool: o.Nodes.Pool}
	set := o.Settings
	if !o.maxParallelSet {
		set.MaxParallelNodes = 0
	}
	maintenance.SpecFromSettings(set, &s)
	s.Drain.IncludeDisrupting, s.Policy.Surge = o.IncludeDisrupting, o.Surge
	return s
}

// runServerSide creates the Maintenance and follows it (unless --detach). The object
// names its requester (the API server's answer to who the user is), which the controller
// records on the nodes.
func (c *Common) runServerSide(ctx context.Context, f ServerSideFlags, spec mntv1.MaintenanceSpec) error {
	mc, err := c.PoolClient()
	if err != nil {
		return err
	}
	cs, _ := c.Client() // nil: the requester stays unknown
	m, err := maintenance.Create(ctx, mc, f.Name, spec, access.WhoAmI(ctx, cs, ""))
	if apierrors.IsInvalid(err) {
		return WithExitCode(ExitUsage, err)
	} else if err != nil {
		return err
	}
	out := f.output()
	created := c.Out
	if out == "json" { // stdout is the NDJSON stream: every line an event
		created = c.ErrOut
	}
	fmt.Fprintf(created, "maintenance.maintenance.kubectl-maintenance.io/%s created\n", m.Name)
	if f.Detach {
		fmt.Fprintf(c.ErrOut, "follow it with `kubectl maintenance follow %s`; cancel it with `kubectl maintenance cancel %s`\n", m.Name, m.Name)
		return nil
	}
	return c.follow(ctx, mc, m.Name, out)
}

// follow prints the object's progress until it ends, as lines or (output "json") as
// NDJSON events (render.Follow), and returns the exit code the CLI gives the same
// outcome. Ctrl-C detaches: the object runs on.
func (c *Common) follow(ctx context.Context, mc client.Client, name, output string) error {
	var cs kubernetes.Interface // only to say why no controller took the object up
	if c.ConfigFlags != nil {   // (a test's Common has no cluster flags)
		cs, _ = c.Client()
	}
	fo := &render.Follow{Out: c.Out, ErrOut: c.ErrOut, Name: name}
	if output == "json" {
		fo.ND = c.newNDJSON()
	}
	f := &maintenance.Follower{Client: mc, Kube: cs, Changed: fo.Change, NotTakenUp: fo.NotTakenUp,
		Waiting: fo.Waiting, Unreachable: fo.Unreachable, Reachable: fo.Reachable}
	m, err := f.Follow(ctx, name)
	if ctx.Err() != nil && err == ctx.Err() {
		fo.Detached()
	}
	if err != nil {
		if m != nil && fo.ND != nil { // the stream ends in a summary: how far it got
			fo.Summary(m, err, ExitCode(err))
		}
		return err
	}
	code := maintenance.Outcome(m).ExitCode()
	if code != ExitOK {
		err = WithExitCode(code, fmt.Errorf("maintenance/%s %s: %s", m.Name, m.Status.Phase, m.Status.Message))
	}
	fo.Summary(m, err, code)
	return err
}

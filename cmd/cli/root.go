// Package cli holds the cobra commands of kubectl-maintenance. Each command is an Options
// struct with Validate and Run(ctx), close to the way kubectl's own commands are built.
// Commands turn flags into engine configurations and engine events into output; the
// engines (drain, pdb, nodepool) never print.
package cli

import (
	"context"
	"flag"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/clientset"
	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/completion"
	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/exitcode"
)

// Client rate limits, the defaults of --qps and --burst (clientset.DefaultQPS and DefaultBurst).
const (
	DefaultQPS   = clientset.DefaultQPS
	DefaultBurst = clientset.DefaultBurst
)

// Common is what every command shares: the kubectl cluster flags, the client's rate
// limits and the streams.
type Common struct {
	// rateFlags is set once --qps and --burst are registered (they are then validated).
	rateFlags   bool
	ConfigFlags *genericclioptions.ConfigFlags
	// QPS and Burst are --qps and --burst, set on every REST config (ConfigFlags' WrapConfigFn).
	QPS   float32
	Burst int
	genericiooptions.IOStreams
	requests *clientset.RequestCounter
}

// RESTConfig returns the REST config from the cluster flags. A kubeconfig problem (missing
// file, unknown context, no server) and a bad --qps or --burst are usage errors.
func (c *Common) RESTConfig() (*rest.Config, error) {
	if err := clientset.CheckClusterFlags(c.ConfigFlags); err != nil {
		return nil, err
	}
	if c.rateFlags { // else a Common built without the flags (the dashboard's test backend): client-go's defaults
		if err := clientset.ValidateRateLimits(c.QPS, c.Burst); err != nil {
			return nil, err
		}
	}
	if c.requests == nil {
		c.requests = &clientset.RequestCounter{}
	}
	return clientset.RESTConfig(c.ConfigFlags, "kubectl-maintenance/"+version, c.requests)
}

// newCommon returns the Common of the root command: the cluster flags, whose REST configs
// carry the client's rate limits, at their defaults.
func newCommon(streams genericiooptions.IOStreams) *Common {
	c := &Common{ConfigFlags: genericclioptions.NewConfigFlags(true), IOStreams: streams, QPS: DefaultQPS, Burst: DefaultBurst}
	c.ConfigFlags.WrapConfigFn = c.withRateLimits
	return c
}

// addRateLimitFlags adds --qps and --burst.
func (c *Common) addRateLimitFlags(fs *pflag.FlagSet) {
	c.rateFlags = true
	clientset.AddRateLimitFlags(fs, &c.QPS, &c.Burst)
}

// withRateLimits is ConfigFlags' WrapConfigFn: every REST config built from the cluster
// flags carries --qps and --burst.
func (c *Common) withRateLimits(cfg *rest.Config) *rest.Config {
	cfg.QPS, cfg.Burst = c.QPS, c.Burst
	return cfg
}

// APIRequests is how many HTTP requests the commands' clients sent (reported in the
// NDJSON summary, so a runbook can see what a drain cost the API server).
func (c *Common) APIRequests() int64 {
	if c.requests == nil {
		return 0
	}
	return c.requests.Count()
}

// PoolClient returns a controller-runtime client that knows NodePools.
func (c *Common) PoolClient() (client.Client, error) {
	cfg, err := c.RESTConfig()
	if err != nil {
		return nil, err
	}
	return clientset.NewPoolClient(cfg)
}

// Scheme knows the built-in kinds, CustomResourceDefinitions and NodePools (clientset.Scheme).
func Scheme() *runtime.Scheme { return clientset.Scheme() }

// Client returns a clientset built from the cluster flags.
func (c *Common) Client() (kubernetes.Interface, error) {
	cfg, err := c.RESTConfig()
	if err != nil {
		return nil, err
	}
	return clientset.New(cfg)
}

// EventClient returns a clientset for the node Events: the cluster flags' config with a
// rate limiter of its own at a fifth of --qps and --burst (at least 1 each).
func (c *Common) EventClient() (kubernetes.Interface, error) {
	cfg, err := c.RESTConfig()
	if err != nil {
		return nil, err
	}
	return clientset.NewForEvents(cfg)
}

// NewRootCmd builds "kubectl maintenance" with every subcommand.
func NewRootCmd(streams genericiooptions.IOStreams) *cobra.Command {
	common := newCommon(streams)
	root := &cobra.Command{
		Use:   "kubectl-maintenance",
		Short: "Safe node maintenance: cordon, PDB-aware drain, node pools",
		Long: `kubectl maintenance cordons and drains nodes without ever violating a
PodDisruptionBudget: pods leave only through the Eviction API, a refused eviction is
retried when the blocking budget's status changes, and nodes drain in parallel as far
as the budgets allow.

` + ExitCodesHelp,
		SilenceUsage:  true,
		SilenceErrors: true,
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl maintenance"},
	}
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	root.SetFlagErrorFunc(exitcode.FlagError)
	common.ConfigFlags.AddFlags(root.PersistentFlags())
	common.addRateLimitFlags(root.PersistentFlags())
	addKlogVerbosity(root)

	root.AddCommand(
		NewCmdVersion(common),
		NewCmdNodes(common),
		NewCmdCordon(common),
		NewCmdUncordon(common),
		NewCmdPlan(common),
		NewCmdDrain(common),
		NewCmdPool(common),
		NewCmdDashboard(common),
		NewCmdStatus(common),
		newCmdController(common, true),
		newCmdGet(common),
		newCmdDescribe(common),
		newCmdFollow(common),
		newCmdCancel(common),
		newCmdPause(common, true),
		newCmdPause(common, false),
		newCmdInstall(common, "install", "Install (or update) the NodePool and Maintenance CustomResourceDefinitions, and with --controller the controller; safe to run again"),
		newCmdUninstall(common),
	)
	completion.AddKubectl(root, noArgsUsage)
	rejectUnknownCommands(root)
	return root
}

// rejectUnknownCommands makes a mistyped command a usage error (exit 2) on one line,
// with kubectl's hint and cobra's suggestion: "unknown command "drian" for "kubectl
// maintenance"; did you mean "drain"? See 'kubectl maintenance --help' for usage." A
// command group given no command prints its help.
func rejectUnknownCommands(cmd *cobra.Command) {
	for _, sub := range cmd.Commands() {
		rejectUnknownCommands(sub)
	}
	if cmd.Name() == "completion" && cmd.HasParent() && !cmd.Parent().HasParent() {
		cmd.Args, cmd.RunE = cobra.ArbitraryArgs, completion.ShellArg
		completion.ShellArgs(cmd, noArgsUsage)
		return
	}
	if !cmd.HasAvailableSubCommands() { // a group: it does nothing itself
		return
	}
	cmd.Args = cobra.ArbitraryArgs
	cmd.SuggestionsMinimumDistance = 2 // cobra's default, which SuggestionsFor alone does not set
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return cmd.Help()
		}
		msg := fmt.Sprintf("unknown command %q for %q.", args[0], cmd.CommandPath())
		switch s := cmd.SuggestionsFor(args[0]); len(s) {
		case 0:
		case 1:
			msg = fmt.Sprintf("unknown command %q for %q; did you mean %q?", args[0], cmd.CommandPath(), s[0])
		default:
			msg = fmt.Sprintf("unknown command %q for %q; did you mean one of %q?", args[0], cmd.CommandPath(), s)
		}
		return UsageErrorf("%s See '%s --help' for usage.", msg, cmd.CommandPath())
	}
}

// addKlogVerbosity exposes klog's -v and nothing else of klog's flags.
func addKlogVerbosity(root *cobra.Command) {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	root.PersistentFlags().AddGoFlag(fs.Lookup("v"))
}

// noArgsUsage rejects positional arguments with a usage error.
func noArgsUsage(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return UsageErrorf("%s takes no arguments, got %q", cmd.CommandPath(), args)
	}
	return nil
}

// options is a command's Options, in kubectl's shape: Complete fills what the flags and
// arguments leave open, Validate checks them without calling the API, Run acts.
type options interface {
	Complete(cmd *cobra.Command, args []string) error
	Validate() error
	Run(ctx context.Context) error
}

// runE runs o as a command's RunE: Complete, Validate, then Run.
func runE(o options) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if err := o.Complete(cmd, args); err != nil {
			return err
		}
		if err := o.Validate(); err != nil {
			return err
		}
		return o.Run(cmd.Context())
	}
}

package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/completion"
	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/install"
	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/kubeargs"
	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/printflags"
)

// InstallOptions are the flags of "kubectl maintenance install".
type InstallOptions struct {
	*Common
	// Controller installs the controller's RBAC and Deployment with the CRDs.
	Controller bool
	// Image replaces the controller's container image (with --controller).
	Image string
	// DryRun is "none" or "client" (print the objects, send nothing).
	DryRun string
	// Output is -o: yaml, json or name (with --dry-run=client).
	Output string

	namespace string
	printer   printers.ResourcePrinter
}

const installLong = `Install (or update) the NodePool and Maintenance CustomResourceDefinitions; safe to
run again.

With --controller, also install the in-cluster controller: its ServiceAccount, ClusterRole
and ClusterRoleBinding (config/rbac) and its Deployment and PodDisruptionBudget
(config/manager), the manifests of config/ built into this binary. Every object is
server-side applied (field manager kubectl-maintenance, taking over fields others set),
and reported as created, configured or unchanged: a second run changes nothing.
--image sets the controller's image; -n/--namespace the namespace of its objects (default
kube-system, whatever the kubeconfig context's namespace is), which must exist, and the
namespace of its leader-election Lease. --dry-run=client -o yaml prints the objects as a
YAML stream and sends nothing (-o json and -o name too).

Remove it with kubectl maintenance uninstall (with the same --controller and -n).`

const installExample = `  kubectl maintenance install
  kubectl maintenance install --controller --image registry.example/kubectl-maintenance:v0.2.0
  kubectl maintenance install --controller -n maintenance-system --dry-run=client -o yaml > controller.yaml`

// newCmdInstall builds "kubectl maintenance install" (and "pool install", the same
// command under its older name).
func newCmdInstall(c *Common, use, short string) *cobra.Command {
	o := &InstallOptions{Common: c, DryRun: "none"}
	cmd := &cobra.Command{
		Use:     use,
		Short:   short,
		Long:    installLong,
		Example: installExample,
		Args:    noArgsUsage,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Complete(); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	cmd.Flags().BoolVar(&o.Controller, "controller", o.Controller, "Also install the in-cluster controller: its RBAC and Deployment")
	cmd.Flags().StringVar(&o.Image, "image", o.Image, "The controller's container image (with --controller; default: the one in config/manager)")
	cmd.Flags().StringVar(&o.DryRun, "dry-run", o.DryRun, `"none", or "client": print what would be applied (with -o) and send nothing`)
	cmd.Flags().Lookup("dry-run").NoOptDefVal = kubeargs.DryRunUnchanged
	_ = cmd.RegisterFlagCompletionFunc("dry-run", completion.FixedChoices("none", "client"))
	cmd.Flags().StringVarP(&o.Output, "output", "o", o.Output, "With --dry-run=client, print the objects: yaml (a YAML stream), json or name")
	_ = cmd.RegisterFlagCompletionFunc("output", completion.FixedChoices("yaml", "json", "name"))
	return cmd
}

// Complete resolves --dry-run and the controller's namespace.
func (o *InstallOptions) Complete() error {
	if err := normalizeDryRun(o.ErrOut, &o.DryRun); err != nil {
		return err
	}
	o.namespace = controllerNamespace(o.Common)
	return nil
}

// Validate checks the flags before anything is asked of the cluster.
func (o *InstallOptions) Validate() error {
	if o.DryRun == "server" {
		return UsageErrorf(`invalid --dry-run "server": install's dry run is "client" (it prints the objects it would apply)`)
	}
	if o.Image != "" && !o.Controller {
		return UsageErrorf("--image is the controller's image: add --controller")
	}
	if o.Output == "" {
		return nil
	}
	if o.DryRun != "client" {
		return UsageErrorf("-o prints what install would apply: add --dry-run=client")
	}
	p, err := printflags.ObjectPrinter(o.Output)
	if err != nil {
		return WithExitCode(ExitUsage, err)
	}
	o.printer = p
	return nil
}

// Run installs (or, in a dry run, prints) the objects.
func (o *InstallOptions) Run(ctx context.Context) error {
	objs, err := install.Objects(install.Options{Controller: o.Controller, Image: o.Image, Namespace: o.namespace})
	if err != nil {
		return err
	}
	if o.DryRun == "client" {
		return o.printDryRun(objs)
	}
	pc, err := o.PoolClient()
	if err != nil {
		return err
	}
	done, err := install.Apply(ctx, pc, objs)
	for _, r := range done {
		fmt.Fprintf(o.Out, "%s %s\n", r.Ref, r.Verb)
	}
	return err
}

// printDryRun prints objs with -o, or one "<ref> applied (dry run)" line each.
func (o *InstallOptions) printDryRun(objs []*unstructured.Unstructured) error {
	for _, obj := range objs {
		if o.printer == nil {
			fmt.Fprintf(o.Out, "%s applied (dry run)\n", install.Ref(obj))
			continue
		}
		if err := o.printer.PrintObj(obj, o.Out); err != nil {
			return fmt.Errorf("print %s: %w", install.Ref(obj), err)
		}
	}
	return nil
}

// controllerNamespace is -n/--namespace when given, else install.DefaultNamespace:
// the controller's namespace does not follow the kubeconfig context's.
func controllerNamespace(c *Common) string {
	if c.ConfigFlags != nil && c.ConfigFlags.Namespace != nil && *c.ConfigFlags.Namespace != "" {
		return *c.ConfigFlags.Namespace
	}
	return install.DefaultNamespace
}

package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/install"
)

// UninstallOptions are the flags of "kubectl maintenance uninstall".
type UninstallOptions struct {
	*Common
	// Controller removes the controller's Deployment and RBAC with the CRDs.
	Controller bool
	// Force uninstalls while Maintenances run or NodePools exist.
	Force bool

	namespace string
}

const uninstallLong = `Remove what kubectl maintenance install made: the NodePool and Maintenance
CustomResourceDefinitions and, with --controller, the controller's Deployment,
PodDisruptionBudget, ClusterRoleBinding, ClusterRole and ServiceAccount (in -n/--namespace,
default kube-system). Objects already gone are reported as such; safe to run again.

Order: the Deployment first (the controller stops), then its RBAC, the CRDs last; the
command returns once the CRDs are gone.

Deleting a CRD deletes every object of its kind. So uninstall refuses, changing nothing
(exit 3, one line naming them), while a Maintenance is Pending, Running or Paused or any
NodePool exists. Finished Maintenances (Succeeded, Failed, Blocked, ...) are records and
are deleted with their CRD. With --force it goes on: the Maintenances and NodePools are
deleted with the CRDs and their finalizers are taken off, so nothing else happens to the
nodes: a node cordoned or half drained by a Maintenance stays so (kubectl maintenance
uncordon), and a pool's labels and taints stay on its nodes.`

const uninstallExample = `  kubectl maintenance uninstall --controller
  kubectl maintenance uninstall --controller -n maintenance-system --force`

// newCmdUninstall builds "kubectl maintenance uninstall".
func newCmdUninstall(c *Common) *cobra.Command {
	o := &UninstallOptions{Common: c}
	cmd := &cobra.Command{
		Use:     "uninstall",
		Short:   "Remove the CRDs (and with --controller the in-cluster controller); refuses while Maintenances run or NodePools exist",
		Long:    uninstallLong,
		Example: uninstallExample,
		Args:    noArgsUsage,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.namespace = controllerNamespace(c)
			return o.Run(cmd.Context())
		},
	}
	cmd.Flags().BoolVar(&o.Controller, "controller", o.Controller, "Also remove the in-cluster controller: its Deployment and RBAC")
	cmd.Flags().BoolVar(&o.Force, "force", o.Force, "Uninstall even while Maintenances run or NodePools exist: they are deleted with the CRDs, their nodes left as they are")
	return cmd
}

// Run removes the objects, printing one line for each.
func (o *UninstallOptions) Run(ctx context.Context) error {
	objs, err := install.Objects(install.Options{Controller: o.Controller, Namespace: o.namespace})
	if err != nil {
		return err
	}
	pc, err := o.PoolClient()
	if err != nil {
		return err
	}
	done, err := install.Uninstall(ctx, pc, objs, install.UninstallOptions{Force: o.Force})
	for _, r := range done {
		fmt.Fprintf(o.Out, "%s %s\n", r.Ref, r.Verb)
	}
	var inUse *install.InUseError
	if errors.As(err, &inUse) {
		return fmt.Errorf("%w; finish, cancel or delete them first, or use --force", err)
	}
	return err
}

package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-maintenance/kubectl-maintenance/config/crd"
)

// NewCmdPool builds "kubectl maintenance pool" and its subcommands.
func NewCmdPool(c *Common) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pool",
		Short: "Node pools: the NodePool resource, moving nodes between pools, syncing labels, taints and RuntimeClasses",
		Long: `A NodePool (maintenance.kubectl-maintenance.io/v1alpha1) is a cluster-scoped pool of nodes:
a node is in pool X when it carries node-role.kubernetes.io/X="". The pool puts its
labels and taints on its nodes, recording on each node exactly what it applied
(annotation nodepool.kubectl-maintenance.io/<pool>), so that leaving the pool removes
exactly that and nothing another owner set. A pool with spec.runtimeClass gets a
RuntimeClass named after it, so a pod picks the pool with runtimeClassName alone.`,
		Args: noArgsUsage,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newCmdPoolInstall(c), newCmdPoolListPrinted(c), newCmdPoolGetPrinted(c), newCmdPoolApplyFiles(c),
		newCmdPoolDelete(c), NewCmdPoolMove(c), newCmdPoolSync(c), newCmdPoolController(c))
	return cmd
}

// poolClients returns the clientset and the NodePool client.
func poolClients(c *Common) (kubernetes.Interface, client.Client, error) {
	cs, err := c.Client()
	if err != nil {
		return nil, nil, err
	}
	pc, err := c.PoolClient()
	return cs, pc, err
}

func newCmdPoolInstall(c *Common) *cobra.Command {
	return &cobra.Command{
		Use:   "install",
		Short: "Install (or update) the NodePool CustomResourceDefinition; safe to run again",
		Args:  noArgsUsage,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, pc, err := poolClients(c)
			if err != nil {
				return err
			}
			verb, err := InstallCRD(cmd.Context(), pc)
			if err != nil {
				return err
			}
			fmt.Fprintf(c.Out, "customresourcedefinition.apiextensions.k8s.io/nodepools.maintenance.kubectl-maintenance.io %s\n", verb)
			return nil
		},
	}
}

// InstallCRD creates or updates the NodePool CRD and waits until it is Established. It
// returns "created", "configured" or "unchanged".
func InstallCRD(ctx context.Context, c client.Client) (string, error) {
	want := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(crd.NodePools, want); err != nil {
		return "", fmt.Errorf("decode the embedded NodePool CRD: %w", err)
	}
	cur := &apiextensionsv1.CustomResourceDefinition{}
	verb := "created"
	err := c.Get(ctx, types.NamespacedName{Name: want.Name}, cur)
	switch {
	case apierrors.IsNotFound(err):
		if err := c.Create(ctx, want); err != nil {
			return "", fmt.Errorf("create the NodePool CRD: %w", err)
		}
	case err != nil:
		return "", fmt.Errorf("get the NodePool CRD: %w", err)
	default:
		// The stored spec carries the API server's defaults, so comparing it with the
		// embedded one would always differ. The server knows: an update that changes the
		// spec (after defaulting) raises metadata.generation; a no-op update writes nothing.
		gen := cur.Generation
		cur.Spec = want.Spec
		if err := c.Update(ctx, cur); err != nil {
			return "", fmt.Errorf("update the NodePool CRD: %w", err)
		}
		verb = "unchanged"
		if cur.Generation != gen {
			verb = "configured"
		}
	}
	// Establishing takes the API server a moment; there is no watch in controller-runtime's
	// plain client, so look every 100 ms for at most 30 s.
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		got := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, types.NamespacedName{Name: want.Name}, got); err != nil {
			return false, nil
		}
		for _, cond := range got.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return "", fmt.Errorf("wait for the NodePool CRD to be established: %w", err)
	}
	return verb, nil
}

func exactlyOnePool(_ *cobra.Command, args []string) error {
	if len(args) != 1 {
		return UsageErrorf("give exactly one pool name, got %d", len(args))
	}
	return nil
}

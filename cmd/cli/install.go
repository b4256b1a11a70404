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
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-maintenance/kubectl-maintenance/config/crd"
)

// newCmdInstall builds "kubectl maintenance install" (and "pool install", the same
// command under its older name).
func newCmdInstall(c *Common, use, short string) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  noArgsUsage,
		RunE: func(cmd *cobra.Command, _ []string) error {
			pc, err := c.PoolClient()
			if err != nil {
				return err
			}
			for _, manifest := range crd.All() {
				name, verb, err := InstallCRD(cmd.Context(), pc, manifest)
				if err != nil {
					return err
				}
				fmt.Fprintf(c.Out, "customresourcedefinition.apiextensions.k8s.io/%s %s\n", name, verb)
			}
			return nil
		},
	}
}

// InstallCRD creates or updates the CRD of manifest and waits until it is Established. It
// returns the CRD's name and "created", "configured" or "unchanged".
func InstallCRD(ctx context.Context, c client.Client, manifest []byte) (name, verb string, err error) {
	want := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(manifest, want); err != nil {
		return "", "", fmt.Errorf("decode an embedded CRD: %w", err)
	}
	name = want.Name
	cur := &apiextensionsv1.CustomResourceDefinition{}
	verb = "created"
	err = c.Get(ctx, types.NamespacedName{Name: want.Name}, cur)
	switch {
	case apierrors.IsNotFound(err):
		if err := c.Create(ctx, want); err != nil {
			return "", "", fmt.Errorf("create the CRD %s: %w", name, err)
		}
	case err != nil:
		return "", "", fmt.Errorf("get the CRD %s: %w", name, err)
	default:
		// The stored spec carries the API server's defaults, so comparing it with the
		// embedded one would always differ. The server knows: an update that changes the
		// spec (after defaulting) raises metadata.generation; a no-op update writes nothing.
		gen := cur.Generation
		cur.Spec = want.Spec
		if err := c.Update(ctx, cur); err != nil {
			return "", "", fmt.Errorf("update the CRD %s: %w", name, err)
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
		return "", "", fmt.Errorf("wait for the CRD %s to be established: %w", name, err)
	}
	return name, verb, nil
}

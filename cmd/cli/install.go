package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kubectl-maintenance/kubectl-maintenance/config/crd"
	"github.com/kubectl-maintenance/kubectl-maintenance/operation"
)

// newCmdInstall builds "kubectl maintenance install" (and "pool install", the same
// command under its older name): the operations layer installs every CRD of the project.
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
			done, err := operation.InstallCRD(cmd.Context(), pc, crd.All())
			for _, d := range done {
				fmt.Fprintf(c.Out, "customresourcedefinition.apiextensions.k8s.io/%s %s\n", d.Name, d.Verb)
			}
			return err
		},
	}
}

package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kubectl-maintenance/kubectl-maintenance/render"
)

func newCmdPoolDelete(c *Common) *cobra.Command {
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "delete POOL",
		Short: "Delete a pool, removing from its nodes exactly what it applied (nodes stay schedulable as they were)",
		Long: `Delete a pool and remove from its nodes exactly what the pool applied: its labels and
taints, and the role label node-role.kubernetes.io/<pool> where the pool wrote it (in a
move). A role label someone set before the pool existed stays, as does anything set by
hand or by another pool. --dry-run prints each node's change and changes nothing; the
real delete reports each node.`,
		Args: exactlyOnePool,
		RunE: func(cmd *cobra.Command, args []string) error {
			args, err := poolArgs(args)
			if err != nil {
				return err
			}
			op, err := poolOperator(cmd.Context(), c)
			if err != nil {
				return err
			}
			changes, err := op.DeletePool(cmd.Context(), args[0], dryRun)
			sfx := ""
			if dryRun {
				sfx = " (dry run)"
			}
			render.NodeChanges(c.Out, changes, sfx)
			if err != nil {
				return err
			}
			fmt.Fprintf(c.Out, "nodepool.maintenance.kubectl-maintenance.io/%s deleted%s\n", args[0], sfx)
			return nil
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print what the delete would remove from each node; change nothing")
	return cmd
}

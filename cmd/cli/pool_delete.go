package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/render"
)

// PoolDeleteOptions is "pool delete POOL".
type PoolDeleteOptions struct {
	*Common
	Name string
	// DryRun prints each node's change and changes nothing.
	DryRun bool
}

// Complete reads the pool argument (NAME or nodepool.../NAME).
func (o *PoolDeleteOptions) Complete(_ *cobra.Command, args []string) error {
	names, err := poolArgs(args)
	if err != nil {
		return err
	}
	o.Name = names[0]
	return nil
}

// Validate has nothing left to check (Args checked the one pool).
func (o *PoolDeleteOptions) Validate() error { return nil }

// Run deletes the pool, printing each node's change.
func (o *PoolDeleteOptions) Run(ctx context.Context) error {
	op, err := poolOperator(ctx, o.Common)
	if err != nil {
		return err
	}
	changes, err := op.DeletePool(ctx, o.Name, o.DryRun)
	sfx := ""
	if o.DryRun {
		sfx = " (dry run)"
	}
	render.NodeChanges(o.Out, changes, sfx)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "nodepool.maintenance.kubectl-maintenance.io/%s deleted%s\n", o.Name, sfx)
	return nil
}

func newCmdPoolDelete(c *Common) *cobra.Command {
	o := &PoolDeleteOptions{Common: c}
	cmd := &cobra.Command{
		Use:   "delete POOL",
		Short: "Delete a pool, removing from its nodes exactly what it applied (nodes stay schedulable as they were)",
		Long: `Delete a pool and remove from its nodes exactly what the pool applied: its labels and
taints, and the role label node-role.kubernetes.io/<pool> where the pool wrote it (in a
move). A role label someone set before the pool existed stays, as does anything set by
hand or by another pool. --dry-run prints each node's change and changes nothing; the
real delete reports each node.`,
		Args: exactlyOnePool,
		RunE: runE(o),
	}
	cmd.Flags().BoolVar(&o.DryRun, "dry-run", false, "print what the delete would remove from each node; change nothing")
	return cmd
}

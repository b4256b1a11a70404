package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool"
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
			cs, pc, err := poolClients(c)
			if err != nil {
				return err
			}
			p, err := nodepool.GetPool(cmd.Context(), pc, args[0])
			if err != nil {
				return err
			}
			r := &nodepool.Reconciler{Client: pc, Kube: cs}
			if dryRun {
				changes, err := r.Cleanup(cmd.Context(), p, true)
				printNodeChanges(c.Out, changes, " (dry run)")
				if err == nil {
					fmt.Fprintf(c.Out, "nodepool.maintenance.kubectl-maintenance.io/%s deleted (dry run)\n", p.Name)
				}
				return err
			}
			if err := pc.Delete(cmd.Context(), p); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("delete pool %s: %w", p.Name, err)
			}
			// Clean the nodes now (the finalizer's work), so no controller is needed. A
			// controller that got there first leaves nothing to report.
			if err := pc.Get(cmd.Context(), types.NamespacedName{Name: p.Name}, p); err == nil && !p.DeletionTimestamp.IsZero() {
				changes, err := r.Cleanup(cmd.Context(), p, false)
				printNodeChanges(c.Out, changes, "")
				if err != nil {
					return err
				}
			} else if err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("get pool %s: %w", p.Name, err)
			}
			fmt.Fprintf(c.Out, "nodepool.maintenance.kubectl-maintenance.io/%s deleted\n", p.Name)
			return nil
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print what the delete would remove from each node; change nothing")
	return cmd
}

// printNodeChanges prints one line per node: what was (or would be) removed.
func printNodeChanges(w io.Writer, changes []nodepool.NodeChange, sfx string) {
	for _, ch := range changes {
		if len(ch.Diff) == 0 {
			fmt.Fprintf(w, "node/%s unchanged%s\n", ch.Node, sfx)
			continue
		}
		fmt.Fprintf(w, "node/%s: %s%s\n", ch.Node, strings.Join(ch.Diff, ", "), sfx)
	}
}

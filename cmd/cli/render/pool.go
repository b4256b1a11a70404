package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/reconciler"
	"github.com/kubectl-maintenance/kubectl-maintenance/operation"
)

// MovePlan writes a node's move plan on w (stderr): from and to which pools, the exact
// label and taint change, the labels kept, the pods the new NoExecute taints will remove,
// and the warnings. dryRun is the run's mode ("none", "client" or "server").
func MovePlan(w io.Writer, mv *operation.NodeMove, dryRun string) {
	if mv.Done {
		fmt.Fprintf(w, "move node/%s: already in pool %s, nothing to do\n", mv.Node, mv.To)
		return
	}
	from := strings.Join(mv.From, ",")
	if from == "" {
		from = "<no pool>"
	}
	resume := ""
	if mv.Resume {
		resume = " (resuming)"
	}
	fmt.Fprintf(w, "move node/%s: %s -> %s%s%s\n", mv.Node, from, mv.To, resume, DryRunSuffix(dryRun))
	for _, d := range mv.Diff {
		fmt.Fprintf(w, "  %s\n", d)
	}
	for _, k := range mv.Kept {
		fmt.Fprintf(w, "  =label %s (no NodePool owns it: kept)\n", k)
	}
	if len(mv.Removed) > 0 {
		fmt.Fprintf(w, "  the new NoExecute taints will remove %d DaemonSet/mirror pod(s): %s\n", len(mv.Removed), strings.Join(mv.Removed, ", "))
	}
	for _, warn := range mv.Warnings {
		fmt.Fprintf(w, "Warning: %s\n", warn)
	}
}

// NodeChanges writes one line per node: what a pool delete removed (or would remove,
// with sfx " (dry run)").
func NodeChanges(w io.Writer, changes []reconciler.NodeChange, sfx string) {
	for _, ch := range changes {
		if len(ch.Diff) == 0 {
			fmt.Fprintf(w, "node/%s unchanged%s\n", ch.Node, sfx)
			continue
		}
		fmt.Fprintf(w, "node/%s: %s%s\n", ch.Node, strings.Join(ch.Diff, ", "), sfx)
	}
}

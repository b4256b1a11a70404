package cli

import (
	"fmt"
	"io"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
)

// printCauses writes, under a node's plan table, the cause and remedy of each pod that
// waits on a budget for a reason worth knowing, or never goes.
func printCauses(w io.Writer, n event.NodePlan) {
	for _, s := range n.Steps {
		if s.Cause == "" {
			continue
		}
		if s.Cause != s.Blocker {
			fmt.Fprintf(w, "  pod %s/%s: %s\n", s.Pod.Namespace, s.Pod.Name, s.Cause)
			fmt.Fprintf(w, "    remedy: %s\n", s.Remedy)
			continue
		}
		fmt.Fprintf(w, "  pod %s/%s: remedy: %s\n", s.Pod.Namespace, s.Pod.Name, s.Remedy)
	}
}

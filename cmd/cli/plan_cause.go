package cli

import (
	"fmt"
	"io"
	"sort"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

// printCauses writes, under a node's plan table, the cause and remedy of each pod that
// waits on a budget for a reason worth knowing, or never goes. A remedy is written once
// per plan (said records those written): pods of one budget share it.
func printCauses(w io.Writer, n event.NodePlan, said map[string]bool) {
	for _, s := range n.Steps {
		if s.Cause == "" {
			continue
		}
		remedy := s.Remedy != "" && !said[s.Remedy]
		said[s.Remedy] = true
		switch {
		case s.Cause != s.Blocker:
			fmt.Fprintf(w, "  pod %s/%s: %s\n", s.Pod.Namespace, s.Pod.Name, s.Cause)
			if remedy {
				fmt.Fprintf(w, "    remedy: %s\n", s.Remedy)
			}
		case remedy:
			fmt.Fprintf(w, "  pod %s/%s: remedy: %s\n", s.Pod.Namespace, s.Pod.Name, s.Remedy)
		}
	}
}

// byWave returns a node's steps in the order they go: wave 1 first, the pods that never
// go last, by pod within a wave.
func byWave(steps []pdb.Step) []pdb.Step {
	out := append([]pdb.Step(nil), steps...)
	rank := func(s pdb.Step) int {
		if s.Wave == 0 {
			return int(^uint(0) >> 1)
		}
		return s.Wave
	}
	sort.SliceStable(out, func(i, j int) bool {
		if ri, rj := rank(out[i]), rank(out[j]); ri != rj {
			return ri < rj
		}
		return out[i].Pod.Namespace+"/"+out[i].Pod.Name < out[j].Pod.Namespace+"/"+out[j].Pod.Name
	})
	return out
}

package render

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"text/tabwriter"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

// PlanJSON is the machine form of a plan (plan -o json, and the "plan" event).
type PlanJSON struct {
	Waves   int            `json:"waves"`
	ETA     *etaJSON       `json:"eta"`
	Verdict string         `json:"verdict"`
	Nodes   []nodePlanJSON `json:"nodes"`

	// Dead nodes and force (planned maintenance), 1.4.
	ForceAfter float64         `json:"force_after_seconds,omitempty"`
	WouldForce []event.Blocker `json:"would_force,omitempty"`
}

type nodePlanJSON struct {
	Name            string        `json:"name"`
	AlreadyCordoned bool          `json:"already_cordoned"`
	Verdict         string        `json:"verdict"`
	Pods            []podPlanJSON `json:"pods"`
	Warnings        []string      `json:"warnings,omitempty"`
	Errors          []string      `json:"errors,omitempty"`
	Order           []orderJSON   `json:"order,omitempty"` // drain order groups (order.go)
	// Dead says the node is not ready (1.4).
	Dead string `json:"dead,omitempty"`
}

type podPlanJSON struct {
	Pod     string `json:"pod"`
	Wave    int    `json:"wave"`
	Verdict string `json:"verdict"`
	PDB     string `json:"pdb,omitempty"`
	WaitsOn string `json:"waits_on,omitempty"`
	Reason  string `json:"reason"`
	Cause   string `json:"cause,omitempty"`
	Remedy  string `json:"remedy,omitempty"`
}

// Plan verdicts, of a node and of a whole plan.
const (
	VerdictReady   = "ready"   // everything can go, in Waves waves
	VerdictBlocked = "blocked" // some pod can never go as things stand (exit 3)
	VerdictRefused = "refused" // kubectl's filters refuse the node with these flags (exit 3)
)

// NodeVerdict is a node's verdict: refused, blocked or ready.
func NodeVerdict(n event.NodePlan) string {
	switch {
	case len(n.Errors) > 0:
		return VerdictRefused
	case n.Blocked():
		return VerdictBlocked
	}
	return VerdictReady
}

// ToPlanJSON is the plan's machine form.
func ToPlanJSON(p *event.Plan) *PlanJSON {
	out := &PlanJSON{Waves: p.Waves, ETA: toETAJSON(p.ETA), Verdict: VerdictReady, ForceAfter: p.ForceAfter.Seconds(), WouldForce: p.WouldForce}
	for _, n := range p.Nodes {
		nj := nodePlanJSON{Name: n.Name, AlreadyCordoned: n.AlreadyCordoned, Verdict: NodeVerdict(n),
			Warnings: n.Warnings, Errors: n.Errors, Pods: []podPlanJSON{}, Order: toOrderJSON(n.Order), Dead: n.Dead}
		if nj.Verdict != VerdictReady && out.Verdict == VerdictReady {
			out.Verdict = VerdictBlocked
		}
		for _, s := range n.Steps {
			reason := s.Decision.Reason
			if s.Wave == 0 {
				reason = s.Blocker
			}
			nj.Pods = append(nj.Pods, podPlanJSON{Pod: s.Pod.Namespace + "/" + s.Pod.Name, Wave: s.Wave,
				Verdict: string(s.Decision.Verdict), PDB: pdb.JoinKeys(s.Decision.Budgets), WaitsOn: s.WaitsOn, Reason: reason,
				Cause: s.Cause, Remedy: s.Remedy})
		}
		out.Nodes = append(out.Nodes, nj)
	}
	return out
}

// Plan writes the plan for a person: a table per node (its pods by wave, the budget each
// waits on and why), each cause and remedy under it, then the headline and the ETA.
func Plan(w io.Writer, plan *event.Plan) {
	said := map[string]bool{}
	for i, n := range plan.Nodes {
		n.Steps = byWave(n.Steps)
		if i > 0 {
			fmt.Fprintln(w)
		}
		state := "schedulable"
		if n.AlreadyCordoned {
			state = "already cordoned"
		}
		fmt.Fprintf(w, "node/%s (%s): %s, %d pod(s) to evict\n", n.Name, state, NodeVerdict(n), len(n.Steps))
		for _, e := range n.Errors {
			fmt.Fprintf(w, "  error: %s\n", e)
		}
		for _, warn := range n.Warnings {
			fmt.Fprintf(w, "  warning: %s\n", warn)
		}
		if len(n.Steps) == 0 {
			printOrder(w, n) // order.go
			continue
		}
		tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "  WAVE\tPOD\tPDB\tWHY")
		for _, s := range n.Steps {
			wave, why := strconv.Itoa(s.Wave), s.Decision.Reason
			switch {
			case s.Wave == 0:
				wave, why = "never", s.Blocker
			case s.WaitsOn != "":
				why = fmt.Sprintf("waits for pdb %s to recover after wave %d", s.WaitsOn, s.Wave-1)
			}
			budget := pdb.JoinKeys(s.Decision.Budgets)
			if budget == "" {
				budget = "-"
			}
			fmt.Fprintf(tw, "  %s\t%s/%s\t%s\t%s\n", wave, s.Pod.Namespace, s.Pod.Name, budget, why)
		}
		_ = tw.Flush()
		printOrder(w, n) // order.go
		printCauses(w, n, said)
	}
	planForce(w, plan) // force.go
	fmt.Fprintf(w, "\n%s\n%s\n", PlanHeadline(plan), etaLine(plan))
}

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

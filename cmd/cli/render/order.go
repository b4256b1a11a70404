package render

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
)

// Drain order (planned maintenance): a node's pods by order group, the ones kept (skip,
// wait-completed) and the ones Karpenter's do-not-disrupt protects until a time.

// orderJSON is one pod's place in its node's drain order, in the JSON plan.
type orderJSON struct {
	Pod    string `json:"pod"`
	Group  string `json:"group"`
	Order  int32  `json:"order"`
	Source string `json:"source,omitempty"`
	Until  string `json:"until,omitempty"`
}

func toOrderJSON(os []event.PodOrder) []orderJSON {
	var out []orderJSON
	for _, o := range os {
		j := orderJSON{Pod: o.Pod, Group: o.Group, Order: o.Order, Source: o.Source}
		if !o.Until.IsZero() {
			j.Until = o.Until.UTC().Format(time.RFC3339)
		}
		out = append(out, j)
	}
	return out
}

// printOrder writes, under a node's plan table, its drain order: each pod's group (lowest
// first: a group starts once the pods of the groups before it are gone), the pods kept,
// and until when a do-not-disrupt duration protects a pod.
func printOrder(w io.Writer, n event.NodePlan) {
	if len(n.Order) == 0 {
		return
	}
	fmt.Fprintln(w, "  drain order (a group starts once every pod of the groups before it is gone):")
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "  GROUP\tPOD\tFROM")
	for _, o := range n.Order {
		group := o.Group
		if !o.Until.IsZero() {
			group = fmt.Sprintf("do-not-disrupt until %s, then order %d", o.Until.UTC().Format(time.RFC3339), o.Order)
		}
		from := o.Source
		if from == "" {
			from = "-"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", group, o.Pod, from)
	}
	_ = tw.Flush()
}

// dryRunOrder writes, for a --dry-run, the drain order of each node that has one.
func dryRunOrder(w io.Writer, plan *event.Plan) {
	for _, n := range plan.Nodes {
		if len(n.Order) > 0 {
			fmt.Fprintf(w, "node/%s:\n", n.Name)
			printOrder(w, n)
		}
	}
}

package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// newCmdDescribe builds "describe NAME...": a Maintenance for a person: what it does, where
// it is, each node with what blocks it, and its Events.
func newCmdDescribe(c *Common) *cobra.Command {
	return &cobra.Command{
		Use:   "describe NAME...",
		Short: "Describe Maintenances: spec, phase, conditions, each node's state and blockers, Events",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return UsageErrorf("name the Maintenance(s) to describe")
			}
			mc, err := c.PoolClient()
			if err != nil {
				return err
			}
			cs, err := c.Client()
			if err != nil {
				return err
			}
			list, err := getMaintenances(cmd.Context(), mc, args)
			if err != nil {
				return err
			}
			for i := range list.Items {
				m := &list.Items[i]
				evs, err := cs.CoreV1().Events(metav1.NamespaceDefault).List(cmd.Context(), metav1.ListOptions{
					FieldSelector: fields.Set{"involvedObject.name": m.Name, "involvedObject.kind": "Maintenance"}.String()})
				var events []corev1.Event
				if err == nil {
					events = evs.Items
				}
				describeMaintenance(c.Out, m, events)
			}
			return nil
		},
	}
}

func describeMaintenance(w io.Writer, m *mntv1.Maintenance, events []corev1.Event) {
	s, st := m.Spec, m.Status
	nodes := strings.Join(s.Nodes, ",")
	switch {
	case s.Selector != "":
		nodes = "-l " + s.Selector
	case s.Pool != "":
		nodes = "pool " + s.Pool
	}
	fmt.Fprintf(w, "Name:         %s\nAction:       %s", m.Name, s.Action)
	if s.To != "" {
		fmt.Fprintf(w, " to pool %s", s.To)
	}
	fmt.Fprintf(w, "\nNodes:        %s\nPaused:       %t\nReason:       %s\nPhase:        %s\n", nodes, s.Paused, s.Reason, st.Phase)
	if st.Message != "" {
		fmt.Fprintf(w, "Message:      %s\n", st.Message)
	}
	if st.StartTime != nil {
		fmt.Fprintf(w, "Started:      %s\n", st.StartTime.UTC().Format("2006-01-02T15:04:05Z"))
	}
	if st.CompletionTime != nil {
		fmt.Fprintf(w, "Completed:    %s\n", st.CompletionTime.UTC().Format("2006-01-02T15:04:05Z"))
	}
	k := st.Counts
	fmt.Fprintf(w, "Counts:       %d node(s) drained, %d failed, %d pending; %d pod(s) evicted, %d left; %d eviction request(s), %d refused\n",
		k.NodesDrained, k.NodesFailed, k.NodesPending, k.PodsEvicted, k.PodsPending, k.Evictions, k.Refusals)
	fmt.Fprintln(w, "Conditions:")
	for _, cond := range st.Conditions {
		fmt.Fprintf(w, "  %s=%s (%s): %s\n", cond.Type, cond.Status, cond.Reason, cond.Message)
	}
	fmt.Fprintln(w, "Nodes:")
	for _, n := range st.Nodes {
		since := ""
		if n.Since != nil {
			since = " since " + n.Since.UTC().Format("15:04:05Z")
		}
		fmt.Fprintf(w, "  %s: %s%s, %d pod(s) left", n.Name, n.State, since, n.PodsLeft)
		if n.Message != "" {
			fmt.Fprintf(w, ": %s", n.Message)
		}
		fmt.Fprintln(w)
		for _, b := range n.Blockers {
			fmt.Fprintf(w, "    pod %s waits: %s\n", b.Pod, b.Message)
			if b.Cause != "" {
				fmt.Fprintf(w, "      cause: %s\n", b.Cause)
			}
			if b.Remedy != "" {
				fmt.Fprintf(w, "      remedy: %s\n", b.Remedy)
			}
		}
	}
	if len(events) > 0 {
		fmt.Fprintln(w, "Events:")
		for _, e := range events {
			fmt.Fprintf(w, "  %s %s: %s\n", e.Type, e.Reason, e.Message)
		}
	}
	fmt.Fprintln(w)
}

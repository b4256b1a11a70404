package cli

import (
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance"
	"github.com/kubectl-maintenance/kubectl-maintenance/render"
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
			list, err := maintenance.Get(cmd.Context(), mc, args)
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
				render.DescribeMaintenance(c.Out, m, events)
			}
			return nil
		},
	}
}

package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/render"
	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance"
)

// DescribeOptions is "describe NAME...": a Maintenance for a person: what it does, where
// it is, each node with what blocks it, and its Events.
type DescribeOptions struct {
	*Common
	Names []string
}

// Complete takes the names.
func (o *DescribeOptions) Complete(_ *cobra.Command, args []string) error {
	o.Names = args
	return nil
}

// Validate checks that a name was given.
func (o *DescribeOptions) Validate() error {
	if len(o.Names) == 0 {
		return UsageErrorf("name the Maintenance(s) to describe")
	}
	return nil
}

// Run describes each Maintenance with its Events.
func (o *DescribeOptions) Run(ctx context.Context) error {
	mc, err := o.PoolClient()
	if err != nil {
		return err
	}
	cs, err := o.Client()
	if err != nil {
		return err
	}
	list, err := maintenance.Get(ctx, mc, o.Names)
	if err != nil {
		return err
	}
	for i := range list.Items {
		m := &list.Items[i]
		render.DescribeMaintenance(o.Out, m, maintenance.Events(ctx, cs, m.Name))
	}
	return nil
}

func newCmdDescribe(c *Common) *cobra.Command {
	return &cobra.Command{
		Use:   "describe NAME...",
		Short: "Describe Maintenances: spec, phase, conditions, each node's state and blockers, Events",
		RunE:  runE(&DescribeOptions{Common: c}),
	}
}

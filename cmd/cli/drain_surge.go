package cli

import "github.com/spf13/cobra"

// surgeOptions is drain's --surge (embedded in DrainOptions, so drain, plan and the pool
// drains and moves share it).
type surgeOptions struct {
	// Surge moves a pod whose budget never allows a disruption by surging its
	// one-replica Deployment.
	Surge bool
}

func (o *surgeOptions) addSurgeFlags(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&o.Surge, "surge", o.Surge, "move the pod of a one-replica Deployment whose PodDisruptionBudget never allows a disruption (minAvailable: 1) by scaling the Deployment to 2 until the pod is evicted; refused (exit 3, nothing changed) under maxUnavailable: 0, an autoscaler, or a StatefulSet")
}

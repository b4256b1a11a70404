package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/kubectl-maintenance/kubectl-maintenance/access"
	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/surge"
)

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

// surgePermit is the engine's Permit for --surge: once the plan knows which Deployments
// it will scale, the user's permission to scale them is checked before anything changes
// (nil without --surge).
func (o *DrainOptions) surgePermit(cs kubernetes.Interface) func(context.Context, drain.Permits) error {
	if !o.Surge {
		return nil
	}
	return func(ctx context.Context, p drain.Permits) error {
		return o.checkAccess(ctx, cs, o.DryRun, access.Surge(p.SurgeNamespaces))
	}
}

// restoreSurges restores the Deployments a drain surged for pods of node (uncordon undoes
// what the drain left), printing a line for each; it returns the failures, one line each.
// A user who may not list Deployments has no surge to restore as far as uncordon can tell:
// that is not a failure of the uncordon.
func (o *CordonOptions) restoreSurges(ctx context.Context, cs kubernetes.Interface, node string) []string {
	s := surge.New(cs)
	pending, err := s.Pending(ctx, []string{node})
	if apierrors.IsForbidden(err) {
		klog.FromContext(ctx).V(2).Info("cannot look for surged deployments", "err", err)
		return nil
	}
	if err != nil {
		return []string{oneLine(err.Error())}
	}
	var failed []string
	for _, t := range pending {
		if o.DryRun != "none" {
			fmt.Fprintf(o.Out, "deployment.apps/%s restored to %d replicas%s\n", t.Name, t.Replicas, dryRunSuffix(o.DryRun))
			continue
		}
		res, evicted, err := s.Unwind(ctx, t.Namespace, t.Name)
		for _, p := range evicted {
			fmt.Fprintf(o.Out, "pod/%s evicted (surplus of deployment.apps/%s)\n", podName(p), t.Name)
		}
		switch {
		case err != nil:
			failed = append(failed, oneLine(err.Error()))
		case res.Already:
		case res.Changed:
			fmt.Fprintf(o.Out, "deployment.apps/%s kept at %d replicas (scaled by someone else during the surge); surge record removed\n", t.Name, res.Replicas)
		default:
			fmt.Fprintf(o.Out, "deployment.apps/%s restored to %d replicas\n", t.Name, res.Replicas)
		}
	}
	return failed
}

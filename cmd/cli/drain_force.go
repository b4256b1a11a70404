package cli

import (
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// ForceFlags are the flags of dead nodes and of force at a deadline: --force-after and
// --never-force (with --on-blocked=force), and --dead-node-delete-wait.
type ForceFlags struct {
	// ForceAfter is how long a pod must have been blocked before --on-blocked=force
	// deletes it. Required with force; no default.
	ForceAfter time.Duration
	// NeverForce are budgets (NAMESPACE/NAME) whose pods are never forced.
	NeverForce []string
	// DeadNodeDeleteWait is how long a pod whose deletion started on a dead node still
	// blocks it; 0: for ever.
	DeadNodeDeleteWait time.Duration
	// flags: the flags were added (a command without them keeps the engine's defaults).
	flags bool
}

// addForceFlags adds --force-after, --never-force and --dead-node-delete-wait.
func (p *ForceFlags) addForceFlags(f *pflag.FlagSet) {
	p.flags = true
	f.DurationVar(&p.ForceAfter, "force-after", 0, "with --on-blocked=force (required there, no default): how long a pod must have been blocked by its PodDisruptionBudget, by the same clock as --blocked-after (outages do not count), before it is deleted instead of evicted")
	f.StringSliceVar(&p.NeverForce, "never-force", nil, "with --on-blocked=force: budgets (NAMESPACE/NAME,...) whose pods are never forced; they wait as with --on-blocked=wait")
	f.DurationVar(&p.DeadNodeDeleteWait, "dead-node-delete-wait", drain.DefaultDeadNodeDeleteWait, "on a node that is not ready (Ready Unknown or False): how long a pod whose deletion started still blocks the node (kubectl's --skip-wait-for-delete-timeout for dead nodes); 0: wait for ever")
}

// validateForce checks the force and dead-node flags; force is --on-blocked=force.
func (p *ForceFlags) validateForce(force bool) error {
	switch {
	case p.ForceAfter < 0:
		return UsageErrorf("invalid --force-after %s: must be positive", p.ForceAfter)
	case force && p.ForceAfter == 0:
		return UsageErrorf("--on-blocked=force needs an explicit --force-after DURATION (how long a pod stays blocked before it is deleted, below its budget)")
	case !force && p.ForceAfter > 0:
		return UsageErrorf("--force-after needs --on-blocked=force")
	case !force && len(p.NeverForce) > 0:
		return UsageErrorf("--never-force needs --on-blocked=force")
	case p.DeadNodeDeleteWait < 0:
		return UsageErrorf("invalid --dead-node-delete-wait %s: must not be negative (0: wait for ever)", p.DeadNodeDeleteWait)
	}
	for _, k := range p.NeverForce {
		ns, name, ok := strings.Cut(k, "/")
		if !ok || len(validation.IsDNS1123Label(ns)) > 0 || len(validation.IsDNS1123Subdomain(name)) > 0 {
			return UsageErrorf("invalid --never-force %q: want NAMESPACE/NAME of a PodDisruptionBudget", k)
		}
	}
	return nil
}

// forcePolicy sets the engine's force and dead-node settings from the flags.
func (p *ForceFlags) forcePolicy(pol *drain.Policy) {
	pol.ForceAfter, pol.NeverForce = p.ForceAfter, p.NeverForce
	pol.DeadNodeDeleteWait = p.DeadNodeDeleteWait
	if p.flags && p.DeadNodeDeleteWait == 0 {
		pol.DeadNodeDeleteWait = -1 // the flag's 0 is for ever; the engine's 0 its default
	}
}

// addPlanForceFlags adds to plan the drain's --on-blocked, --force-after and
// --never-force, so that a plan under --on-blocked=force lists what would be forced.
func (p *PolicyFlags) addPlanForceFlags(f *pflag.FlagSet, drainCmd *cobra.Command) {
	f.StringVar(&p.OnBlocked, "on-blocked", string(drain.OnBlockedWait), drainCmd.Flags().Lookup("on-blocked").Usage)
	f.DurationVar(&p.ForceAfter, "force-after", 0, drainCmd.Flags().Lookup("force-after").Usage)
	f.StringSliceVar(&p.NeverForce, "never-force", nil, drainCmd.Flags().Lookup("never-force").Usage)
}

// forceSpec sets a Maintenance's force and dead-node settings from the flags.
func (p *ForceFlags) forceSpec(s *mntv1.MaintenanceSpec) {
	if p.ForceAfter > 0 {
		s.Policy.ForceAfter = mntv1.DurationOf(p.ForceAfter)
	}
	s.Policy.NeverForce = p.NeverForce
	if p.flags && p.DeadNodeDeleteWait != drain.DefaultDeadNodeDeleteWait {
		s.Drain.DeadNodeDeleteWait = mntv1.DurationOf(p.DeadNodeDeleteWait)
	}
}

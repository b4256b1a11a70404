package cli

import (
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
)

// ForceFlags are the flags of dead nodes and of force at a deadline: --force-after and
// --never-force (with --on-blocked=force, bound to drain.Settings), and
// --dead-node-delete-wait, whose 0 is not the setting's (readForce).
type ForceFlags struct {
	// DeadNodeDeleteWait is how long a pod whose deletion started on a dead node still
	// blocks it; 0: for ever.
	DeadNodeDeleteWait time.Duration
	// flags: the flags were added (a command without them keeps the engine's defaults).
	flags bool
}

// addForceFlags adds --force-after, --never-force (bound to s) and --dead-node-delete-wait.
func (p *ForceFlags) addForceFlags(f *pflag.FlagSet, s *drain.Settings) {
	p.flags = true
	f.DurationVar(&s.ForceAfter, "force-after", 0, "with --on-blocked=force (required there, no default): how long a pod must have been blocked by its PodDisruptionBudget, by the same clock as --blocked-after (outages do not count), before it is deleted instead of evicted")
	f.StringSliceVar(&s.NeverForce, "never-force", nil, "with --on-blocked=force: budgets (NAMESPACE/NAME,...) whose pods are never forced; they wait as with --on-blocked=wait")
	f.DurationVar(&p.DeadNodeDeleteWait, "dead-node-delete-wait", drain.DefaultDeadNodeDeleteWait, "on a node that is not ready (Ready Unknown or False): how long a pod whose deletion started still blocks the node (kubectl's --skip-wait-for-delete-timeout for dead nodes); 0: wait for ever")
}

// readForce reads --dead-node-delete-wait into s: the flag's 0 is for ever (the
// setting's -1), its default the engine's (the setting's 0). A negative flag is refused
// here, as the setting's negative means for ever.
func (p *ForceFlags) readForce(s *drain.Settings) error {
	if !p.flags {
		return nil // a command without the flags keeps the setting
	}
	switch {
	case p.DeadNodeDeleteWait < 0:
		return UsageErrorf("invalid --dead-node-delete-wait %s: must not be negative (0: wait for ever)", p.DeadNodeDeleteWait)
	case p.DeadNodeDeleteWait == 0:
		s.DeadNodeDeleteWait = -1
	case p.DeadNodeDeleteWait == drain.DefaultDeadNodeDeleteWait:
		s.DeadNodeDeleteWait = 0
	default:
		s.DeadNodeDeleteWait = p.DeadNodeDeleteWait
	}
	return nil
}

// addPlanForceFlags adds to plan the drain's --on-blocked, --force-after and
// --never-force, so that a plan under --on-blocked=force lists what would be forced.
func addPlanForceFlags(f *pflag.FlagSet, drainCmd *cobra.Command, s *drain.Settings) {
	f.StringVar((*string)(&s.OnBlocked), "on-blocked", string(drain.OnBlockedWait), drainCmd.Flags().Lookup("on-blocked").Usage)
	f.DurationVar(&s.ForceAfter, "force-after", 0, drainCmd.Flags().Lookup("force-after").Usage)
	f.StringSliceVar(&s.NeverForce, "never-force", nil, drainCmd.Flags().Lookup("never-force").Usage)
}

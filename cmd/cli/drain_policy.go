package cli

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/kubectl-maintenance/kubectl-maintenance/access"
	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/completion"
	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/kubeargs"
	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
)

// PolicyFlags are drain's policy flags: what to do with blocked nodes (--on-blocked,
// --blocked-after), a deadline for starting nodes (--not-after) and the soak of a rolling
// drain (--soak). DrainOptions embeds them, so drain, drain --pool and pool move share
// them. The flags that are settings bind to drain.Settings (addPolicyFlags); these are
// the ones that need reading first.
type PolicyFlags struct {
	// NotAfter is an RFC 3339 time or a duration from now; "" for none. validatePolicy
	// resolves it into Settings.NotAfter.
	NotAfter string
	// rollingCommand: the command is rolling whatever its nodes (pool move), so --soak
	// needs no --pool.
	rollingCommand bool
	// pool is the --pool of the command's nodes ("" for none), for --soak's check.
	pool string

	// now is the clock NotAfter durations count from (time.Now when nil).
	now func() time.Time

	// Dead nodes and force (planned maintenance): --force-after, --never-force,
	// --dead-node-delete-wait (drain_force.go).
	ForceFlags
}

// addPolicyFlags adds --on-blocked, --blocked-after, --soak (bound to s) and --not-after.
func (p *PolicyFlags) addPolicyFlags(cmd *cobra.Command, s *drain.Settings) {
	f := cmd.Flags()
	f.StringVar((*string)(&s.OnBlocked), "on-blocked", string(drain.OnBlockedWait), `what to do with a node whose pods a PodDisruptionBudget does not let go: "wait" (until --timeout), "skip" (give it up after --blocked-after, leave it cordoned in state blocked, go on with the others; exit 3), "fail" (stop before anything is cordoned if the plan has a pod that can never go; exit 3) or "force" (delete, not evict, a pod blocked for --force-after; exit 5)`)
	f.DurationVar(&s.BlockedAfter, "blocked-after", drain.DefaultBlockedAfter, "with --on-blocked=skip: how long every pod left on a node must have been blocked, by budgets whose status did not move, before the node is given up")
	f.StringVar(&p.NotAfter, "not-after", "", "no node starts draining after this time (RFC 3339, e.g. 2026-11-25T06:00:00Z, or a duration from now, e.g. 2h); nodes in progress finish; nodes not started are listed (exit 4)")
	f.DurationVar(&s.Soak, "soak", 0, "in a rolling drain (--pool) or a pool move: how long a drained node keeps its slot before the next node starts (e.g. 2m, to see the workloads settle); 0: at once")
	p.addForceFlags(f, s)
	_ = cmd.RegisterFlagCompletionFunc("on-blocked", completion.FixedChoices("wait", "skip", "fail", "force"))
}

// readPolicy reads the policy flags into s: --not-after resolved to a time, and
// --dead-node-delete-wait. It checks what only a command line can get wrong (--soak
// without a rolling drain, a --not-after that is no time); Settings.Validate checks the
// settings.
func (p *PolicyFlags) readPolicy(s *drain.Settings) error {
	if s.Soak > 0 && p.pool == "" && !p.rollingCommand {
		return UsageErrorf("--soak needs a rolling drain: --pool POOL (or pool move)")
	}
	t, err := kubeargs.NotAfter(p.NotAfter, p.clock())
	if err != nil {
		return err
	}
	s.NotAfter = t
	return p.readForce(s)
}

func (p *PolicyFlags) clock() time.Time {
	if p.now != nil {
		return p.now()
	}
	return time.Now()
}

// fallbackUser names the user as far as the kubeconfig can tell
// (access.UserFromKubeconfig): the operations layer's Operator.User, for when the API
// server will not say.
func (c *Common) fallbackUser() string {
	if c.ConfigFlags == nil {
		return ""
	}
	cfg, _ := c.RESTConfig() // nil: the kubeconfig's context alone tells
	context := ""
	if c.ConfigFlags.Context != nil {
		context = *c.ConfigFlags.Context
	}
	return access.UserFromKubeconfig(cfg, c.ConfigFlags.ToRawKubeConfigLoader(), context)
}

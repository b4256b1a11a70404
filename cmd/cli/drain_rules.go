package cli

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
)

// DrainRuleOptions are the flags of the ecosystem's drain rules and of the wait lines,
// embedded in DrainOptions.
type DrainRuleOptions struct {
	// WaitInterval is how often a wait that has not changed is said again.
	WaitInterval time.Duration
	// Drain order (planned maintenance).
	DrainOrderFlags // --drain-order, --drain-order-file (drain_order.go)
}

// addRuleFlags adds --ignore-do-not-disrupt (bound to s) and --wait-interval.
func (o *DrainRuleOptions) addRuleFlags(f *pflag.FlagSet, s *drain.Settings) {
	o.addDoNotDisruptFlag(f, s)
	if o.WaitInterval == 0 {
		o.WaitInterval = drain.DefaultWaitInterval
	}
	f.DurationVar(&o.WaitInterval, "wait-interval", o.WaitInterval, "while a pod waits and nothing changes, say the wait again this often, with how long it has lasted and why")
}

// addDoNotDisruptFlag adds --ignore-do-not-disrupt and the drain order flags, bound to s
// (plan takes them too).
func (o *DrainRuleOptions) addDoNotDisruptFlag(f *pflag.FlagSet, s *drain.Settings) {
	o.addDrainOrderFlags(f, s)
	f.BoolVar(&s.IgnoreDoNotDisrupt, "ignore-do-not-disrupt", s.IgnoreDoNotDisrupt, `evict pods annotated karpenter.sh/do-not-disrupt: "true" (by default they are not evicted and their node cannot finish draining)`)
}

// validateRules checks the flags without calling the API and reads the drain order
// into s.
func (o *DrainRuleOptions) validateRules(s *drain.Settings) error {
	if o.WaitInterval != 0 && o.WaitInterval < time.Second {
		return UsageErrorf("invalid --wait-interval %s: must be at least 1s", o.WaitInterval)
	}
	return o.validateDrainOrder(s)
}

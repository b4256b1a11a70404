package cli

import (
	"os"

	"github.com/spf13/pflag"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/drainrule"
)

// DrainOrderFlags are --drain-order and --drain-order-file (drain and plan): the run's own
// drain rules, in the shape of Cluster API's MachineDrainRules.
type DrainOrderFlags struct {
	// DrainOrder is "SELECTOR:ORDER|skip|wait-completed,...".
	DrainOrder string
	// DrainOrderFile is a YAML list of rules (selector, namespaceSelector, order or behavior).
	DrainOrderFile string
}

// addDrainOrderFlags adds --drain-order, --drain-order-file and
// --ignore-machine-drain-rules (bound to s).
func (o *DrainOrderFlags) addDrainOrderFlags(f *pflag.FlagSet, s *drain.Settings) {
	f.StringVar(&o.DrainOrder, "drain-order", o.DrainOrder, `drain order rules, comma-separated SELECTOR:VALUE (VALUE an order group, lowest first, default 0; or skip, wait-completed), e.g. 'app=fluentd:10,app=etcd-backup:wait-completed'; tried before Cluster API's MachineDrainRules`)
	f.StringVar(&o.DrainOrderFile, "drain-order-file", o.DrainOrderFile, "a YAML list of drain order rules (selector, namespaceSelector, order or behavior: Drain, Skip, WaitCompleted), tried after --drain-order")
	f.BoolVar(&s.IgnoreMachineDrainRules, "ignore-machine-drain-rules", s.IgnoreMachineDrainRules, "do not read Cluster API's MachineDrainRules (read by default when the cluster serves them)")
}

// validateDrainOrder parses both flags into s.DrainOrder without calling the API: a bad
// rule is one line naming it (exit 2).
func (o *DrainOrderFlags) validateDrainOrder(s *drain.Settings) error {
	rules, err := drainrule.ParseFlag(o.DrainOrder)
	if err != nil {
		return UsageErrorf("invalid --drain-order: %v", err)
	}
	if o.DrainOrderFile != "" {
		data, err := os.ReadFile(o.DrainOrderFile)
		if err != nil {
			return UsageErrorf("invalid --drain-order-file: %v", err)
		}
		more, err := drainrule.ParseFile(data)
		if err != nil {
			return UsageErrorf("invalid --drain-order-file %s: %v", o.DrainOrderFile, err)
		}
		rules = append(rules, more...)
	}
	s.DrainOrder = rules
	return nil
}

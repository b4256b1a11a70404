package maintenance

import (
	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// forceSettings sets the drain's force and dead-node settings from the spec:
// policy.forceAfter and policy.neverForce, and drain.deadNodeDeleteWait (unset: the
// engine's default; 0: wait for ever).
func forceSettings(s v1alpha1.MaintenanceSpec, cfg *drain.Config) error {
	var err error
	if cfg.ForceAfter, err = s.Policy.ForceAfter.Parse("spec.policy.forceAfter"); err != nil {
		return err
	}
	cfg.NeverForce = s.Policy.NeverForce
	if s.Drain.DeadNodeDeleteWait != nil {
		if cfg.DeadNodeDeleteWait, err = s.Drain.DeadNodeDeleteWait.Parse("spec.drain.deadNodeDeleteWait"); err != nil {
			return err
		}
		if cfg.DeadNodeDeleteWait == 0 {
			cfg.DeadNodeDeleteWait = -1 // for ever
		}
	}
	return nil
}

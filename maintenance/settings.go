package maintenance

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// SettingsFromSpec is the drain settings of a Maintenance's spec (spec.drain and
// spec.policy): the one translation from the spec to drain.Settings, the inverse of
// SpecFromSettings. It starts from drain.DefaultSettings, the one place of the
// defaults, and writes what the spec says over it: an unset field keeps its default.
// MaxParallelNodes is the spec's, 0 when unset (the request's default: 5, or a pool's
// maxUnavailable); the settings a Maintenance does not carry (DryRun: a Maintenance
// always runs; IgnoreMachineDrainRules) keep their zero values. It reads, it does not
// validate: the CRD's rules refused what they can, and Settings.Validate (in Request)
// names what is left (a duration Go cannot read is an error naming its field).
func SettingsFromSpec(s v1alpha1.MaintenanceSpec) (drain.Settings, error) {
	d, p := s.Drain, s.Policy
	set := drain.DefaultSettings()
	set.DryRun = "" // not in the spec: a Maintenance always runs
	set.Force, set.IgnoreDaemonSets, set.DeleteEmptyDirData = d.Force, d.IgnoreDaemonSets, d.DeleteEmptyDirData
	set.PodSelector, set.SkipWaitForDeleteTimeoutSeconds = d.PodSelector, int(d.SkipWaitForDeleteTimeoutSeconds)
	set.MaxParallelNodes, set.IgnoreDoNotDisrupt = int(p.MaxParallelNodes), d.IgnoreDoNotDisrupt
	set.ClearHolds = d.ClearDisruptionHolds
	set.DrainOrder = drainOrder(d.Order) // Drain order (planned maintenance)
	set.OnBlocked, set.NeverForce = drain.OnBlocked(p.OnBlocked), p.NeverForce
	if d.GracePeriodSeconds != nil {
		set.GracePeriodSeconds = int(*d.GracePeriodSeconds)
	}
	if d.ChunkSize != nil {
		set.ChunkSize = *d.ChunkSize
	}
	if d.WaitForVolumeDetach != nil { // When is a node drained: unset is on
		set.WaitForVolumeDetach = *d.WaitForVolumeDetach
	}
	if p.NotAfter != nil {
		set.NotAfter = p.NotAfter.Time
	}
	durations := []struct {
		field string
		in    *v1alpha1.Duration
		out   *time.Duration
	}{
		{"spec.drain.timeout", d.Timeout, &set.Timeout},
		{"spec.policy.blockedAfter", p.BlockedAfter, &set.BlockedAfter},
		{"spec.policy.soak", p.Soak, &set.Soak},
		{"spec.policy.forceAfter", p.ForceAfter, &set.ForceAfter},
		{"spec.drain.deadNodeDeleteWait", d.DeadNodeDeleteWait, &set.DeadNodeDeleteWait},
		{"spec.drain.settle", d.Settle, &set.Settle},
	}
	for _, f := range durations {
		if f.in == nil {
			continue // unset: the default
		}
		v, err := f.in.Parse(f.field)
		if err != nil {
			return set, err
		}
		*f.out = v
	}
	// deadNodeDeleteWait: unset is the engine's default (0), "0" is for ever (-1).
	if d.DeadNodeDeleteWait != nil && set.DeadNodeDeleteWait == 0 {
		set.DeadNodeDeleteWait = -1
	}
	return set, nil
}

// SpecFromSettings writes the drain settings into spec.drain and spec.policy: the one
// translation from drain.Settings to the spec (drain --server-side), the inverse of
// SettingsFromSpec. The settings a Maintenance does not carry are left out: DryRun
// (--server-side refuses --dry-run) and IgnoreMachineDrainRules (the controller reads
// Cluster API's MachineDrainRules when the cluster serves them).
func SpecFromSettings(set drain.Settings, s *v1alpha1.MaintenanceSpec) {
	s.Drain.Force, s.Drain.IgnoreDaemonSets, s.Drain.DeleteEmptyDirData = set.Force, set.IgnoreDaemonSets, set.DeleteEmptyDirData
	s.Drain.GracePeriodSeconds = ptr.To(int32(set.GracePeriodSeconds))
	s.Drain.PodSelector = set.PodSelector
	s.Drain.SkipWaitForDeleteTimeoutSeconds = int32(set.SkipWaitForDeleteTimeoutSeconds)
	s.Drain.ChunkSize = ptr.To(set.ChunkSize)
	s.Drain.IgnoreDoNotDisrupt = set.IgnoreDoNotDisrupt
	s.Drain.ClearDisruptionHolds = set.ClearHolds
	s.Drain.Order = SpecOrder(set.DrainOrder) // Drain order (planned maintenance)
	s.Drain.Timeout = durationOrNil(set.Timeout)
	switch {
	case set.DeadNodeDeleteWait < 0:
		s.Drain.DeadNodeDeleteWait = v1alpha1.DurationOf(0) // for ever
	default:
		s.Drain.DeadNodeDeleteWait = durationOrNil(set.DeadNodeDeleteWait)
	}
	s.Drain.WaitForVolumeDetach = nil // unset is on
	if !set.WaitForVolumeDetach {
		s.Drain.WaitForVolumeDetach = ptr.To(false)
	}
	s.Drain.Settle = nil // unset is the default
	if set.Settle != drain.DefaultSettle {
		s.Drain.Settle = v1alpha1.DurationOf(set.Settle)
	}
	s.Policy.OnBlocked = string(set.OnBlocked)
	s.Policy.MaxParallelNodes = int32(set.MaxParallelNodes)
	s.Policy.BlockedAfter = durationOrNil(set.BlockedAfter)
	s.Policy.Soak = durationOrNil(set.Soak)
	s.Policy.ForceAfter = durationOrNil(set.ForceAfter)
	s.Policy.NeverForce = set.NeverForce
	s.Policy.NotAfter = nil
	if !set.NotAfter.IsZero() {
		s.Policy.NotAfter = &metav1.Time{Time: set.NotAfter}
	}
}

// durationOrNil is d as a spec duration, nil for 0 (unset: the default).
func durationOrNil(d time.Duration) *v1alpha1.Duration {
	if d == 0 {
		return nil
	}
	return v1alpha1.DurationOf(d)
}

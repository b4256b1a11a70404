package kubeargs

import (
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/exitcode"
)

// NotAfter reads --not-after: "" (none), an RFC 3339 time, or a positive duration
// from now.
func NotAfter(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return time.Time{}, exitcode.UsageErrorf("invalid --not-after %q: want an RFC 3339 time (2026-11-25T06:00:00Z) or a duration from now (90m)", s)
	}
	if d <= 0 {
		return time.Time{}, exitcode.UsageErrorf("invalid --not-after %q: a duration must be positive", s)
	}
	return now.Add(d), nil
}

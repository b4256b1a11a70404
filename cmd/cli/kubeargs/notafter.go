package kubeargs

import (
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/exitcode"
	"github.com/kubectl-maintenance/kubectl-maintenance/schedule"
)

// NotAfter reads --not-after: "" (none), an RFC 3339 time, or a positive duration
// from now.
func NotAfter(s string, now time.Time) (time.Time, error) {
	t, err := schedule.ParseTime("--not-after", s, now) // the one reading of a time flag
	if err != nil {
		return time.Time{}, exitcode.UsageErrorf("%w", err)
	}
	return t, nil
}

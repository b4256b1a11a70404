package outcome

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
)

// Every way a run ends, read once, and everything read from it.
func TestOutcomeTable(t *testing.T) {
	cases := map[string]struct {
		err     error
		want    Outcome
		exit    int
		phase   string
		reason  string
		verdict string
	}{
		"done":                     {nil, Succeeded, 0, PhaseSucceeded, "Succeeded", "done"},
		"an error of the API":      {errors.New("boom"), Failed, 1, PhaseFailed, "Failed", "failed"},
		"a usage error":            {drain.Usagef("invalid selector %q", "a=="), Invalid, 2, PhaseFailed, "Invalid", "invalid"},
		"a wrapped usage error":    {fmt.Errorf("plan: %w", drain.Usagef("no nodes")), Invalid, 2, PhaseFailed, "Invalid", "invalid"},
		"nodes skipped":            {&drain.SkippedError{}, Blocked, 3, PhaseBlocked, "Blocked", "blocked"},
		"stopped by on-blocked":    {fmt.Errorf("run: %w", &drain.StoppedError{}), Blocked, 3, PhaseBlocked, "Blocked", "blocked"},
		"not-after passed":         {&drain.NotStartedError{}, NotStarted, 4, PhaseDeadlinePassed, "DeadlinePassed", "deadline passed"},
		"timed out":                {fmt.Errorf("drain: %w", context.DeadlineExceeded), TimedOut, 124, PhaseTimedOut, "TimedOut", "timed out"},
		"interrupted":              {fmt.Errorf("drain: %w", context.Canceled), Interrupted, 130, "", "", "interrupted"},
		"finished by force":        {fmt.Errorf("run: %w", &drain.ForcedError{}), Forced, 5, PhaseForced, "FinishedByForce", "finished by force"},
		"disrupting left to Karp.": {&drain.DisruptingError{Nodes: []string{"n1"}}, Blocked, 3, PhaseBlocked, "Blocked", "blocked"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o := Of(tc.err)
			if o != tc.want || o.ExitCode() != tc.exit || o.Phase() != tc.phase || o.Reason() != tc.reason || o.Verdict() != tc.verdict {
				t.Errorf("Of(%v) = %d (exit %d, phase %q, reason %q, verdict %q), want %d (%d, %q, %q, %q)", tc.err,
					o, o.ExitCode(), o.Phase(), o.Reason(), o.Verdict(), tc.want, tc.exit, tc.phase, tc.reason, tc.verdict)
			}
			if back := OfExitCode(o.ExitCode()); back != o {
				t.Errorf("OfExitCode(%d) = %d, want %d: the summary's verdict is read from the exit code", o.ExitCode(), back, o)
			}
			if tc.phase != "" {
				if back := OfPhase(tc.phase, tc.reason); back != o {
					t.Errorf("OfPhase(%s, %s) = %d, want %d: a server-side run must exit as the local one", tc.phase, tc.reason, back, o)
				}
			}
		})
	}
}

// A phase read back without its reason, or one that is not an end.
func TestOfPhase(t *testing.T) {
	cases := map[string]struct {
		phase  string
		reason string
		want   Outcome
	}{
		"failed, no reason":     {PhaseFailed, "", Failed},
		"failed, invalid":       {PhaseFailed, "Invalid", Invalid},
		"blocked, other reason": {PhaseBlocked, "Whatever", Blocked},
		"running":               {"Running", "", Failed},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := OfPhase(tc.phase, tc.reason); got != tc.want {
				t.Errorf("OfPhase(%s, %q) = %d, want %d", tc.phase, tc.reason, got, tc.want)
			}
		})
	}
}

package cli

import (
	"errors"
	"strings"
	"testing"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
)

// The policy flags are checked before any API call (these run with no cluster at all).
func TestPolicyFlagsAreValidatedBeforeAnyCall(t *testing.T) {
	tests := map[string]struct {
		args []string
		want string
	}{
		"an unknown --on-blocked":         {[]string{"drain", "n1", "--on-blocked", "retry"}, `invalid --on-blocked "retry"`},
		"a negative --blocked-after":      {[]string{"drain", "n1", "--blocked-after", "-1m"}, "invalid --blocked-after -1m0s"},
		"a --not-after that is no time":   {[]string{"drain", "n1", "--not-after", "tomorrow"}, `invalid --not-after "tomorrow"`},
		"a negative --not-after duration": {[]string{"drain", "n1", "--not-after", "-5m"}, "a duration must be positive"},
		"a pool move checks them too":     {[]string{"pool", "move", "n1", "--to", "blue", "--on-blocked", "later"}, `invalid --on-blocked "later"`},
		"a negative --soak":               {[]string{"drain", "--pool", "blue", "--soak", "-1m"}, "invalid --soak -1m0s"},
		"--soak without a rolling drain":  {[]string{"drain", "n1", "--soak", "1m"}, "--soak needs a rolling drain"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			out, errOut, code := run(tc.args...)
			if code != ExitUsage || out != "" {
				t.Errorf("exit %d, stdout %q; want 2 and nothing on stdout (stderr %q)", code, out, errOut)
			}
			if !strings.Contains(errOut, tc.want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
				t.Errorf("stderr = %q, want one line containing %q", errOut, tc.want)
			}
		})
	}
}

func TestPolicyExitCodes(t *testing.T) {
	tests := map[string]struct {
		err  error
		want int
	}{
		"nodes given up by skip":        {&drain.SkippedError{Nodes: []drain.BlockedNode{{Node: "n1"}}}, ExitBlocked},
		"a run stopped by fail":         {&drain.StoppedError{BeforeCordon: true}, ExitBlocked},
		"nodes not started":             {&drain.NotStartedError{Nodes: []string{"n2"}}, ExitNotStarted},
		"not started, wrapped":          {errors.Join(errors.New("x"), &drain.NotStartedError{}), ExitNotStarted},
		"a timeout still wins its code": {&drain.TimeoutError{}, ExitTimeout},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := ExitCode(tc.err); got != tc.want {
				t.Errorf("ExitCode = %d, want %d", got, tc.want)
			}
		})
	}
}

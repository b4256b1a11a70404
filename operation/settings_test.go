package operation

import (
	"context"
	"strings"
	"testing"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
)

// The checks that stood apart are the settings' own, said in their words, before
// anything changes: a cordon's dry run (asserted by check: a cordon goes to no engine)
// and a drain's pod selector (asserted by the engine's door; the plan parses it no
// more).
func TestStrayChecksAreTheSettings(t *testing.T) {
	tests := []struct {
		name string
		req  Request
		want string
	}{
		{"a cordon's unknown dry run", Request{Action: Cordon, Nodes: []string{"n1"}, Drain: drain.Settings{DryRun: "later"}},
			`dryRun must be "none", "client" or "server", got "later"`},
		{"an uncordon's unknown dry run", Request{Action: Uncordon, Nodes: []string{"n1"}, Drain: drain.Settings{DryRun: "later"}},
			`dryRun must be "none", "client" or "server", got "later"`},
		{"a drain's unknown dry run", Request{Action: Drain, Nodes: []string{"n1"}, Drain: drain.Settings{DryRun: "later"}},
			`dryRun must be "none", "client" or "server", got "later"`},
		{"a drain's pod selector that is no selector", Request{Action: Drain, Nodes: []string{"n1"}, Drain: drain.Settings{PodSelector: "a=b=c=,"}},
			"podSelector must be a label selector"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			op := cluster(t, node("n1", false, nil))
			evs, _, err := run(t, op, context.Background(), tc.req)
			if err == nil || !drain.IsUsage(err) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want a usage error containing %q", err, tc.want)
			}
			if len(evs) != 0 || get(t, op, "n1").Spec.Unschedulable {
				t.Errorf("bad input did something: events %s", eventTypes(evs))
			}
		})
	}
}

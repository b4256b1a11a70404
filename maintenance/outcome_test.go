package maintenance

import (
	"testing"

	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/outcome"
)

// outcome owns the finished phases' names; the API spells each the same, and every
// phase of the outcome table is a phase the API knows as an end.
func TestOutcomePhasesAreTheAPIs(t *testing.T) {
	cases := map[string]struct {
		api  v1alpha1.Phase
		name string
	}{
		"succeeded":       {v1alpha1.PhaseSucceeded, outcome.PhaseSucceeded},
		"failed":          {v1alpha1.PhaseFailed, outcome.PhaseFailed},
		"blocked":         {v1alpha1.PhaseBlocked, outcome.PhaseBlocked},
		"deadline passed": {v1alpha1.PhaseDeadlinePassed, outcome.PhaseDeadlinePassed},
		"timed out":       {v1alpha1.PhaseTimedOut, outcome.PhaseTimedOut},
		"forced":          {v1alpha1.PhaseForced, outcome.PhaseForced},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if string(tc.api) != tc.name {
				t.Errorf("the API's phase %q, outcome's %q", tc.api, tc.name)
			}
		})
	}
	for o, row := range outcome.Table {
		if row.Phase != "" && !v1alpha1.Phase(row.Phase).Done() {
			t.Errorf("outcome %v's phase %q is not an end the API knows", o, row.Phase)
		}
	}
}

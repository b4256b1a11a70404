package render

import (
	"strings"
	"testing"
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
)

// The ETA line of a plan and of a summary, for each kind of plan.
func TestETALines(t *testing.T) {
	tests := []struct {
		name       string
		plan       event.Plan
		start, end string
	}{
		{"nothing to evict", event.Plan{}, "eta: nothing to wait for", "eta: expected 0s (at most 0s), actual 2s"},
		{"one wave", event.Plan{Waves: 1, ETA: event.ETA{Max: 30 * time.Second}}, "eta: one wave", "eta: expected 0s (at most 30s), actual 2s"},
		{"three waves", event.Plan{Waves: 3, ETA: event.ETA{Expected: 8 * time.Second, Max: 38 * time.Second}}, "eta: about 8s over 3 wave(s)", "eta: expected 8s (at most 38s), actual 2s"},
		{"no history", event.Plan{Waves: 2, ETA: event.ETA{NoHistory: []string{"ns/web"}}}, "no readiness history for pdb ns/web", "eta: expected at least 0s (no readiness history for pdb ns/web)"},
		{"pods that never go", event.Plan{Waves: 1, ETA: event.ETA{Never: 2, Max: 30 * time.Second}}, "eta: none: 2 pod(s) can never go", "eta: none expected (2 pod(s) could never go as things stood), actual 2s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := etaLine(&tc.plan); !strings.HasPrefix(got, tc.start) && !strings.Contains(got, tc.start) {
				t.Errorf("plan line %q, want %q", got, tc.start)
			}
			var tally etaTally
			tally.add(&tc.plan)
			if got := tally.line(2 * time.Second); !strings.HasPrefix(got, tc.end) {
				t.Errorf("summary line %q, want it to start %q", got, tc.end)
			}
		})
	}
}

package render

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
)

// etaLine says how long a plan's drain is expected to take (drain.EstimateETA), for the
// plan and the start of a drain.
func etaLine(p *event.Plan) string {
	e := p.ETA
	switch {
	case e.Never > 0:
		return fmt.Sprintf("eta: none: %d pod(s) can never go as things stand, so the drain ends only when their budgets change (or at --timeout); the others: about %s",
			e.Never, roundETA(e.Expected))
	case p.Waves == 0:
		return "eta: nothing to wait for"
	case !e.Known():
		return fmt.Sprintf("eta: at least %s over %d wave(s); no readiness history for pdb %s (none of its pods is Ready): its waits are not estimated",
			roundETA(e.Expected), p.Waves, strings.Join(e.NoHistory, ", pdb "))
	case p.Waves == 1:
		return fmt.Sprintf("eta: one wave, no wait between waves; up to %s if the pods take their whole grace period to stop", roundETA(e.Max))
	}
	return fmt.Sprintf("eta: about %s over %d wave(s) (each wave waits for its budgets' replacements to become Ready, as long as their pods took); up to %s if the last pods take their whole grace period",
		roundETA(e.Expected), p.Waves, roundETA(e.Max))
}

// etaTally adds up the ETAs of the plans a run printed (one per batch of a rolling drain)
// for its summary: expected against actual.
type etaTally struct {
	plans int
	eta   event.ETA
}

func (t *etaTally) add(p *event.Plan) {
	t.plans++
	t.eta.Expected += p.ETA.Expected
	t.eta.Max += p.ETA.Max
	t.eta.Never += p.ETA.Never
	for _, b := range p.ETA.NoHistory {
		if !slices.Contains(t.eta.NoHistory, b) {
			t.eta.NoHistory = append(t.eta.NoHistory, b)
		}
	}
}

// line is the summary's ETA line ("" when no plan was seen).
func (t *etaTally) line(actual time.Duration) string {
	switch {
	case t.plans == 0:
		return ""
	case t.eta.Never > 0:
		return fmt.Sprintf("eta: none expected (%d pod(s) could never go as things stood), actual %s", t.eta.Never, roundETA(actual))
	case !t.eta.Known():
		return fmt.Sprintf("eta: expected at least %s (no readiness history for pdb %s), actual %s",
			roundETA(t.eta.Expected), strings.Join(t.eta.NoHistory, ", pdb "), roundETA(actual))
	}
	return fmt.Sprintf("eta: expected %s (at most %s), actual %s", roundETA(t.eta.Expected), roundETA(t.eta.Max), roundETA(actual))
}

// etaJSON is the ETA in the plan event and the summary of -o json (seconds).
type etaJSON struct {
	Expected  float64  `json:"expected_seconds"`
	Max       float64  `json:"max_seconds"`
	NoHistory []string `json:"no_history,omitempty"`
	// Never counts the pods that could never go as things stood (no ETA for them).
	Never int `json:"never_pods,omitempty"`
}

func toETAJSON(e event.ETA) *etaJSON {
	return &etaJSON{Expected: e.Expected.Seconds(), Max: e.Max.Seconds(), NoHistory: e.NoHistory, Never: e.Never}
}

// roundETA rounds a duration for a person: tenths of a second under 10 s, seconds above.
func roundETA(d time.Duration) time.Duration {
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}

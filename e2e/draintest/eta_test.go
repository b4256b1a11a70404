package draintest

import (
	"bufio"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

// planETA returns the plan event's waves and expected seconds from a -o json run.
func planETA(t *testing.T, stdout string) (waves, expected float64) {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev struct {
			Type string `json:"type"`
			Plan *struct {
				Waves float64 `json:"waves"`
				ETA   struct {
					Expected float64 `json:"expected_seconds"`
				} `json:"eta"`
			} `json:"plan"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("stdout line is not JSON: %q: %v", sc.Text(), err)
		}
		if ev.Type == "plan" && ev.Plan != nil {
			return ev.Plan.Waves, ev.Plan.ETA.Expected
		}
	}
	t.Fatal("no plan event")
	return 0, 0
}

// TestETAOfAThreeWaveDrain: three pods under maxUnavailable 1 whose pods take a few
// seconds to become Ready drain in three waves; the plan's ETA, read from those pods'
// readiness, is within half of the actual time either way, and the summary carries both.
func TestETAOfAThreeWaveDrain(t *testing.T) {
	e, g := oneNodeUnderMaxUnavailableOne(t, 3, 5*time.Second)

	r := e.Run("drain", e.Nodes[0], "-o", "json")
	if r.Code != 0 {
		t.Fatalf("drain exit %d, want 0", r.Code)
	}
	waves, expected := planETA(t, r.Stdout)
	if waves != 3 {
		t.Fatalf("plan has %v waves, want 3", waves)
	}
	sum := r.Summary(t)
	eta, ok := sum["eta"].(map[string]any)
	if !ok {
		t.Fatalf("summary has no eta: %v", sum)
	}
	actual := sum["elapsed_seconds"].(float64)
	if eta["expected_seconds"].(float64) != expected {
		t.Errorf("summary expects %v s, the plan said %v s", eta["expected_seconds"], expected)
	}
	t.Logf("FIGURE eta: three-wave drain, 5 s readiness: expected %.1f s, actual %.1f s", expected, actual)
	if math.Abs(expected-actual) > actual/2 {
		t.Errorf("ETA %.1f s is not within 50%% of the actual %.1f s", expected, actual)
	}
	if g.Deleted != 3 {
		t.Errorf("guard saw %d pods evicted, want 3", g.Deleted)
	}
}

package metrics

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
)

func ev(typ event.Type, node, pod string, attempt int, reason string) event.Event {
	return event.Event{Type: typ, Node: node, Pod: pod, Attempt: attempt, Reason: reason}
}

func TestEvictionOutcomes(t *testing.T) {
	tests := map[string]struct {
		events []event.Event
		// end ends the run before counting (requests without an answer are counted).
		end  bool
		want map[string]float64
	}{
		"accepted then evicted is one accepted request": {
			events: []event.Event{ev(event.EventEvictionStarted, "n1", "a/p", 1, ""), ev(event.EventEvictionAccepted, "n1", "a/p", 1, ""), ev(event.EventPodEvicted, "n1", "a/p", 1, "")},
			want:   map[string]float64{OutcomeAccepted: 1},
		},
		"a refusal the engine says, then an accepted retry": {
			events: []event.Event{ev(event.EventEvictionStarted, "n1", "a/p", 1, ""), ev(event.EventEvictionBlocked, "n1", "a/p", 1, "DisruptionBudget"),
				ev(event.EventEvictionStarted, "n1", "a/p", 2, ""), ev(event.EventEvictionAccepted, "n1", "a/p", 2, "")},
			want: map[string]float64{OutcomeAccepted: 1, OutcomeRefusedBudget: 1},
		},
		"a silent refusal (same budget again) is counted at the next request": {
			events: []event.Event{ev(event.EventEvictionStarted, "n1", "a/p", 1, ""), ev(event.EventEvictionBlocked, "n1", "a/p", 1, "DisruptionBudget"),
				ev(event.EventEvictionStarted, "n1", "a/p", 2, ""), ev(event.EventEvictionStarted, "n1", "a/p", 3, ""), ev(event.EventEvictionAccepted, "n1", "a/p", 3, "")},
			want: map[string]float64{OutcomeAccepted: 1, OutcomeRefusedBudget: 2},
		},
		"a wait the engine decided alone is no request": {
			events: []event.Event{ev(event.EventEvictionBlocked, "n1", "a/p", 0, "Exhausted"), ev(event.EventEvictionStarted, "n1", "a/p", 1, ""), ev(event.EventEvictionAccepted, "n1", "a/p", 1, "")},
			want:   map[string]float64{OutcomeAccepted: 1},
		},
		"conflict and throttling are refused_other, a 5xx error": {
			events: []event.Event{ev(event.EventEvictionStarted, "n1", "a/p", 1, ""), ev(event.EventEvictionBlocked, "n1", "a/p", 1, "Conflict"),
				ev(event.EventEvictionStarted, "n1", "a/p", 2, ""), ev(event.EventEvictionBlocked, "n1", "a/p", 2, "TooManyRequests"),
				ev(event.EventEvictionStarted, "n1", "a/p", 3, ""), ev(event.EventEvictionBlocked, "n1", "a/p", 3, "Error"),
				ev(event.EventEvictionStarted, "n1", "a/p", 4, ""), ev(event.EventPodEvicted, "n1", "a/p", 4, "")},
			want: map[string]float64{OutcomeAccepted: 1, OutcomeRefusedOther: 2, OutcomeError: 1},
		},
		"a request left without an answer at the end: refused_other on a failed node, else error": {
			events: []event.Event{ev(event.EventEvictionStarted, "n1", "a/p", 1, ""), ev(event.EventNodeFailed, "n1", "", 0, ""),
				ev(event.EventEvictionStarted, "n2", "a/q", 1, "")},
			end:  true,
			want: map[string]float64{OutcomeRefusedOther: 1, OutcomeError: 1},
		},
		"a dry run sends nothing": {
			events: []event.Event{{Type: event.EventEvictionStarted, Node: "n1", Pod: "a/p", DryRun: "server"}, {Type: event.EventPodEvicted, Node: "n1", Pod: "a/p", DryRun: "server"}},
			end:    true,
			want:   map[string]float64{},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := NewRecorder(clocktesting.NewFakeClock(time.Unix(0, 0)))
			for _, e := range tc.events {
				r.Observe("m", e)
			}
			if tc.end {
				r.RunEnded("m", "Failed")
			}
			for _, o := range []string{OutcomeAccepted, OutcomeRefusedBudget, OutcomeRefusedOther, OutcomeError} {
				if got := testutil.ToFloat64(r.evictions.WithLabelValues(o)); got != tc.want[o] {
					t.Errorf("%s = %v, want %v", o, got, tc.want[o])
				}
			}
		})
	}
}

func TestGauges(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(100, 0))
	r := NewRecorder(clk)
	r.RunStarted("m")
	r.Observe("m", ev(event.EventNodeCordoned, "n1", "", 0, ""))
	r.Observe("m", ev(event.EventEvictionBlocked, "n1", "a/p", 0, "Exhausted"))
	r.Observe("m", ev(event.EventEvictionBlocked, "n1", "a/q", 0, "SomethingNew"))
	r.Observe("m", ev(event.EventEvictionBlocked, "n2", "a/r", 0, "Exhausted"))
	for i := range 5 {
		r.Observe("m", ev(event.EventEvictionStarted, "n3", "b/"+string(rune('a'+i)), 1, ""))
		r.Observe("m", ev(event.EventEvictionAccepted, "n3", "b/"+string(rune('a'+i)), 1, ""))
	}
	r.Observe("m", event.Event{Type: event.EventPacing, Rate: 4, Lag: 3 * time.Second})
	g := r.gauges()
	if g.waiting["Exhausted"] != 2 || g.waiting[otherValue] != 1 {
		t.Errorf("waiting = %v, want Exhausted 2 and Other 1", g.waiting)
	}
	if g.rate != 0.5 || g.pace != 4 || g.lag != 3*time.Second || g.runs != 1 {
		t.Errorf("rate %v pace %v lag %v runs %v, want 0.5 4 3s 1", g.rate, g.pace, g.lag, g.runs)
	}
	clk.Step(5 * time.Second)
	r.Observe("m", event.Event{Type: event.EventNodeDrained, Node: "n1", Time: clk.Now()})
	if g := r.gauges(); g.waiting["Exhausted"] != 1 || g.waiting[otherValue] != 0 {
		t.Errorf("after n1 drained, waiting = %v, want Exhausted 1", g.waiting)
	}
	if n := testutil.CollectAndCount(r.nodeDuration); n != 1 {
		t.Errorf("node durations observed in %d series, want 1", n)
	}
	clk.Step(11 * time.Second)
	r.RunEnded("m", "Succeeded")
	if g := r.gauges(); g.rate != 0 || g.runs != 0 || len(g.waiting) != 0 {
		t.Errorf("after the end: %+v, want nothing", g)
	}
}

func TestRegisterServesBoundedFamilies(t *testing.T) {
	reg := prometheus.NewRegistry()
	r := NewRecorder(nil)
	if err := Register(reg, r, nil); err != nil {
		t.Fatal(err)
	}
	r.Observe("m", ev(event.EventEvictionStarted, "n1", "a/p", 1, ""))
	r.Observe("m", ev(event.EventEvictionAccepted, "n1", "a/p", 1, ""))
	r.StatusWritten(WriteOK)
	r.StatusWritten("teapot")
	r.RunEnded("m", "Nonsense")
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]map[string]bool{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				k := mf.GetName() + "/" + l.GetName()
				if values[k] == nil {
					values[k] = map[string]bool{}
				}
				values[k][l.GetValue()] = true
			}
		}
	}
	for k, v := range values {
		if len(v) > LabelBound() {
			t.Errorf("%s has %d values, more than %d", k, len(v), LabelBound())
		}
	}
	if !values[StatusWritesTotal+"/result"][otherValue] || !values[RunDuration+"/phase"][otherValue] {
		t.Errorf("unknown label values not folded into Other: %v", values)
	}
}

// The disruption controller's holds the runs say are counted by who caused them; other
// warnings count nothing.
func TestHoldsCounted(t *testing.T) {
	tests := map[string]struct {
		reasons    []string
		run, other float64
	}{
		"one caused, two seen": {reasons: []string{drain.ReasonHoldCaused, drain.ReasonHoldSeen, drain.ReasonHoldSeen}, run: 1, other: 2},
		"another warning":      {reasons: []string{"APIServerUnreachable"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := NewRecorder(clocktesting.NewFakeClock(time.Unix(0, 0)))
			for _, reason := range tc.reasons {
				r.Observe("m", event.Event{Type: event.EventWarning, Pod: "a/db-0", Reason: reason})
			}
			if got := testutil.ToFloat64(r.holds.WithLabelValues(HoldCausedByRun)); got != tc.run {
				t.Errorf("caused = %v, want %v", got, tc.run)
			}
			if got := testutil.ToFloat64(r.holds.WithLabelValues(HoldCausedByOther)); got != tc.other {
				t.Errorf("seen = %v, want %v", got, tc.other)
			}
		})
	}
}

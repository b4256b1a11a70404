package maintenance

import (
	"testing"
	"time"
)

// The status writes of a run: every 5 s at most, and at most 11 in any minute with the
// start's (the final write, never refused, makes 12).
func TestWriteBudget(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	cases := []struct {
		name     string
		interval time.Duration
		writes   []float64 // seconds after the start's write, each asked in turn
		want     []bool
	}{
		{"the plan's write at once, then a tick every 5 s: the first minute's 12th and 13th wait", 5 * time.Second,
			[]float64{0.3, 5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 55, 60, 65},
			[]bool{true, true, true, true, true, true, true, true, true, true, false, false, true, true}},
		{"sparse writes are never refused", 5 * time.Second,
			[]float64{10, 30, 50, 70, 90},
			[]bool{true, true, true, true, true}},
		{"an interval of a minute or more still allows one write", time.Minute,
			[]float64{30, 61},
			[]bool{false, true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := newWriteBudget(tc.interval, t0)
			for i, s := range tc.writes {
				got := b.allow(at(s))
				if got != tc.want[i] {
					t.Fatalf("write at %.1f s: allow = %v, want %v", s, got, tc.want[i])
				}
				if got {
					b.record(at(s))
				}
			}
		})
	}
}

// Whatever the ticks, no minute holds more writes than Minute/interval with the final one.
func TestWriteBudgetNoMinuteOverTwelve(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)
	b := newWriteBudget(5*time.Second, t0)
	writes := []time.Time{t0}
	for ms := 100; ms <= 300_000; ms += 100 { // asked every 100 ms for 5 minutes
		now := t0.Add(time.Duration(ms) * time.Millisecond)
		if b.allow(now) && now.Sub(writes[len(writes)-1]) >= 4500*time.Millisecond {
			b.record(now)
			writes = append(writes, now)
		}
	}
	writes = append(writes, writes[len(writes)-1].Add(100*time.Millisecond)) // the final write
	for i := range writes {
		n := 0
		for _, w := range writes[i:] {
			if w.Sub(writes[i]) < time.Minute {
				n++
			}
		}
		if n > 12 {
			t.Fatalf("%d writes in the minute from %s, want at most 12", n, writes[i].Sub(t0))
		}
	}
	if len(writes) < 50 {
		t.Errorf("%d writes in 5 minutes: the budget refuses more than it must", len(writes))
	}
}

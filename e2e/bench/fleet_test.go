package bench

import (
	"testing"
	"time"
)

// rollingLimit: the closed form for one batch, and the coupling of rolling batches
// through a budget whose replacement is not Ready yet when the next batch starts.
func TestRollingLimit(t *testing.T) {
	const tc, term = 3 * time.Second, time.Second
	tcOf := func(app string) time.Duration {
		if app == "slow" {
			return 2 * tc
		}
		return tc
	}
	for _, c := range []struct {
		name    string
		allowed map[string]int32
		batches []map[string]int
		want    time.Duration
	}{
		{"no pods: nothing to wait for but nothing", nil, []map[string]int{{}}, term},
		{"no budget: termination only", nil, []map[string]int{{"a": 5}}, term},
		{"one budget, 5 pods, 1 at a time", map[string]int32{"a": 1}, []map[string]int{{"a": 5}}, 4*tc + term},
		{"10%: 4 at a time", map[string]int32{"a": 4, "b": 1}, []map[string]int{{"a": 9, "b": 2}}, 2*tc + term},
		{"two batches sharing a budget wait on T_c", map[string]int32{"a": 1}, []map[string]int{{"a": 1}, {"a": 1}}, tc + term},
		{"T_c per budget", map[string]int32{"a": 1, "slow": 1}, []map[string]int{{"a": 2, "slow": 2}}, 2*tc + term},
		{"two batches, separate budgets", map[string]int32{"a": 1, "b": 1}, []map[string]int{{"a": 1}, {"b": 1}}, 2 * term},
	} {
		if got := rollingLimit(c.allowed, c.batches, tcOf, term); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

// runProc reports the child's own peak RSS, not the bench's (which a vfork would lend it).
func TestRunProcMeasuresTheChild(t *testing.T) {
	ballast := make([]byte, 200<<20) // the bench's own memory: 200 MiB resident
	for i := range ballast {
		ballast[i] = 1
	}
	p := runProc(t.Context(), "/bin/sh", []string{"-c", "sleep 0.3"})
	if p.code != 0 || p.rssMiB <= 0 || p.rssMiB > 50 {
		t.Errorf("sh: exit %d, peak RSS %.1f MiB; want 0 and a few MiB", p.code, p.rssMiB)
	}
	_ = ballast[len(ballast)-1]
}

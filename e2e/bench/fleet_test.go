package bench

import (
	"testing"
	"time"
)

// windowLimit: the closed form for one group, and the coupling of the groups of a
// sliding window through a budget whose replacement is not Ready yet when the next group
// starts.
func TestWindowLimit(t *testing.T) {
	const tc, term = 3 * time.Second, time.Second
	tcOf := func(app string, _ int) time.Duration {
		if app == "slow" {
			return 2 * tc
		}
		return tc
	}
	for _, c := range []struct {
		name    string
		allowed map[string]int32
		groups  []map[string]int
		width   int
		want    time.Duration
	}{
		{"no pods: nothing to wait for but nothing", nil, []map[string]int{{}}, 1, term},
		{"no budget: termination only", nil, []map[string]int{{"a": 5}}, 1, term},
		{"one budget, 5 pods, 1 at a time", map[string]int32{"a": 1}, []map[string]int{{"a": 5}}, 1, 4*tc + term},
		{"10%: 4 at a time", map[string]int32{"a": 4, "b": 1}, []map[string]int{{"a": 9, "b": 2}}, 1, 2*tc + term},
		{"one at a time, two nodes sharing a budget wait on T_c", map[string]int32{"a": 1}, []map[string]int{{"a": 1}, {"a": 1}}, 1, tc + term},
		{"T_c per budget", map[string]int32{"a": 1, "slow": 1}, []map[string]int{{"a": 2, "slow": 2}}, 1, 2*tc + term},
		{"one at a time, separate budgets", map[string]int32{"a": 1, "b": 1}, []map[string]int{{"a": 1}, {"b": 1}}, 1, 2 * term},
		// Width 2: the slow node holds one place while three quick ones pass through the other.
		{"a window passes a held node", map[string]int32{"slow": 1}, []map[string]int{{"slow": 2}, {}, {}, {}}, 2, 2*tc + term},
		{"the same one at a time", map[string]int32{"slow": 1}, []map[string]int{{"slow": 2}, {}, {}, {}}, 1, 2*tc + term + 3*term},
		{"every node at once is one group's closed form", map[string]int32{"a": 1}, []map[string]int{{"a": 1}, {"a": 1}, {"a": 1}}, 3, 2*tc + term},
	} {
		if got := windowLimit(c.allowed, c.groups, c.width, tcOf, term); got != c.want {
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

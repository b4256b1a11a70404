package drain

import (
	"fmt"
	"slices"
	"testing"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The turns of paced evictions: one every 1/rate in the order asked, kept while the pace
// holds, woken (in their order) when it quickens by a quarter or stops, void when it slows.
func TestPaceTurns(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	pods := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("ns/p%d", i)
		}
		return out
	}
	tests := []struct {
		name string
		// then changes the pace after four pods took turns at 1/s (their waits 0, 1, 2, 3 s).
		then      func(tr *turns)
		wantWoken []string
		// ask: when p3 asks again, and how long it waits then.
		askAt    time.Duration
		wantWait time.Duration
	}{
		{"the pace holds: p3 keeps its turn", func(*turns) {}, nil, time.Second, 2 * time.Second},
		{"its turn came: it goes", func(*turns) {}, nil, 3 * time.Second, 0},
		{"pacing stops: every waiting pod is woken, in its order", func(tr *turns) { tr.open() },
			[]string{"ns/p1", "ns/p2", "ns/p3"}, time.Second, 0},
		{"a little faster (under a quarter): nobody woken", func(tr *turns) { tr.faster(1.2, at(time.Second)) },
			nil, time.Second, 2 * time.Second},
		{"a quarter faster: woken, and p3 is first in the new line", func(tr *turns) { tr.faster(2, at(time.Second)) },
			[]string{"ns/p1", "ns/p2", "ns/p3"}, time.Second, 0},
		{"slower: every turn still to come is void and its pod woken, in its order; asking again p3 waits a new turn from now", func(tr *turns) {
			tr.slower(0.5, at(time.Second))           // p1's turn (1 s) has come: it keeps it
			tr.take("ns/other", 0.5, at(time.Second)) // asked first after the cut: goes now
		}, []string{"ns/p2", "ns/p3"}, time.Second, 2 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTurns()
			for i, p := range pods(4) {
				if got, want := tr.take(p, 1, t0), time.Duration(i)*time.Second; got != want {
					t.Fatalf("%s waits %s, want %s", p, got, want)
				}
			}
			tc.then(&tr)
			if got := tr.woken(); !slices.Equal(got, tc.wantWoken) {
				t.Errorf("woken %v, want %v", got, tc.wantWoken)
			}
			if got := tr.woken(); len(got) > 0 {
				t.Errorf("woken twice: %v", got)
			}
			rate := 1.0
			if tr.rate > 0 {
				rate = tr.rate
			}
			if got := tr.take("ns/p3", rate, at(tc.askAt)); got != tc.wantWait {
				t.Errorf("p3 asking at +%s waits %s, want %s", tc.askAt, got, tc.wantWait)
			}
		})
	}
}

// The run of 2026-11-26 19:22: pacing at one eviction a second gave 400 pods turns up to
// 400 s away; pacing stopped 20 s later and they still went one a second for 8 minutes.
// Now the pacer that stops wakes them all and lets each go at once.
func TestPacingThatStopsReleasesEveryTurn(t *testing.T) {
	p := newPacer(time.Second)
	now := time.Unix(1_000_000, 0)
	p.mode, p.rate, p.cutAt, p.since, p.delayedAt = paceAll, paceMinRate, now, now, now
	p.turns.slower(p.rate, now)
	var last time.Duration
	for i := range 400 {
		last = p.delay(fmt.Sprintf("ns/p%d", i), false, now)
	}
	if last < 390*time.Second {
		t.Fatalf("the 400th pod waits %s at one a second, want about 400 s", last)
	}
	later := now.Add(paceWindow + time.Second) // nothing delayed since, nothing lags: pacing stops
	p.delayedAt = now
	if cs := p.check(later); len(cs) != 1 || cs[0].to != paceOpen {
		t.Fatalf("check: %+v, want pacing stopped", cs)
	}
	woken := p.turns.woken()
	if len(woken) != 399 || woken[0] != "ns/p1" || woken[398] != "ns/p399" {
		t.Fatalf("woken %d pods, first %v; want the 399 waiting ones (p0 went at once), in line", len(woken), woken[:min(1, len(woken))])
	}
	for _, pod := range woken {
		if d := p.delay(pod, false, later); d != 0 {
			t.Fatalf("%s still waits %s after pacing stopped", pod, d)
		}
	}
}

// A backlog is not let go at once when the rate is back where the lag began (in F4 of
// 2026-11-26 that burst brought the lag back within seconds, 20 times): pacing goes on at
// the rising rate until nothing waits, then stops.
func TestPacingStopsOnlyOnceTheBacklogIsGone(t *testing.T) {
	p := newPacer(time.Second)
	now := time.Unix(1_000_000, 0)
	p.mode, p.rate, p.startRate, p.since, p.delayedAt = paceAll, 2, 3, now, now
	p.turns.slower(p.rate, now)
	for i := range 20 { // 20 pods waiting, up to 9.5 s away
		p.delay(fmt.Sprintf("ns/p%d", i), false, now)
	}
	status := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"}}
	clearOne := func(pod string, at time.Time) []paceChange {
		p.acceptedEviction("ns/"+pod, pod, "ns/web", false, true, at.Add(-time.Second))
		return p.budgetSeen(status, at) // the status no longer lists it: cleared in time
	}
	now = now.Add(100 * time.Millisecond)
	if cs := clearOne("done-1", now); len(cs) != 0 || p.mode != paceAll {
		t.Fatalf("with 19 waiting, the rate back to where the lag began stopped pacing: %+v, mode %s", cs, p.mode)
	}
	if p.rate < p.startRate {
		t.Fatalf("rate %.2f, want it back at %.2f or above", p.rate, p.startRate)
	}
	if w := p.turns.woken(); len(w) == 0 {
		t.Error("the waiting evictions were not woken to take sooner turns at the higher rate")
	}
	p.turns = newTurns() // the backlog went
	if cs := clearOne("done-2", now.Add(time.Second)); len(cs) != 1 || cs[0].to != paceOpen {
		t.Fatalf("nothing waiting: %+v, want pacing stopped", cs)
	}
}

// F1 of 2026-11-27 01:41: evictions given turns just before a cut were left to ask again
// at their void turns, up to 131 s away, and pacing that stopped 14 s later did not wake
// them: they waited with their budgets allowing them. A cut now wakes them to take turns at
// the slower pace, so pacing that stops finds every one of them.
func TestACutThenAStopReleasesEveryTurn(t *testing.T) {
	p := newPacer(time.Second)
	now := time.Unix(1_000_000, 0)
	p.mode, p.rate, p.startRate, p.since, p.delayedAt = paceAll, 4, 100, now, now
	p.cutAt = now.Add(-time.Minute)
	p.turns.slower(p.rate, now)
	p.turns.woken()
	for i := range 40 { // up to 9.75 s away at 4/s
		p.delay(fmt.Sprintf("ns/p%d", i), false, now)
	}
	// An entry outlives its pod: a cut, to 2/s.
	p.acceptedEviction("ns/db-0", "db-0", "ns/db", true, true, now)
	p.gone("ns/db-0", now.Add(time.Second))
	now = now.Add(2500 * time.Millisecond)
	if cs := p.check(now); len(cs) != 1 || cs[0].to != paceAll || p.rate != 2 {
		t.Fatalf("check: %+v at rate %.1f, want a cut to 2/s", cs, p.rate)
	}
	woken := p.turns.woken()
	if len(woken) != 39-10 || woken[0] != "ns/p11" { // p0 went at once, p1-p10 had their turns by now
		t.Fatalf("the cut woke %d pods, first %v; want the 29 still waiting, in line", len(woken), woken[:min(1, len(woken))])
	}
	var last time.Duration
	for _, pod := range woken {
		last = p.delay(pod, false, now)
	}
	if last < 14*time.Second {
		t.Fatalf("the last woken pod waits %s at 2/s, want about 14 s", last)
	}
	// Pacing stops: every one of them goes now.
	p.delayedAt = now.Add(-paceWindow)
	p.cutAt = now.Add(-paceWindow)
	p.followed = map[string]*followed{}
	later := now.Add(time.Second)
	if cs := p.check(later); len(cs) != 1 || cs[0].to != paceOpen {
		t.Fatalf("check: %+v, want pacing stopped", cs)
	}
	again := p.turns.woken()
	for _, pod := range woken[1:] { // the first asked first: its new turn was now
		if !slices.Contains(again, pod) {
			t.Fatalf("pacing stopped and did not wake %s, which waits for a turn", pod)
		}
	}
}

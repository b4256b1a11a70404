package drain

import (
	"sync"
	"testing"
)

// The room a run sees of a budget through the process's ledger: the allowance less every
// run's reservations, none behind another run's newer status or at a refused one.
func TestLedgerRoom(t *testing.T) {
	for _, tc := range []struct {
		name    string
		setup   func(l *Ledger)
		allowed int32
		rv      string
		want    int
	}{
		{name: "nothing reserved: the allowance", allowed: 2, rv: "10", want: 2},
		{name: "another run's eviction in flight takes one", allowed: 2, rv: "10", want: 1,
			setup: func(l *Ledger) { l.hold("ns/web", "ns/a") }},
		{name: "a reservation given back is room again", allowed: 1, rv: "10", want: 1,
			setup: func(l *Ledger) { l.hold("ns/web", "ns/a"); l.release("ns/web", "ns/a") }},
		{name: "another budget's reservations do not count", allowed: 1, rv: "10", want: 1,
			setup: func(l *Ledger) { l.hold("ns/db", "ns/a") }},
		{name: "a run whose status is older than another's sees none", allowed: 1, rv: "10", want: 0,
			setup: func(l *Ledger) { l.saw("ns/web", "11") }},
		{name: "the newest status seen gives its allowance", allowed: 1, rv: "11", want: 1,
			setup: func(l *Ledger) { l.saw("ns/web", "11") }},
		{name: "a refusal at this status: none", allowed: 1, rv: "10", want: 0,
			setup: func(l *Ledger) { l.refusedAt("ns/web", "10") }},
		{name: "a refusal at an older status does not count", allowed: 1, rv: "12", want: 1,
			setup: func(l *Ledger) { l.refusedAt("ns/web", "10") }},
		{name: "a resourceVersion that is no number is never older", allowed: 1, rv: "x", want: 1,
			setup: func(l *Ledger) { l.saw("ns/web", "11") }},
		{name: "more in flight than allowed: below zero", allowed: 1, rv: "10", want: -1,
			setup: func(l *Ledger) { l.hold("ns/web", "ns/a"); l.hold("ns/web", "ns/b") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := NewLedger()
			if tc.setup != nil {
				tc.setup(l)
			}
			if got := l.room("ns/web", tc.allowed, tc.rv); got != tc.want {
				t.Errorf("room = %d, want %d", got, tc.want)
			}
		})
	}
}

// Two runs never take the last allowance both, however many ask at once.
func TestLedgerTryReserveOnce(t *testing.T) {
	l := NewLedger()
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := 0
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if l.tryReserve("ns/web", "ns/p"+string(rune('a'+i)), 1, "10") {
				mu.Lock()
				won++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if won != 1 || l.reservedOn("ns/web") != 1 {
		t.Errorf("%d reservations taken (%d held), want 1", won, l.reservedOn("ns/web"))
	}
	if !l.tryReserve("ns/web", "ns/pa", 1, "10") && l.reserved["ns/web"]["ns/pa"] {
		t.Errorf("the pod holding the allowance was refused its own")
	}
}

// A run is told of the allowances other runs give back, never of its own, and not once
// its subscription ended (which waits for a call in progress).
func TestLedgerWake(t *testing.T) {
	for _, tc := range []struct {
		name      string
		from      int // 0: another run's change; 1: the first subscriber's own
		cancelled bool
		want      []string
	}{
		{name: "another run's change is told", from: 0, want: []string{"ns/web"}},
		{name: "a run's own change is not told back", from: 1},
		{name: "an ended subscription is not told", from: 0, cancelled: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := NewLedger()
			var got []string
			id, cancel := l.subscribe(func(key string) { got = append(got, key) })
			if tc.cancelled {
				cancel()
			}
			from := 0
			if tc.from == 1 {
				from = id
			}
			l.wake("ns/web", from)
			if len(got) != len(tc.want) || (len(got) > 0 && got[0] != tc.want[0]) {
				t.Errorf("told %v, want %v", got, tc.want)
			}
			cancel()
		})
	}
}

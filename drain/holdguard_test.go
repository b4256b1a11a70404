package drain

import (
	"testing"
	"time"
)

// The hold guard alone (holdguard.go): which evictions wait for the controller to clear
// an entry, and for how long before they ask again.
func TestHoldGuard(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	type entry struct {
		keepsName bool
		age       time.Duration
		listed    bool
	}
	for _, tc := range []struct {
		name       string
		off        bool
		entries    []entry
		wantNames  time.Duration // a StatefulSet's pod
		wantOthers time.Duration // a Deployment's pod
	}{
		{name: "nothing in flight: both go"},
		{name: "a StatefulSet's entry just sent: every other eviction waits for it to clear",
			entries: []entry{{true, 500 * time.Millisecond, true}}, wantNames: holdRetry, wantOthers: holdRetry},
		{name: "a StatefulSet's entry past holdGate: the others go; StatefulSets still wait (the controller is behind)",
			entries: []entry{{true, holdGate + time.Second, true}}, wantNames: holdRetry},
		{name: "a Deployment's entry older than the margin: the controller is behind, StatefulSets wait",
			entries: []entry{{false, 2 * time.Second, true}}, wantNames: holdRetry},
		{name: "a Deployment's entry within the margin: both go",
			entries: []entry{{false, 500 * time.Millisecond, true}}},
		{name: "a StatefulSet's eviction answered, its entry not seen yet: the others wait all the same",
			entries: []entry{{true, 500 * time.Millisecond, false}}, wantNames: holdRetry, wantOthers: holdRetry},
		{name: "a Deployment's entry never seen in the status: no sign the controller is behind",
			entries: []entry{{false, 2 * time.Second, false}}},
		{name: "off: nothing waits", off: true,
			entries: []entry{{true, 500 * time.Millisecond, true}, {false, 2 * time.Second, true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			margin := time.Second
			if tc.off {
				margin = -1
			}
			p := newPacer(margin)
			for i, e := range tc.entries {
				pod := "ns/e" + string(rune('0'+i))
				p.acceptedEviction(pod, "e"+string(rune('0'+i)), "ns/web", e.keepsName, e.listed, now.Add(-e.age))
			}
			if got := p.turn("ns/web-abc", false, now); got != tc.wantOthers {
				t.Errorf("a Deployment's pod waits %s, want %s", got, tc.wantOthers)
			}
			got := p.turn("ns/db-0", true, now)
			if got != tc.wantNames {
				t.Errorf("a StatefulSet's pod waits %s, want %s", got, tc.wantNames)
			}
			// Its turn alone holds nothing back (it may yet not be sent: no room left) ...
			if d := p.turn("ns/web-def", false, now); d != tc.wantOthers {
				t.Errorf("after its turn, a Deployment's pod waits %s, want %s", d, tc.wantOthers)
			}
			if got != 0 {
				return
			}
			// ... once sent, the next eviction waits for its entry, until answered.
			p.sending("ns/db-0", true, now)
			want := holdRetry
			if tc.off {
				want = tc.wantOthers
			}
			if d := p.turn("ns/web-def", false, now); d != want {
				t.Errorf("once it is sent, a Deployment's pod waits %s, want %s", d, want)
			}
			p.answered("ns/db-0")
			if d := p.turn("ns/web-def", false, now); d != tc.wantOthers {
				t.Errorf("once it is answered (no entry), a Deployment's pod waits %s, want %s", d, tc.wantOthers)
			}
		})
	}
}

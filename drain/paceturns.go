package drain

import (
	"sort"
	"time"
)

// turns is the schedule of the evictions the pacer holds back: at a pace of r evictions a
// second they go one every 1/r, each at the turn it was given. A turn belongs to the pace
// it was given at:
//   - when pacing stops, or the pace quickens by a quarter or more since the turns were
//     given, every waiting eviction is woken to ask again (a turn given at one eviction a
//     second to the 400th pod in line kept it waiting 400 s after pacing had stopped);
//   - when the pace slows, the turns given before are void: every waiting eviction is
//     woken, in the order of its turn, to ask for a turn at the slower pace. (Left to ask
//     again when its void turn came, it was not there to be woken when pacing stopped
//     soon after: in F1 of 2026-11-27 01:41 one-at-a-time budgets, each with a turn given
//     just before four cuts in 12 s, waited 131 s with their budget allowing them, 100 s
//     after pacing had stopped.)
//
// Guarded by run.mu, as the pacer.
type turns struct {
	next  time.Time       // the first free turn
	epoch int             // the pace the current turns belong to
	at    map[string]turn // pod key -> its turn
	rate  float64         // the pace the current turns were given at
	wake  []string        // pods to wake, in the order of their old turns (woken)
}

type turn struct {
	at    time.Time
	epoch int
}

// quicken is how much faster the pace must get before the waiting evictions are woken.
const quicken = 1.25

func newTurns() turns { return turns{at: map[string]turn{}} }

// take returns how long pod waits for its turn at rate evictions a second, giving it a
// turn when it has none at the current pace; 0 when its turn has come (and is used).
func (t *turns) take(pod string, rate float64, now time.Time) time.Duration {
	if tn, ok := t.at[pod]; ok && tn.epoch == t.epoch {
		if d := tn.at.Sub(now); d > 0 {
			return d
		}
		delete(t.at, pod)
		return 0
	}
	if t.rate == 0 {
		t.rate = rate
	}
	slot := t.next
	if slot.Before(now) {
		slot = now
	}
	t.next = slot.Add(time.Duration(float64(time.Second) / rate))
	if !slot.After(now) {
		delete(t.at, pod)
		return 0
	}
	t.at[pod] = turn{at: slot, epoch: t.epoch}
	return slot.Sub(now)
}

// waiting is how many evictions wait for a turn still to come.
func (t *turns) waiting(now time.Time) int {
	n := 0
	for _, tn := range t.at {
		if tn.epoch == t.epoch && tn.at.After(now) {
			n++
		}
	}
	return n
}

// drop forgets pod's turn (it no longer waits for one).
func (t *turns) drop(pod string) { delete(t.at, pod) }

// slower voids the turns still to come, given at a faster pace, and wakes their evictions
// to ask again: the schedule starts again now at rate.
func (t *turns) slower(rate float64, now time.Time) {
	came := map[string]turn{} // turns that have come are kept: their pods are asking now
	for k, tn := range t.at {
		if tn.epoch == t.epoch && !tn.at.After(now) {
			came[k] = tn
			delete(t.at, k)
		}
	}
	t.wakeAll()
	for k, tn := range came {
		tn.epoch = t.epoch
		t.at[k] = tn
	}
	t.next, t.rate = now, rate
}

// faster wakes every waiting eviction when rate is a quarter or more above the pace its
// turn was given at; the schedule starts again now.
func (t *turns) faster(rate float64, now time.Time) {
	if t.rate > 0 && rate < t.rate*quicken {
		return
	}
	t.wakeAll()
	t.next, t.rate = now, rate
}

// open wakes every waiting eviction: nothing is paced any more.
func (t *turns) open() {
	t.wakeAll()
	t.next, t.rate = time.Time{}, 0
}

func (t *turns) wakeAll() {
	t.epoch++
	keys := make([]string, 0, len(t.at))
	for k := range t.at {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := t.at[keys[i]], t.at[keys[j]]
		return a.at.Before(b.at) || (a.at.Equal(b.at) && keys[i] < keys[j])
	})
	t.wake = append(t.wake, keys...)
	t.at = map[string]turn{}
}

// woken returns the evictions to wake now (each once).
func (t *turns) woken() []string {
	w := t.wake
	t.wake = nil
	return w
}

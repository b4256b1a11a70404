package drain

import (
	"fmt"
	"sort"
	"time"

	policyv1 "k8s.io/api/policy/v1"
)

// Pacing keeps the eviction rate where the disruption controller (one worker in
// kube-controller-manager) keeps up. An accepted eviction puts the pod in its budget's
// status.disruptedPods; the controller takes it out when it next syncs the budget and sees
// the pod terminating or gone. The time between is the controller's lag. While the lag is
// shorter than the pod's termination, nothing is lost. When an entry outlives its pod, a
// StatefulSet, which recreates the pod under the same name, meets the entry with the new
// pod, and the controller keeps it, counting the new pod as disrupted, until it expires two
// minutes after the eviction: the budget is held for two minutes. That is the signal.
//
// The controller is AIMD, as TCP's congestion avoidance, because the signal is the same
// kind (a delay past a threshold, observed one round trip late) and AIMD converges to a
// fair, stable share without knowing the capacity (Chiu and Jain, 1989):
//   - while no entry outlives its pod by more than the margin, nothing is paced: an
//     eviction a budget allows goes at once (no turn is taken);
//   - the first entry that outlives its pod by more than the margin starts pacing the
//     budgets whose pods keep their names (StatefulSets: the ones that pay for a late
//     controller) at half the rate evictions were accepted over the last 10 s;
//   - a later one, from an eviction sent after that cut, halves the rate again and paces
//     every eviction that takes a budget's allowance (pacing StatefulSets alone did not
//     bring the lag down: the other evictions keep the controller busy too);
//   - signals from evictions sent before the last cut are the same congestion seen late
//     and cut nothing (one decrease per round trip, as TCP NewReno);
//   - paced or not, an eviction of a pod that keeps its name waits while the controller
//     is behind right now (behindNow): an entry of this run's outlives its pod by more
//     than the margin. Sent then, its replacement would likely take the name before the
//     controller drops the entry: a 2-minute hold, where a Deployment's costs nothing;
//   - each eviction whose entry the controller clears in time adds paceAlpha/rate, about
//     paceAlpha evictions a second per second; pacing stops when the rate is back to the
//     rate at which the lag began, no eviction waits for its turn and none of a pod that
//     keeps its name was held back in the last two ticks, or when it has delayed nothing
//     for paceWindow.
//
// It never holds back an eviction of a pod without a budget: the controller does no work
// for it.
const (
	// DefaultPaceMargin is how long a budget's disruptedPods entry may outlive its pod
	// before the controller counts as behind: a StatefulSet's replacement takes about this
	// long to be created after the old pod is gone.
	DefaultPaceMargin = time.Second
	// paceMinRate is the floor, in evictions a second: pacing slows, never stops.
	paceMinRate = 1.0
	paceBeta    = 0.5
	paceAlpha   = 2.0
	// paceWindow is the window of the acceptance rate, and how long pacing that delays
	// nothing lasts before it stops.
	paceWindow = 10 * time.Second
	// paceLastsAfter is how long pacing lasts before the normal output says it.
	paceLastsAfter = time.Minute
	// paceTick is how often the pacer looks at entries that outlive their pods.
	paceTick = time.Second
	// paceForget is how long an eviction is followed at most.
	paceForget = disruptedPodTimeout + 30*time.Second
)

// paceMode is what the pacer holds back.
type paceMode int

const (
	// paceOpen: nothing.
	paceOpen paceMode = iota
	// paceNames: evictions of pods recreated under their names (StatefulSets).
	paceNames
	// paceAll: every eviction that takes a budget's allowance.
	paceAll
)

func (m paceMode) String() string {
	return [...]string{"open", "statefulsets", "all"}[m]
}

// pacer measures the disruption controller's lag and paces evictions. It is guarded by
// run.mu (it makes no API call and sends on no channel), its turns too.
type pacer struct {
	margin   time.Duration
	off      bool                 // Config.PaceMargin < 0: it measures, and holds nothing back
	inFlight map[string]time.Time // evictions of pods that keep their names, sent, not answered yet (holdguard.go)
	turns    turns                // the paced evictions' turns (paceturns.go)

	mode      paceMode
	rate      float64   // evictions a second while paced
	startRate float64   // the rate at which the lag began (the first cut's throughput)
	cutAt     time.Time // the last cut
	since     time.Time // pacing began
	delayedAt time.Time // the last eviction the pacer delayed
	heldAt    time.Time // the last eviction of a pod that keeps its name held back while behind (behindNow)
	lastsSaid bool

	followed map[string]*followed // pod key -> accepted eviction not cleared from its budget yet
	accepted []time.Time          // acceptances over the last paceWindow
	budgets  map[string]*BudgetLag
	overall  time.Duration // moving average of the lag, every budget
}

// followed is an accepted eviction the pacer follows until its budget's status no longer
// lists the pod.
type followed struct {
	budget, name string
	keepsName    bool
	at           time.Time // accepted
	listed       bool      // the status was seen listing it
	goneAt       time.Time
	signalled    bool
}

// BudgetLag is what the pacer measured of one budget.
type BudgetLag struct {
	// Last is the last lag: from an accepted eviction to the status no longer listing the pod.
	Last time.Duration
	// Outlived counts the entries that outlived their pod by more than the margin.
	Outlived int
}

// paceChange is a change of the pacer's state, to be said.
type paceChange struct {
	from, to   paceMode
	rate       float64
	budget     string
	pod        string
	lag, term  time.Duration
	lasts      bool // pacing has lasted paceLastsAfter (said once in the normal output)
	since      time.Duration
	overallLag time.Duration
}

func newPacer(margin time.Duration) *pacer {
	off := margin < 0
	if margin <= 0 {
		margin = DefaultPaceMargin
	}
	return &pacer{margin: margin, off: off, followed: map[string]*followed{}, budgets: map[string]*BudgetLag{}, turns: newTurns()}
}

// delay returns how long pod's eviction, which takes a budget's allowance, waits for its
// turn: 0 while nothing is paced, for a pod that keeps no name while only StatefulSets are,
// or when its turn has come. A turn is kept until the pace changes (paceturns.go). A pod
// that keeps its name also waits while the controller is behind right now (behindNow).
func (p *pacer) delay(pod string, keepsName bool, now time.Time) time.Duration {
	if p.off {
		return 0
	}
	if keepsName && p.behindNow(now) {
		// The controller is behind right now: this eviction would likely meet a hold (its
		// replacement would take the name before the controller drops the entry), paced
		// or not (issue 44: never provoke one).
		p.turns.drop(pod)
		p.heldAt = now
		if p.mode != paceOpen {
			p.delayedAt = now
		}
		return paceTick
	}
	if p.mode == paceOpen || (p.mode == paceNames && !keepsName) {
		p.turns.drop(pod)
		return 0
	}
	d := p.turns.take(pod, p.rate, now)
	if d > 0 {
		p.delayedAt = now
	}
	return d
}

// accepted starts following an accepted eviction of pod (namespace/name) that took
// budget's allowance; listed is whether the budget's status lists it already.
func (p *pacer) acceptedEviction(pod, name, budget string, keepsName, listed bool, now time.Time) {
	p.followed[pod] = &followed{budget: budget, name: name, keepsName: keepsName, at: now, listed: listed}
	p.accepted = append(p.accepted, now)
	p.trim(now)
}

// gone records that the pod left (its entry, once seen listed, may now outlive it).
func (p *pacer) gone(pod string, now time.Time) {
	if f := p.followed[pod]; f != nil {
		f.goneAt = now
	}
}

// budgetSeen reads a budget's status: entries it no longer lists are lag samples.
func (p *pacer) budgetSeen(b *policyv1.PodDisruptionBudget, now time.Time) []paceChange {
	key := b.Namespace + "/" + b.Name
	var out []paceChange
	for pod, f := range p.followed {
		if f.budget != key {
			continue
		}
		if _, ok := b.Status.DisruptedPods[f.name]; ok {
			f.listed = true
			continue
		}
		if !f.listed {
			continue
		}
		delete(p.followed, pod)
		out = append(out, p.sample(pod, f, now)...)
	}
	return append(out, p.check(now)...)
}

// sample records the lag of a cleared entry.
func (p *pacer) sample(pod string, f *followed, now time.Time) []paceChange {
	lag := now.Sub(f.at)
	bl := p.budget(f.budget)
	bl.Last = lag
	if p.overall == 0 {
		p.overall = lag
	} else {
		p.overall = (7*p.overall + lag) / 8
	}
	late := !f.goneAt.IsZero() && now.Sub(f.goneAt) > p.margin
	if late {
		return p.signal(pod, f, now)
	}
	if p.mode == paceOpen || f.at.Before(p.cutAt) {
		return nil
	}
	p.rate += paceAlpha / p.rate
	if p.rate >= p.startRate && p.turns.waiting(now) == 0 && now.Sub(p.heldAt) > 2*paceTick {
		// Back where the lag began, and nothing waits: no turn, and no eviction of a pod
		// that keeps its name held back while behind (it asks again within paceTick, and
		// takes a turn). A backlog is not let go at once (it brought the lag back within
		// seconds, F4 of 2026-11-26; StatefulSets held back and let go at once met holds
		// that set F1's wall, 2026-11-27 02:20): it goes at the rising rate, and pacing
		// stops when it is gone.
		return p.open(now, pod, f.budget, lag)
	}
	p.turns.faster(p.rate, now) // the turns given at a slower pace come again, sooner
	return nil
}

// check is the periodic look: entries that outlive their pods by more than the margin
// are signals; pacing that has delayed nothing for paceWindow stops; pacing that lasts
// is said once.
func (p *pacer) check(now time.Time) []paceChange {
	var out []paceChange
	keys := make([]string, 0, len(p.followed))
	for k := range p.followed {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, pod := range keys {
		f := p.followed[pod]
		switch {
		case now.Sub(f.at) > paceForget:
			delete(p.followed, pod)
		case f.listed && !f.goneAt.IsZero() && !f.signalled && now.Sub(f.goneAt) > p.margin:
			out = append(out, p.signal(pod, f, now)...)
		}
	}
	if p.mode != paceOpen && now.Sub(p.cutAt) >= paceWindow && now.Sub(p.delayedAt) >= paceWindow && !p.lagging(now) {
		out = append(out, p.open(now, "", "", 0)...)
	}
	if p.mode != paceOpen && !p.lastsSaid && now.Sub(p.since) >= paceLastsAfter {
		p.lastsSaid = true
		out = append(out, paceChange{from: p.mode, to: p.mode, rate: p.rate, lasts: true, since: now.Sub(p.since), overallLag: p.overall})
	}
	return out
}

// behindNow reports that the disruption controller is behind right now: an entry, as the
// budget's status last showed it, still outlives its pod by more than the margin, the pod
// gone less than margin+paceWindow ago (a StatefulSet's entry that met its replacement
// stays listed for two minutes, and says nothing of the controller after the first
// seconds). An entry the controller clears stops counting at once.
//
// While paced, an eviction of a pod that keeps its name waits (a paceTick at a time) for
// the controller to be caught up again: the 2-minute hold it would likely meet costs a
// budget with more pods to go the whole hold, and such holds, met at the peaks of the
// pace, set F1's wall (the last evictions, 150 s in, waited for holds of evictions at 33
// to 80 s; 2026-11-27 01:48). Evictions of other pods go on at the pace.
func (p *pacer) behindNow(now time.Time) bool {
	for _, f := range p.followed {
		if f.listed && !f.goneAt.IsZero() {
			if since := now.Sub(f.goneAt); since > p.margin && since < p.margin+paceWindow {
				return true
			}
		}
	}
	return false
}

// lagging reports an entry that outlives its pod now.
func (p *pacer) lagging(now time.Time) bool {
	for _, f := range p.followed {
		if f.listed && !f.goneAt.IsZero() && now.Sub(f.goneAt) > p.margin {
			return true
		}
	}
	return false
}

// signal is an entry that outlived its pod by more than the margin: a multiplicative
// decrease, unless the eviction was sent before the last one.
func (p *pacer) signal(pod string, f *followed, now time.Time) []paceChange {
	if f.signalled {
		return nil
	}
	f.signalled = true
	p.budget(f.budget).Outlived++
	if !p.cutAt.IsZero() && f.at.Before(p.cutAt) {
		return nil // seen late: the last cut answers it already
	}
	from := p.mode
	switch p.mode {
	case paceOpen:
		p.mode, p.since, p.lastsSaid = paceNames, now, false
		p.rate = max(paceMinRate, paceBeta*p.throughput(now))
		p.startRate = max(p.rate/paceBeta, p.rate+paceAlpha)
	default:
		p.mode = paceAll
		p.rate = max(paceMinRate, p.rate*paceBeta)
	}
	p.cutAt = now
	p.turns.slower(p.rate, now) // the turns given at the faster pace are void
	return []paceChange{{from: from, to: p.mode, rate: p.rate, budget: f.budget, pod: pod,
		lag: now.Sub(f.at), term: f.goneAt.Sub(f.at), overallLag: p.overall}}
}

func (p *pacer) open(now time.Time, pod, budget string, lag time.Duration) []paceChange {
	from := p.mode
	p.mode, p.rate = paceOpen, 0
	p.turns.open() // every waiting eviction goes now
	return []paceChange{{from: from, to: paceOpen, budget: budget, pod: pod, lag: lag, since: now.Sub(p.since), overallLag: p.overall}}
}

// throughput is the acceptance rate over the last paceWindow, in evictions a second.
func (p *pacer) throughput(now time.Time) float64 {
	p.trim(now)
	return float64(len(p.accepted)) / paceWindow.Seconds()
}

func (p *pacer) trim(now time.Time) {
	i := sort.Search(len(p.accepted), func(i int) bool { return now.Sub(p.accepted[i]) <= paceWindow })
	p.accepted = p.accepted[i:]
}

func (p *pacer) budget(key string) *BudgetLag {
	bl := p.budgets[key]
	if bl == nil {
		bl = &BudgetLag{}
		p.budgets[key] = bl
	}
	return bl
}

// message says a change for a person.
func (c paceChange) message() string {
	switch {
	case c.lasts:
		lag := "budgets' disruptedPods entries outlive their pods"
		if c.overallLag > 0 {
			lag += fmt.Sprintf(" (average lag %s)", c.overallLag.Round(10*time.Millisecond))
		}
		return fmt.Sprintf("evictions paced to %.1f/s (%s) for %s: the disruption controller (kube-controller-manager) is behind: %s",
			c.rate, c.to, c.since.Round(time.Second), lag)
	case c.to == paceOpen:
		return fmt.Sprintf("pacing stopped after %s: the disruption controller keeps up (average lag %s)", c.since.Round(time.Second), c.overallLag.Round(10*time.Millisecond))
	}
	what := "evictions of StatefulSet pods"
	if c.to == paceAll {
		what = "every eviction under a budget"
	}
	return fmt.Sprintf("pacing %s at %.1f/s: pdb %s still listed pod %s in disruptedPods %s after the eviction, %s after the pod was gone; a StatefulSet's replacement meeting the entry holds the budget for 2 minutes",
		what, c.rate, c.budget, c.pod, c.lag.Round(10*time.Millisecond), (c.lag - c.term).Round(10*time.Millisecond))
}

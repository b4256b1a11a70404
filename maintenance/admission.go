package maintenance

import (
	"context"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// Admission batching: the runs that start close together (each within AdmissionWindow of
// the one before, AdmissionMax at most from the first) are one batch, and no run of a
// batch evicts before every run of it has cordoned its nodes (or ended). Twenty objects
// created within two seconds otherwise cordon one by one, and the first evictions'
// replacements land on nodes that another object drains a moment later: evicted twice.
const (
	// DefaultAdmissionWindow is how long a batch stays open after the last run joined it.
	DefaultAdmissionWindow = time.Second
	// admissionMax is how long a batch stays open at most, from its first run.
	admissionMax = 10 * time.Second
	// admissionWait bounds how long a run that has cordoned waits, once its batch closed,
	// for the others to cordon (a run stuck in its preflight holds no one for ever).
	admissionWait = 30 * time.Second
)

// admission gathers the runs into batches. It is safe for concurrent use; it makes no
// API call and closes its channels only once its lock is released.
type admission struct {
	clock  clock.WithTicker
	window time.Duration

	mu  sync.Mutex
	cur *batch // the batch open to new runs (nil: none)
}

// batch is runs admitted together. Its fields are guarded by admission.mu.
type batch struct {
	first, closeAt time.Time
	pending        int           // runs that have neither cordoned nor ended
	changed        chan struct{} // closed (and replaced) when pending falls
}

// member is one run's place in its batch.
type member struct {
	a    *admission
	b    *batch
	once sync.Once
}

// join puts a run starting now into the open batch, or opens one.
func (a *admission) join() *member {
	now := a.clock.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cur == nil || !now.Before(a.cur.closeAt) {
		a.cur = &batch{first: now, changed: make(chan struct{})}
	}
	b := a.cur
	b.pending++
	b.closeAt = now.Add(a.window)
	if last := b.first.Add(admissionMax); b.closeAt.After(last) {
		b.closeAt = last
	}
	return &member{a: a, b: b}
}

// done says the run has cordoned its nodes, or ended; only the first call counts.
func (m *member) done() {
	m.once.Do(func() {
		m.a.mu.Lock()
		m.b.pending--
		ch := m.b.changed
		m.b.changed = make(chan struct{})
		m.a.mu.Unlock()
		close(ch)
	})
}

// cordoned is the engine's AfterCordon: the run has cordoned its nodes; it returns once
// the batch is closed and every run of it has cordoned or ended (at most admissionWait
// after the close), or ctx ends.
func (m *member) cordoned(ctx context.Context) {
	m.done()
	clk := m.a.clock
	for {
		m.a.mu.Lock()
		now, closeAt, pending, changed := clk.Now(), m.b.closeAt, m.b.pending, m.b.changed
		m.a.mu.Unlock()
		if !now.Before(closeAt) && (pending == 0 || !now.Before(closeAt.Add(admissionWait))) {
			return
		}
		wait := closeAt.Sub(now)
		if wait <= 0 {
			wait = closeAt.Add(admissionWait).Sub(now)
		}
		t := clk.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-changed:
		case <-t.C():
		}
		t.Stop()
	}
}

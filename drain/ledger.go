package drain

import (
	"strconv"
	"sync"
)

// Ledger is one process's view of the PodDisruptionBudgets its drains share: the
// allowances that evictions in flight hold, whichever run sent them, the newest status
// any run has seen of each budget, and the status at which a budget last refused. Give
// every Engine of a process the same Ledger (Config.Ledger: the controller's runs, the
// dashboard's concurrent drains) and a pod whose budget has no room is not asked by a
// second run: the room a run sees is the budget's allowance less every run's
// reservations, none when the run's copy of the status is older than another run's, and
// none at a status the server refused at. An Engine without one makes its own.
//
// It is safe for concurrent use. Its lock is taken after a run's (never before), and
// nothing is called while it is held: a run told of a change (subscribe) is called
// after the lock is released, by the run whose change it was, once that run's own lock
// is released too (doc.go).
type Ledger struct {
	mu       sync.Mutex
	reserved map[string]map[string]bool // budget key -> pods whose eviction holds one of its allowances
	newest   map[string]uint64          // budget key -> the newest resourceVersion any run has seen
	refused  map[string]string          // budget key -> the resourceVersion of the status a refusal came at
	subs     map[int]*subscriber
	next     int
}

// NewLedger returns an empty Ledger.
func NewLedger() *Ledger {
	return &Ledger{reserved: map[string]map[string]bool{}, newest: map[string]uint64{}, refused: map[string]string{}, subs: map[int]*subscriber{}}
}

// room is how many more evictions the budget key has room for, as a run whose copy of
// its status allows allowed at resourceVersion rv sees it: the allowance less every
// run's reservations; none when another run has seen a newer status, or when the server
// refused an eviction at this very status.
func (l *Ledger) room(key string, allowed int32, rv string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.roomLocked(key, allowed, rv)
}

func (l *Ledger) roomLocked(key string, allowed int32, rv string) int {
	if rv != "" && l.refused[key] == rv {
		return 0
	}
	if v, ok := parseRV(rv); ok && v < l.newest[key] {
		return 0 // another run has seen a newer status: wait for ours to catch up
	}
	return int(allowed) - len(l.reserved[key])
}

// tryReserve takes one of the budget's allowances for pod when there is room (room), and
// reports whether it did. Deciding and taking under one lock, two runs never take the
// last allowance both.
func (l *Ledger) tryReserve(key, pod string, allowed int32, rv string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.reserved[key][pod] {
		return true // already its own
	}
	if l.roomLocked(key, allowed, rv) <= 0 {
		return false
	}
	if l.reserved[key] == nil {
		l.reserved[key] = map[string]bool{}
	}
	l.reserved[key][pod] = true
	return true
}

// hold records that pod's eviction holds one of key's allowances, room or not (what
// tryReserve takes, and a record of a run's book).
func (l *Ledger) hold(key, pod string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.reserved[key] == nil {
		l.reserved[key] = map[string]bool{}
	}
	l.reserved[key][pod] = true
}

// release gives back pod's allowance on key, and reports whether it held one.
func (l *Ledger) release(key, pod string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.reserved[key][pod] {
		return false
	}
	delete(l.reserved[key], pod)
	if len(l.reserved[key]) == 0 {
		delete(l.reserved, key)
	}
	return true
}

// reservedOn is how many allowances of key evictions in flight hold, every run's.
func (l *Ledger) reservedOn(key string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.reserved[key])
}

// saw records a status of key a run has seen (its resourceVersion).
func (l *Ledger) saw(key, rv string) {
	v, ok := parseRV(rv)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if v > l.newest[key] {
		l.newest[key] = v
	}
}

// refusedAt records that the server refused an eviction under key while its status was
// at resourceVersion rv: no run asks again until the status changes.
func (l *Ledger) refusedAt(key, rv string) {
	if rv == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refused[key] = rv
}

// subscriber is one run told of the budgets whose reservations another run gave back.
type subscriber struct {
	fn     func(key string)
	mu     sync.Mutex
	closed bool
	calls  sync.WaitGroup
}

// subscribe has fn called with a budget's key when another run gives back one of its
// allowances (fn then wakes the pods of its own run that wait on it). The returned
// function ends the subscription and returns once no call of fn is in progress.
func (l *Ledger) subscribe(fn func(key string)) (id int, cancel func()) {
	s := &subscriber{fn: fn}
	l.mu.Lock()
	l.next++
	id = l.next
	l.subs[id] = s
	l.mu.Unlock()
	return id, func() {
		l.mu.Lock()
		delete(l.subs, id)
		l.mu.Unlock()
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		s.calls.Wait()
	}
}

// wake tells every subscriber but from (the run whose change it was) that key has room
// again. Call it with no lock held: each subscriber takes its run's lock.
func (l *Ledger) wake(key string, from int) {
	l.mu.Lock()
	subs := make([]*subscriber, 0, len(l.subs))
	for id, s := range l.subs {
		if id != from {
			subs = append(subs, s)
		}
	}
	l.mu.Unlock()
	for _, s := range subs {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			continue
		}
		s.calls.Add(1)
		s.mu.Unlock()
		s.fn(key)
		s.calls.Done()
	}
}

// parseRV reads a resourceVersion as the number etcd gives it. Kubernetes calls it
// opaque; one that is not a number is never found older than another.
func parseRV(rv string) (uint64, bool) {
	v, err := strconv.ParseUint(rv, 10, 64)
	return v, err == nil
}

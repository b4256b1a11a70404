package drain

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
)

// cordonAll cordons every node of the plan before any drain starts, as kubectl does, up
// to cordonsAtOnce patches at a time (one after the other, 100 nodes took 6 s before the
// first eviction). Each cordon is said in plan order as soon as it and every node before
// it have answered, so one node whose cordon is retried holds back only the ones after it.
func (r *run) cordonAll(ctx context.Context) {
	nodes := r.pf.plan.Nodes
	type answer struct {
		already bool
		err     error
	}
	answers := make([]answer, len(nodes))
	next, done := make(chan int), make(chan int, len(nodes))
	var all, workers sync.WaitGroup
	all.Add(1)
	go func() { // feeds the nodes in plan order until ctx ends
		defer all.Done()
		defer close(next)
		for i := range nodes {
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	for range min(r.e.cfg.cordonsAtOnce(), len(nodes)) { // faststart.go
		workers.Add(1)
		go func() {
			defer workers.Done()
			for i := range next {
				answers[i].already, answers[i].err = r.cordonPatch(ctx, nodes[i].Name)
				done <- i // buffered: never blocks
			}
		}()
	}
	all.Add(1)
	go func() {
		defer all.Done()
		workers.Wait()
		close(done)
	}()
	// Only answers received on done are read here (a worker may be writing any other).
	got, said := make([]bool, len(nodes)), 0
	say := func(i int) {
		r.cordoned(ctx, nodes[i].Name, answers[i].already, answers[i].err)
	}
	for i := range done {
		got[i] = true
		for ; said < len(nodes) && got[said]; said++ {
			say(said)
		}
	}
	for ; said < len(nodes); said++ { // interrupted: the answers after a node never tried
		if got[said] {
			say(said)
		}
	}
	all.Wait()
}

// cordon cordons a node for its drain (the record in the same patch) and says so; false
// when it failed (the node is failed) or ctx ended.
func (r *run) cordon(ctx context.Context, name string) bool {
	already, err := r.cordonPatch(ctx, name)
	return r.cordoned(ctx, name, already, err)
}

// cordonPatch sends the cordon and its record, retrying transient errors.
func (r *run) cordonPatch(ctx context.Context, name string) (already bool, err error) {
	known := r.pf.nodes[name] // the plan's node: one PATCH when it has not changed since (faststart.go)
	err = r.retryTransient(ctx, func() (err error) {
		already, err = r.e.cordonKnown(ctx, name, known) // faststart.go
		known = nil
		return err
	})
	if err == nil {
		r.fast.cordoned(name, r.e.cfg.Clock.Now())
	}
	return already, err
}

// cordoned records and says the answer to a node's cordon; false when it failed (the
// node is failed) or ctx ended.
func (r *run) cordoned(ctx context.Context, name string, already bool, err error) bool {
	if held := asHeld(err); held != nil {
		r.lock()
		wait := r.hold.heldByLocked(r.nodes[name], held)
		r.unlock()
		return wait // the node's drain waits for it (takeNode)
	}
	if err != nil {
		if ctx.Err() == nil {
			r.lock()
			r.failNodeLocked(r.nodes[name], err.Error())
			r.unlock()
		}
		return false
	}
	r.lock()
	r.nodes[name].pol.cordonedHere = !already
	r.nodes[name].pol.held = true
	r.nodes[name].pol.beatAt = r.e.cfg.Clock.Now()
	r.unlock()
	// Recorded (in the same patch as the cordon) before it is said.
	r.e.emit(event.Event{Type: event.EventNodeCordoned, Node: name, Already: already})
	if !already {
		r.recordEvent(name, corev1.EventTypeNormal, "Cordoned", "kubectl-maintenance cordoned the node to drain it")
	}
	return true
}

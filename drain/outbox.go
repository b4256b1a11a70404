package drain

import (
	"sync"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
)

// outbox delivers events to the caller's channel in the order they were posted, from one
// goroutine of its own. Posting never blocks and never sends on a channel, so code that
// holds the engine's lock can post; close waits until every posted event is delivered,
// after which nothing is ever sent again.
type outbox struct {
	ch   chan<- event.Event
	mu   sync.Mutex
	cond *sync.Cond
	q    []event.Event
	shut bool
	done chan struct{}
}

func newOutbox(ch chan<- event.Event) *outbox {
	o := &outbox{ch: ch, done: make(chan struct{})}
	o.cond = sync.NewCond(&o.mu)
	go o.loop()
	return o
}

// post queues ev for delivery. Events posted after close are dropped.
func (o *outbox) post(ev event.Event) {
	o.mu.Lock()
	if !o.shut {
		o.q = append(o.q, ev)
		o.cond.Signal()
	}
	o.mu.Unlock()
}

func (o *outbox) loop() {
	defer close(o.done)
	for {
		o.mu.Lock()
		for len(o.q) == 0 && !o.shut {
			o.cond.Wait()
		}
		if len(o.q) == 0 {
			o.mu.Unlock()
			return
		}
		ev := o.q[0]
		o.q[0] = event.Event{}
		o.q = o.q[1:]
		o.mu.Unlock()
		o.ch <- ev
	}
}

// close delivers what is queued and returns when the delivering goroutine has ended.
func (o *outbox) close() {
	o.mu.Lock()
	o.shut = true
	o.cond.Broadcast()
	o.mu.Unlock()
	<-o.done
}

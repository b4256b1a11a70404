// Package relay observes a run's events and passes them on: one goroutine reads the
// events a run sends, in order, shows each to every observer (a printer, the metrics
// recorder, a tap) and then sends it on to the next reader, if there is one. Closing the
// relay waits until every event sent before has been observed and passed on, so that a
// caller that prints a summary after the run prints it after the run's last event.
package relay

import "github.com/kubectl-maintenance/kubectl-maintenance/event"

// Observer sees each event before it is passed on. It runs on the relay's goroutine, one
// event at a time, in order.
type Observer func(event.Event)

// Relay is a running relay (Start).
type Relay struct {
	in   chan event.Event
	done chan struct{}
}

// Start starts a relay that shows every event sent to In to each observer, in order,
// then sends it to out (nil: the events end with the observers). buffer is In's
// capacity. out is never closed by the relay: it may be a channel the caller's caller
// reads on.
func Start(out chan<- event.Event, buffer int, observers ...Observer) *Relay {
	r := &Relay{in: make(chan event.Event, buffer), done: make(chan struct{})}
	go func() {
		defer close(r.done)
		for ev := range r.in {
			for _, o := range observers {
				o(ev)
			}
			if out != nil {
				out <- ev
			}
		}
	}()
	return r
}

// In is where the run sends its events.
func (r *Relay) In() chan<- event.Event { return r.in }

// Close closes In and returns once every event sent to it has been observed and passed
// on. Nothing may be sent to In after Close.
func (r *Relay) Close() {
	close(r.in)
	<-r.done
}

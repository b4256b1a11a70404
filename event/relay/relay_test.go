package relay

import (
	"fmt"
	"testing"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
)

func TestRelay(t *testing.T) {
	tests := []struct {
		name      string
		events    int
		observers int
		out       bool
	}{
		{name: "no event: Close returns at once", events: 0, observers: 1, out: true},
		{name: "every observer sees every event, in order, and out gets them all", events: 100, observers: 2, out: true},
		{name: "without out the events end with the observers (a printer)", events: 50, observers: 1},
		{name: "without observers the relay only passes the events on", events: 10, out: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			seen := make([][]string, tc.observers)
			var observers []Observer
			for i := range tc.observers {
				observers = append(observers, func(ev event.Event) { seen[i] = append(seen[i], ev.Node) })
			}
			var out chan event.Event
			if tc.out {
				out = make(chan event.Event, tc.events) // read after Close: the relay must not close it
			}
			r := Start(out, 4, observers...)
			var want []string
			for i := range tc.events {
				node := fmt.Sprintf("n%d", i)
				want = append(want, node)
				r.In() <- event.Event{Type: event.EventNodeCordoned, Node: node}
			}
			r.Close() // every event observed and passed on when it returns
			for i, got := range seen {
				if fmt.Sprint(got) != fmt.Sprint(want[:len(got)]) || len(got) != len(want) {
					t.Errorf("observer %d saw %v, want %v", i, got, want)
				}
			}
			if !tc.out {
				return
			}
			if len(out) != tc.events {
				t.Fatalf("out holds %d events, want %d", len(out), tc.events)
			}
			for _, node := range want {
				if ev := <-out; ev.Node != node {
					t.Fatalf("out: %s, want %s (in order)", ev.Node, node)
				}
			}
		})
	}
}

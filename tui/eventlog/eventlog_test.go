package eventlog

import (
	"strings"
	"testing"
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
)

// A wait that names no budget (an order group, a rule) prints no empty "waits on :".
func TestBlockedLineHasNoEmptyField(t *testing.T) {
	at := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		ev   event.Event
		want string
	}{
		{"budget", event.Event{Type: event.EventEvictionBlocked, Time: at, Pod: "shop/db-0", PDB: "shop/db", Message: "allows 0"},
			"10:00:00 pod shop/db-0 waits on shop/db: allows 0"},
		{"order group", event.Event{Type: event.EventEvictionBlocked, Time: at, Pod: "shop/db-0", Message: "held back until order group -5 is gone"},
			"10:00:00 pod shop/db-0 waits: held back until order group -5 is gone"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Line(tc.ev)
			if got != tc.want || strings.Contains(got, " :") {
				t.Errorf("Line = %q, want %q", got, tc.want)
			}
		})
	}
}

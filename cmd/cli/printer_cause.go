package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
)

// causeLines completes a wait line: how long it has waited when it is said again, then
// its cause (unless the line already says it) and remedy on lines of their own, indented.
func causeLines(ev event.Event) string {
	s := ""
	if ev.Reason != drain.ReasonDoNotDisrupt && ev.Reason != drain.ReasonWaitCompleted {
		s = waitedFor(ev)
	}
	if ev.Cause != "" && !strings.Contains(ev.Message, ev.Cause) {
		s += "\n  cause: " + ev.Cause
	}
	if ev.Remedy != "" {
		s += "\n  remedy: " + ev.Remedy
	}
	return s
}

// waitedFor is " (waiting for 1m30s)" for a wait said again, "" the first time.
func waitedFor(ev event.Event) string {
	if ev.Waited < time.Second {
		return ""
	}
	return fmt.Sprintf(" (waiting for %s)", ev.Waited.Round(time.Second))
}

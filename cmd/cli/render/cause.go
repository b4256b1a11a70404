package render

import (
	"fmt"
	"strings"
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
)

// causeLines completes a wait line: how long it has waited when it is said again and its
// cause, on the same line (unless the line already says it, or the wait is routine: this
// drain's own evictions in flight), then its remedy on a line of its own, indented, the
// first time that remedy is said for that budget (or pod) in the run.
func (p *Human) causeLines(ev event.Event) string {
	s := ""
	if ev.Reason != drain.ReasonDoNotDisrupt && ev.Reason != drain.ReasonWaitCompleted {
		s = waitedFor(ev)
	}
	if ev.Routine {
		return s
	}
	if ev.Cause != "" && !strings.Contains(ev.Message, ev.Cause) {
		s += "; cause: " + ev.Cause
	}
	if ev.Remedy != "" {
		subject := ev.PDB
		if subject == "" {
			subject = ev.Pod
		}
		if key := subject + "|" + ev.Remedy; !p.remedies[key] {
			if p.remedies == nil {
				p.remedies = map[string]bool{}
			}
			p.remedies[key] = true
			s += "\n  remedy: " + ev.Remedy
		}
	}
	return s
}

// roughly renders a duration for a person: tenths of a second under 10 s (never below
// 0.1s), whole seconds under an hour, whole minutes beyond.
func roughly(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d < 10*time.Second:
		return fmt.Sprintf("%.1fs", max(d, 100*time.Millisecond).Round(100*time.Millisecond).Seconds())
	case d < time.Hour:
		return d.Round(time.Second).String()
	}
	return d.Round(time.Minute).String()
}

// waitedFor is " (waiting for 1m30s)" for a wait said again, "" the first time.
func waitedFor(ev event.Event) string {
	if ev.Waited < time.Second {
		return ""
	}
	return fmt.Sprintf(" (waiting for %s)", ev.Waited.Round(time.Second))
}

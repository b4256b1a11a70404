package drain

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

// Every run ends or says why not: at --not-after, which nodes are still in progress and
// what ends them; with no --timeout, once per budget that never allows a disruption, that
// the run waits until the budget changes and how to stop it.

// sayPastDeadline waits for --not-after and then names the nodes still in progress and
// what ends them (said once; nothing when none is in progress, or no deadline).
func (wd *waitDiag) sayPastDeadline(ctx context.Context) {
	r := wd.r
	deadline, stop := r.deadline()
	defer stop()
	if deadline == nil {
		return
	}
	select {
	case <-deadline:
	case <-ctx.Done():
		return
	}
	r.lock()
	defer r.unlock()
	var busy []string
	for name, ns := range r.nodes {
		if (ns.started || ns.cordoning) && !ns.finished {
			busy = append(busy, name)
		}
	}
	if len(busy) == 0 {
		return
	}
	sort.Strings(busy)
	ends := "they end when drained, or at --timeout " + r.e.cfg.Timeout.String()
	if r.e.cfg.Timeout == 0 {
		ends = "they end when drained (no --timeout: Ctrl-C stops the run, leaving them cordoned in state failed)"
	}
	r.e.emit(event.Event{Type: event.EventWarning, Reason: "NotAfterPassed",
		Message: fmt.Sprintf("--not-after %s has passed; no node starts now; still in progress: %s; %s",
			r.e.cfg.NotAfter.UTC().Format(time.RFC3339), strings.Join(busy, ", "), ends)})
}

// ReasonWaitsForever is the Reason of the warning a run gives, once per budget, when it
// starts waiting on a budget that never allows a disruption with nothing to end the wait.
const ReasonWaitsForever = "WaitsUntilBudgetChanges"

// sayEndlessWaitLocked says once per budget, when a pod starts waiting on a budget that
// never allows a disruption and the run has no --timeout (and waits, --on-blocked=wait),
// that the run waits until the budget changes, and how to stop it.
func (wd *waitDiag) sayEndlessWaitLocked(reason string, budgets []*pdb.Budget) {
	r := wd.r
	if r.e.cfg.Timeout != 0 || r.e.cfg.OnBlocked != OnBlockedWait || reason != string(pdb.Never) {
		return
	}
	for _, b := range budgets {
		if r.pol.endless[b.Key()] {
			continue
		}
		if r.pol.endless == nil {
			r.pol.endless = map[string]bool{}
		}
		r.pol.endless[b.Key()] = true
		r.e.emit(event.Event{Type: event.EventWarning, PDB: b.Key(), Reason: ReasonWaitsForever,
			Message: fmt.Sprintf("pdb %s never allows a disruption: with no --timeout this run waits until the budget changes; stop it with Ctrl-C (running the same command again resumes), or run it with --timeout or --on-blocked=skip", b.Key())})
	}
}

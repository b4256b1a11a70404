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
	bs := wd.b
	deadline, stop := bs.host.deadline()
	defer stop()
	if deadline == nil {
		return
	}
	select {
	case <-deadline:
	case <-ctx.Done():
		return
	}
	bs.lock()
	defer bs.unlock()
	var busy []string
	for name, ns := range bs.host.nodesLocked() {
		if (ns.started || ns.cordoning) && !ns.finished {
			busy = append(busy, name)
		}
	}
	if len(busy) == 0 {
		return
	}
	sort.Strings(busy)
	ends := "they end when drained, or at --timeout " + bs.cfg.Timeout.String()
	if bs.cfg.Timeout == 0 {
		ends = "they end when drained (no --timeout: Ctrl-C stops the run, leaving them cordoned in state failed)"
	}
	bs.emit(event.Event{Type: event.EventWarning, Reason: "NotAfterPassed",
		Message: fmt.Sprintf("--not-after %s has passed; no node starts now; still in progress: %s; %s",
			bs.cfg.NotAfter.UTC().Format(time.RFC3339), strings.Join(busy, ", "), ends)})
}

// ReasonWaitsForever is the Reason of the warning a run gives, once per budget, when it
// starts waiting on a budget that never allows a disruption with nothing to end the wait.
const ReasonWaitsForever = "WaitsUntilBudgetChanges"

// sayEndlessWaitLocked says once per budget, when a pod starts waiting on a budget that
// never allows a disruption and the run has no --timeout (and waits, --on-blocked=wait),
// that the run waits until the budget changes, and how to stop it.
func (wd *waitDiag) sayEndlessWaitLocked(reason string, budgets []*pdb.Budget) {
	bs := wd.b
	if bs.cfg.Timeout != 0 || bs.cfg.OnBlocked != OnBlockedWait || reason != string(pdb.Never) {
		return
	}
	for _, b := range budgets {
		if bs.host.policyLocked().endless[b.Key()] {
			continue
		}
		if bs.host.policyLocked().endless == nil {
			bs.host.policyLocked().endless = map[string]bool{}
		}
		bs.host.policyLocked().endless[b.Key()] = true
		bs.emit(event.Event{Type: event.EventWarning, PDB: b.Key(), Reason: ReasonWaitsForever,
			Message: fmt.Sprintf("pdb %s never allows a disruption: with no --timeout this run waits until the budget changes; stop it with Ctrl-C (running the same command again resumes), or run it with --timeout or --on-blocked=skip", b.Key())})
	}
}

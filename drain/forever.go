package drain

import (
	"fmt"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

// ReasonWaitsForever is the Reason of the warning a run gives, once, when it starts
// waiting on a budget that never allows a disruption with nothing to end the wait.
const ReasonWaitsForever = "WaitsUntilBudgetChanges"

// waitsForeverLocked says once per run, when a pod starts waiting on a budget that never
// allows a disruption and no timeout or --on-blocked policy ends the wait, that the run
// waits until the budget changes and how to stop it: without it a pool move or a drain
// would wait for ever with nothing said about what ends it.
func (r *run) waitsForeverLocked(b *pdb.Budget) {
	if r.forever || b == nil || r.e.cfg.Timeout > 0 || r.e.cfg.OnBlocked != OnBlockedWait {
		return
	}
	r.forever = true
	r.e.emit(event.Event{Type: event.EventWarning, Reason: ReasonWaitsForever, PDB: b.Key(),
		Message: fmt.Sprintf("pdb %s never allows a disruption: with no --timeout this run waits until the budget changes; stop it with Ctrl-C (running the same command again resumes), or run it with --timeout or --on-blocked=skip", b.Key())})
}

package render

import (
	"fmt"
	"io"
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance"
	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// Follow prints a followed Maintenance (maintenance.Follower): each change of its status
// as kubectl-style lines, or, with ND set, as the NDJSON events the same local run would
// have sent (maintenance.NodeChange.Events); what the follower says while it waits on
// ErrOut; and the summary once the object ends.
type Follow struct {
	Out, ErrOut io.Writer
	// ND is the NDJSON stream (-o json), nil for lines.
	ND *NDJSON
	// Name is the Maintenance's.
	Name string
}

// Change prints one change of the object's status.
func (f *Follow) Change(ch maintenance.NodeChange) {
	if f.ND == nil {
		MaintenanceChange(f.Out, f.ErrOut, ch)
		return
	}
	for _, ev := range ch.Events() {
		f.ND.Event(ev)
	}
}

// NotTakenUp warns that no controller took the object up (why: the likely cause).
func (f *Follow) NotTakenUp(why string) {
	fmt.Fprintf(f.ErrOut, "Warning: no controller took maintenance/%s up within %s: %s\n", f.Name, maintenance.PickupTimeout, why)
}

// Waiting says what the object waits for.
func (f *Follow) Waiting(msg string) { fmt.Fprintf(f.ErrOut, "waiting: %s\n", msg) }

// Unreachable says the API server went away (the object runs on in the cluster).
func (f *Follow) Unreachable(err error) {
	fmt.Fprintf(f.ErrOut, "Warning: cannot reach the API server (%v); maintenance/%s runs on in the cluster, following it again when it answers\n", err, f.Name)
}

// Reachable says the API server answers again after down.
func (f *Follow) Reachable(down time.Duration) {
	fmt.Fprintf(f.ErrOut, "the API server answers again after %s; following maintenance/%s\n", down.Round(time.Second), f.Name)
}

// Detached says the follow stopped (Ctrl-C) while the object runs on.
func (f *Follow) Detached() {
	fmt.Fprintf(f.ErrOut, "detached: maintenance/%s runs on in the cluster; follow it again with `kubectl maintenance follow %s`, cancel it with `kubectl maintenance cancel %s`\n", f.Name, f.Name, f.Name)
}

// Summary prints how far m got, with the follow's error and exit code: the NDJSON
// stream's last event, or the summary lines of a drain or a move.
func (f *Follow) Summary(m *mntv1.Maintenance, err error, code int) {
	switch {
	case f.ND != nil:
		f.ND.Summary(maintenance.Summary(m), err, code)
	case m.Spec.Action == mntv1.ActionDrain || m.Spec.Action == mntv1.ActionMove:
		(&Human{Out: f.Out, ErrOut: f.ErrOut}).Summary(maintenance.Summary(m), err, code)
	}
}

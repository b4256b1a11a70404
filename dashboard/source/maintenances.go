package source

import (
	"fmt"
	"sort"
	"strings"
	"time"

	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/schedule"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui/data"
)

// MaintenanceRows are the dashboard's rows of the Maintenances at now: the unfinished
// ones first (by name), then the finished ones.
func MaintenanceRows(ms []*mntv1.Maintenance, now time.Time) []data.MaintenanceRow {
	out := make([]data.MaintenanceRow, 0, len(ms))
	for _, m := range ms {
		done := 0
		row := data.MaintenanceRow{Name: m.Name, Action: string(m.Spec.Action), Paused: m.Spec.Paused,
			Done: m.Status.Phase.Done(), Deleting: m.DeletionTimestamp != nil, Message: message(m),
			Selects: selects(m), Reason: m.Spec.Reason, Counts: counts(m.Status.Counts)}
		for _, n := range m.Status.Nodes {
			if mntv1.NodeStateDone(n.State, m.Spec.Action) {
				done++
			}
			if cordons(n.State) {
				row.Cordoned = append(row.Cordoned, n.Name)
			}
			mn := data.MaintenanceNode{Name: n.Name, State: n.State, PodsLeft: n.PodsLeft, Message: n.Message}
			for _, b := range n.Blockers {
				mn.Blockers = append(mn.Blockers, data.Blocker{Pod: b.Pod, PDB: b.PDB, Message: b.Message, Cause: b.Cause, Remedy: b.Remedy})
			}
			row.NodeList = append(row.NodeList, mn)
		}
		if len(m.Status.Nodes) == 0 { // not planned yet: the nodes it names
			for _, n := range m.Spec.Nodes {
				row.NodeList = append(row.NodeList, data.MaintenanceNode{Name: n, State: mntv1.NodeStatePending})
			}
		}
		row.Phase = string(m.Status.Phase)
		if row.Phase == "" {
			row.Phase = string(mntv1.PhasePending)
		}
		row.Nodes = fmt.Sprintf("%d/%d nodes", done, len(m.Status.Nodes))
		row.Window, row.NextStart, row.WindowEnd = window(m, now)
		out = append(out, row)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Done != out[j].Done {
			return !out[i].Done
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// cordons reports whether a node in state has been cordoned by the run (a cancel leaves
// it cordoned): every state from Cordoned on, but not Pending, NotStarted, Uncordoned,
// Released or Gone.
func cordons(state string) bool {
	switch state {
	case mntv1.NodeStateCordoned, mntv1.NodeStateDraining, mntv1.NodeStateDrained, mntv1.NodeStateBlocked, mntv1.NodeStateFailed, mntv1.NodeStateMoved:
		return true
	}
	return false
}

// message is the status message, or while the object runs, what its first waiting node
// waits on (the pod and the budget's words; a part that is empty is left out).
func message(m *mntv1.Maintenance) string {
	if m.Status.Message != "" || m.Status.Phase.Done() {
		return m.Status.Message
	}
	for _, n := range m.Status.Nodes {
		if len(n.Blockers) > 0 {
			b := n.Blockers[0]
			return joinNonEmpty(": ", n.Name+" waits", b.Pod, b.Message)
		}
	}
	return ""
}

// joinNonEmpty joins the parts that are not empty: no field is ever printed empty.
func joinNonEmpty(sep string, parts ...string) string {
	var kept []string
	for _, p := range parts {
		if strings.TrimSpace(p) != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, sep)
}

func selects(m *mntv1.Maintenance) string {
	switch {
	case m.Spec.Pool != "":
		return "pool " + m.Spec.Pool
	case m.Spec.Selector != "":
		return "selector " + m.Spec.Selector
	case len(m.Spec.Nodes) > 0:
		return "nodes " + strings.Join(m.Spec.Nodes, ", ")
	}
	return ""
}

func counts(c mntv1.Counts) string {
	s := fmt.Sprintf("%d drained, %d pending, %d failed, %d evicted, %d pods pending, %d evictions, %d refused",
		c.NodesDrained, c.NodesPending, c.NodesFailed, c.PodsEvicted, c.PodsPending, c.Evictions, c.Refusals)
	for _, x := range []struct {
		n    int32
		what string
	}{{c.NodesBlocked, "blocked"}, {c.NodesNotStarted, "not started"}, {c.PodsForced, "pods forced"}, {c.NodesGone, "nodes gone"}} {
		if x.n > 0 {
			s += fmt.Sprintf(", %d %s", x.n, x.what)
		}
	}
	return s
}

// window is spec.window as written, when it opens next and when that opening (or the
// open one) closes, at now; the times are the status's when it has them.
func window(m *mntv1.Maintenance, now time.Time) (written, next, end string) {
	w := m.Spec.Window
	if w == nil {
		return "", "", ""
	}
	var sw schedule.Window
	var parts []string
	if w.Recurring != nil {
		r := w.Recurring
		if rec, err := schedule.NewRecurring("window", r.Days, r.Start, r.End, r.TimeZone); err == nil {
			sw.Recurring = rec
			parts = append(parts, rec.String())
		} else {
			parts = append(parts, fmt.Sprintf("%s %s-%s %s", strings.Join(r.Days, ","), r.Start, r.End, r.TimeZone))
		}
	}
	if w.Start != nil {
		sw.NotBefore = w.Start.Time
		parts = append(parts, "from "+stamp(w.Start.Time))
	}
	if w.End != nil {
		sw.NotAfter = w.End.Time
		parts = append(parts, "until "+stamp(w.End.Time))
	}
	written = strings.Join(parts, " ")
	st := sw.At(now)
	switch {
	case m.Status.NextStart != nil:
		next = stamp(m.Status.NextStart.Time)
		if s := sw.At(m.Status.NextStart.Time); s.Open && !s.Closes.IsZero() {
			end = stamp(s.Closes)
		}
	case st.Open:
		if !st.Closes.IsZero() {
			end = stamp(st.Closes)
		}
		if m.Status.WindowCloses != nil {
			end = stamp(m.Status.WindowCloses.Time)
		}
	case !st.Over:
		next = stamp(st.Opens)
		if s := sw.At(st.Opens); s.Open && !s.Closes.IsZero() {
			end = stamp(s.Closes)
		}
	}
	return written, next, end
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// MarkNodes sets on each node of snap the unfinished Maintenance that holds it (a node of
// a Running or Paused run that has started) or else plans it (Scheduled, Pending, or a
// node its run has not reached). The first holder wins over any planner.
func MarkNodes(snap *data.Snapshot) {
	at := make(map[string]int, len(snap.Nodes))
	for i, n := range snap.Nodes {
		at[n.Name] = i
	}
	for _, m := range snap.Maintenances {
		if m.Done {
			continue
		}
		running := m.Phase == string(mntv1.PhaseRunning) || m.Phase == string(mntv1.PhasePaused)
		for _, mn := range m.NodeList {
			i, ok := at[mn.Name]
			if !ok {
				continue
			}
			n := &snap.Nodes[i]
			held := running && mn.State != mntv1.NodeStatePending && mn.State != mntv1.NodeStateNotStarted && mn.State != ""
			if n.Maintenance == "" || held && !n.Held {
				n.Maintenance, n.MaintenancePhase, n.Held = m.Name, m.Phase, held
			}
		}
	}
}

package render

import (
	"fmt"
	"io"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance"
	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// MaintenanceChange writes what changed on a followed Maintenance's node: its new state
// (on out, or errOut for a failure, a node given up or not started), then each new blocker
// on errOut.
func MaintenanceChange(out, errOut io.Writer, ch maintenance.NodeChange) {
	n := ch.Node
	if ch.StateChanged {
		switch n.State {
		case maintenance.NodeCordoned:
			fmt.Fprintf(out, "node/%s cordoned\n", n.Name)
		case maintenance.NodeDraining:
			fmt.Fprintf(out, "node/%s draining (%d pod(s) left)\n", n.Name, n.PodsLeft)
		case maintenance.NodeDrained:
			fmt.Fprintf(out, "node/%s drained\n", n.Name)
		case maintenance.NodeMoved:
			fmt.Fprintf(out, "node/%s moved\n", n.Name)
		case maintenance.NodeUncordoned:
			fmt.Fprintf(out, "node/%s uncordoned\n", n.Name)
		case maintenance.NodeFailed:
			fmt.Fprintf(errOut, "error: node/%s: %s\n", n.Name, n.Message)
		case maintenance.NodeBlocked:
			fmt.Fprintf(errOut, "node/%s given up, blocked (it stays cordoned): %s\n", n.Name, n.Message)
		case maintenance.NodeNotStarted:
			fmt.Fprintf(errOut, "node/%s not started\n", n.Name)
		case maintenance.NodeReleased:
			fmt.Fprintf(errOut, "node/%s left the run: %s\n", n.Name, n.Message)
		}
	}
	for _, b := range ch.Blockers {
		fmt.Fprintf(errOut, "node/%s: pod %s waits: %s\n", n.Name, b.Pod, waitText(b))
	}
}

// waitText is a blocker's message and cause, each said once (the engine's cause often
// repeats the budget's numbers of its message).
func waitText(b mntv1.Blocker) string {
	said := "" // the cause the engine already put in the message, without the budget's numbers
	if _, c, ok := strings.Cut(b.Message, "; cause: "); ok {
		said = c
	}
	switch {
	case b.Cause == "" || strings.Contains(b.Message, b.Cause) || (said != "" && strings.HasSuffix(b.Cause, said)):
		return b.Message
	case strings.Contains(b.Cause, b.Message):
		return b.Cause
	}
	return b.Message + " (" + b.Cause + ")"
}

// MaintenanceTable is Maintenances as kubectl get prints them: NAME ACTION PHASE NODES
// BLOCKED FAILED EVICTED NEXT START AGE, and HOLDS and MESSAGE with -o wide. NODES is the
// nodes done of all; BLOCKED the nodes given up under onBlocked skip or blocked at the
// end; FAILED the nodes that failed. HOLDS lists the nodes an unfinished object holds
// (a finished one holds none: <none>).
func MaintenanceTable(list *mntv1.MaintenanceList, now time.Time) *metav1.Table {
	t := &metav1.Table{ColumnDefinitions: []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string"}, {Name: "Action", Type: "string"}, {Name: "Phase", Type: "string"},
		{Name: "Nodes", Type: "string"}, {Name: "Blocked", Type: "integer"}, {Name: "Failed", Type: "integer"}, {Name: "Evicted", Type: "integer"}, {Name: "Next Start", Type: "string"}, {Name: "Age", Type: "string"},
		{Name: "Holds", Type: "string", Priority: 1}, {Name: "Message", Type: "string", Priority: 1},
	}}
	for i := range list.Items {
		m := &list.Items[i]
		s := m.Status
		var held []string
		blocked := int64(0)
		for _, n := range s.Nodes {
			if !s.Phase.Done() {
				held = append(held, n.Name)
			}
			if n.State == mntv1.NodeStateBlocked {
				blocked++
			}
		}
		blocked = max(blocked, int64(s.Counts.NodesBlocked))
		holds := strings.Join(held, ",")
		if holds == "" {
			holds = "<none>"
		}
		phase := string(s.Phase)
		if m.DeletionTimestamp != nil {
			phase = "Cancelling"
		}
		t.Rows = append(t.Rows, metav1.TableRow{Cells: []any{m.Name, string(m.Spec.Action), phase,
			fmt.Sprintf("%d/%d", s.Counts.NodesDrained, len(s.Nodes)), blocked, int64(s.Counts.NodesFailed), int64(s.Counts.PodsEvicted), nextStart(s, now),
			duration.HumanDuration(now.Sub(m.CreationTimestamp.Time)), holds, s.Message},
			Object: runtime.RawExtension{Object: m}})
	}
	return t
}

// nextStart is the Next Start column: when a Scheduled object's window opens, and in how
// long ("<none>" when it waits for no window).
func nextStart(s mntv1.MaintenanceStatus, now time.Time) string {
	if s.NextStart == nil {
		return "<none>"
	}
	at := s.NextStart.UTC().Format(time.RFC3339)
	if d := s.NextStart.Sub(now); d > 0 {
		return at + " (in " + duration.HumanDuration(d) + ")"
	}
	return at
}

// windowText is spec.window for describe: "Sat,Sun 02:00-06:00 Europe/Berlin, from ...,
// until ...; on close: Stop" ("" for none).
func windowText(w *mntv1.Window, onClose mntv1.WindowClose) string {
	if w == nil {
		return ""
	}
	var parts []string
	if r := w.Recurring; r != nil {
		zone := r.TimeZone
		if zone == "" {
			zone = "UTC"
		}
		parts = append(parts, fmt.Sprintf("%s %s-%s %s", strings.Join(r.Days, ","), r.Start, r.End, zone))
	}
	if w.Start != nil {
		parts = append(parts, "from "+w.Start.UTC().Format(time.RFC3339))
	}
	if w.End != nil {
		parts = append(parts, "until "+w.End.UTC().Format(time.RFC3339))
	}
	if onClose == "" {
		onClose = mntv1.WindowCloseFinish
	}
	return strings.Join(parts, ", ") + "; on close: " + string(onClose)
}

// DescribeMaintenance writes a Maintenance for a person, as kubectl describe does: what
// it does, where it is, each node with what blocks it, and its Events.
func DescribeMaintenance(w io.Writer, m *mntv1.Maintenance, events []corev1.Event) {
	s, st := m.Spec, m.Status
	nodes := strings.Join(s.Nodes, ",")
	switch {
	case s.Selector != "":
		nodes = "-l " + s.Selector
	case s.Pool != "":
		nodes = "pool " + s.Pool
	}
	fmt.Fprintf(w, "Name:         %s\nAction:       %s", m.Name, s.Action)
	if s.To != "" {
		fmt.Fprintf(w, " to pool %s", s.To)
	}
	fmt.Fprintf(w, "\nNodes:        %s\nPaused:       %t\nReason:       %s\nPhase:        %s\n", nodes, s.Paused, s.Reason, st.Phase)
	if st.Message != "" {
		fmt.Fprintf(w, "Message:      %s\n", st.Message)
	}
	if win := windowText(s.Window, s.Policy.OnWindowClose); win != "" {
		fmt.Fprintf(w, "Window:       %s\n", win)
	}
	if st.NextStart != nil {
		fmt.Fprintf(w, "Next start:   %s\n", st.NextStart.UTC().Format(time.RFC3339))
	}
	if st.StartTime != nil {
		fmt.Fprintf(w, "Started:      %s\n", st.StartTime.UTC().Format("2006-01-02T15:04:05Z"))
	}
	if st.CompletionTime != nil {
		fmt.Fprintf(w, "Completed:    %s\n", st.CompletionTime.UTC().Format("2006-01-02T15:04:05Z"))
	}
	k := st.Counts
	fmt.Fprintf(w, "Counts:       %d node(s) drained, %d failed, %d pending; %d pod(s) evicted, %d left; %d eviction request(s), %d refused\n",
		k.NodesDrained, k.NodesFailed, k.NodesPending, k.PodsEvicted, k.PodsPending, k.Evictions, k.Refusals)
	fmt.Fprintln(w, "Conditions:")
	for _, cond := range st.Conditions {
		fmt.Fprintf(w, "  %s=%s (%s): %s\n", cond.Type, cond.Status, cond.Reason, cond.Message)
	}
	fmt.Fprintln(w, "Nodes:")
	for _, n := range st.Nodes {
		since := ""
		if n.Since != nil {
			since = " since " + n.Since.UTC().Format("15:04:05Z")
		}
		fmt.Fprintf(w, "  %s: %s%s, %d pod(s) left", n.Name, n.State, since, n.PodsLeft)
		if n.Message != "" {
			fmt.Fprintf(w, ": %s", n.Message)
		}
		fmt.Fprintln(w)
		for _, b := range n.Blockers {
			fmt.Fprintf(w, "    pod %s waits: %s\n", b.Pod, b.Message)
			if b.Cause != "" {
				fmt.Fprintf(w, "      cause: %s\n", b.Cause)
			}
			if b.Remedy != "" {
				fmt.Fprintf(w, "      remedy: %s\n", b.Remedy)
			}
		}
	}
	if len(events) > 0 {
		fmt.Fprintln(w, "Events:")
		for _, e := range events {
			fmt.Fprintf(w, "  %s %s: %s\n", e.Type, e.Reason, e.Message)
		}
	}
	fmt.Fprintln(w)
}

// Package detail is the dashboard's detail view of one object (a node, a pod, a budget,
// a Maintenance), k9s style: every fact of the read model about it, each long text
// wrapped whole to the width (never cut), its Events, and links to the objects it names
// (a waiting pod's budget, a Maintenance's nodes) that Enter opens. It renders the read
// model only; the Events come from the dashboard's backend.
package detail

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/kubectl-maintenance/kubectl-maintenance/tui/data"
)

// Line is one rendered line; Link is the object Enter opens from it (zero: none).
type Line struct {
	Text string
	Link data.Ref
}

// page collects lines at a width; a field with an empty value is never written.
type page struct {
	w     int
	lines []Line
}

func (p *page) add(s string)              { p.lines = append(p.lines, Line{Text: s}) }
func (p *page) link(s string, r data.Ref) { p.lines = append(p.lines, Line{Text: s, Link: r}) }

// field writes "label: value" wrapped to the width (continuation lines indented under
// the value), or nothing when value is empty.
func (p *page) field(indent, label, value string) {
	if strings.TrimSpace(value) == "" {
		return
	}
	head := indent + label + ": "
	p.wrap(head, strings.Repeat(" ", len(indent)+2), oneLine(value))
}

// wrap writes head+text wrapped to the width, the lines after the first prefixed by pad.
func (p *page) wrap(head, pad, text string) {
	room := max(p.w-len(pad), 10)
	first := ansi.Wrap(head+text, max(p.w, 10), "")
	parts := strings.SplitN(first, "\n", 2)
	p.add(parts[0])
	if len(parts) == 2 {
		for _, l := range strings.Split(ansi.Wrap(oneLine(parts[1]), room, ""), "\n") {
			p.add(pad + l)
		}
	}
}

// Wrap is head+text wrapped to w columns, the lines after the first prefixed by pad
// (and wrapped to the room left): never a line wider than w.
func Wrap(head, pad, text string, w int) []string {
	p := &page{w: w}
	p.wrap(head, pad, text)
	out := make([]string, len(p.lines))
	for i, l := range p.lines {
		out[i] = l.Text
	}
	return out
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Render is the detail page of ref in snap at width w, with its Events (newest first;
// nil while they load, loadErr when they could not be read).
func Render(snap data.Snapshot, ref data.Ref, events []data.EventRow, loaded bool, loadErr string, w int) []Line {
	p := &page{w: w}
	switch ref.Kind {
	case "Node":
		renderNode(p, snap, ref.Name)
	case "Pod":
		renderPod(p, snap, ref.Namespace+"/"+ref.Name)
	case "PodDisruptionBudget":
		renderPDB(p, snap, ref.Namespace+"/"+ref.Name)
	case "Maintenance":
		renderMaintenance(p, snap, ref.Name)
	}
	p.add("")
	p.add("Events (newest first):")
	switch {
	case loadErr != "":
		p.field("  ", "cannot read them", loadErr)
	case !loaded:
		p.add("  loading...")
	case len(events) == 0:
		p.add("  none")
	}
	for _, e := range events {
		p.wrap("  ", "    ", EventText(e))
	}
	return p.lines
}

// EventText is one Event as a line: time, type, reason, message, count and source (the
// parts it has).
func EventText(e data.EventRow) string {
	s := e.Time.UTC().Format(time.RFC3339) + " " + e.Type + " " + e.Reason
	if e.Message != "" {
		s += ": " + oneLine(e.Message)
	}
	if e.Count > 1 {
		s += fmt.Sprintf(" (x%d)", e.Count)
	}
	if e.From != "" {
		s += " [" + e.From + "]"
	}
	return s
}

// RefOf parses "ns/name" into a Ref of kind.
func RefOf(kind, key string) data.Ref {
	ns, name, ok := strings.Cut(key, "/")
	if !ok {
		return data.Ref{Kind: kind, Name: key}
	}
	return data.Ref{Kind: kind, Namespace: ns, Name: name}
}

func findNode(snap data.Snapshot, name string) (data.NodeRow, bool) {
	i := slices.IndexFunc(snap.Nodes, func(n data.NodeRow) bool { return n.Name == name })
	if i < 0 {
		return data.NodeRow{}, false
	}
	return snap.Nodes[i], true
}

func findPDB(snap data.Snapshot, key string) (data.PDBRow, bool) {
	i := slices.IndexFunc(snap.PDBs, func(b data.PDBRow) bool { return b.Key == key })
	if i < 0 {
		return data.PDBRow{}, false
	}
	return snap.PDBs[i], true
}

// blockersOn are the Maintenances' blockers of node (with the Maintenance's name).
func blockersOn(snap data.Snapshot, node string) (out []data.Blocker, by []string) {
	for _, m := range snap.Maintenances {
		for _, n := range m.NodeList {
			if n.Name == node {
				for _, b := range n.Blockers {
					out, by = append(out, b), append(by, m.Name)
				}
			}
		}
	}
	return out, by
}

func renderNode(p *page, snap data.Snapshot, name string) {
	n, ok := findNode(snap, name)
	p.add("Node " + name)
	if !ok {
		p.add("  not in the cluster (deleted?)")
		return
	}
	p.field("  ", "status", n.Status)
	p.field("  ", "pools", strings.Join(n.Pools, ", "))
	p.field("  ", "version", n.Version)
	p.field("  ", "age", n.Age)
	p.add(fmt.Sprintf("  pods: %d running, %d evictable now, %d blocked", n.Pods, n.Evictable, n.Blocked))
	if n.Maintenance != "" {
		verb := "plans it"
		if n.Held {
			verb = "holds it"
		}
		p.link(fmt.Sprintf("  maintenance: %s (%s) %s", n.Maintenance, n.MaintenancePhase, verb), data.Ref{Kind: "Maintenance", Name: n.Maintenance})
	}
	blockers, by := blockersOn(snap, name)
	var budgets []string
	if len(blockers) > 0 {
		p.add("")
		p.add("Waits (the run's words):")
	}
	for i, b := range blockers {
		writeBlocker(p, b, by[i])
		budgets = appendBudgets(budgets, b.PDB)
	}
	var pods []data.PodRow
	for _, r := range snap.Pods {
		if r.Node == name {
			pods = append(pods, r)
		}
	}
	if len(pods) > 0 {
		p.add("")
		p.add("Pods that do not go now:")
	}
	for _, r := range pods {
		p.link("  pod "+r.Key, RefOf("Pod", r.Key))
		p.field("    ", podVerb(r), r.Reason)
		for _, k := range r.Budgets {
			budgets = appendBudgets(budgets, k)
		}
	}
	writeBudgets(p, snap, budgets, func(_, node string) bool { return node == name })
}

func podVerb(r data.PodRow) string {
	if r.Never {
		return "never goes"
	}
	return "waits"
}

// appendBudgets adds the budget keys of list (comma separated) not yet in keys.
func appendBudgets(keys []string, list string) []string {
	for _, k := range strings.Split(list, ",") {
		if k = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(k), "pdb ")); k != "" && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys
}

// writeBlocker writes one waiting pod of a run: the pod (a link), its budget, the whole
// message, cause and remedy.
func writeBlocker(p *page, b data.Blocker, by string) {
	if b.Pod != "" {
		p.link("  pod "+b.Pod, RefOf("Pod", b.Pod))
	}
	p.field("    ", "in run of", by)
	p.field("    ", "budget", b.PDB)
	p.field("    ", "waits", b.Message)
	if b.Cause != b.Message {
		p.field("    ", "cause", b.Cause)
	}
	p.field("    ", "remedy", b.Remedy)
}

// writeBudgets writes each budget's numbers and the other pods it covers (those self
// does not name: the pod shown, or the pods on the node shown).
func writeBudgets(p *page, snap data.Snapshot, keys []string, self func(key, node string) bool) {
	for _, k := range keys {
		b, ok := findPDB(snap, k)
		if !ok {
			continue
		}
		p.add("")
		p.link("Budget pdb "+k, RefOf("PodDisruptionBudget", k))
		writeNumbers(p, b)
		var others []string
		for _, pod := range b.Pods {
			if key, node, _ := strings.Cut(pod, " on "); !self(key, node) {
				others = append(others, pod)
			}
		}
		p.field("  ", "its other pods", strings.Join(others, ", "))
	}
}

func writeNumbers(p *page, b data.PDBRow) {
	p.add(fmt.Sprintf("  minAvailable %s, maxUnavailable %s", b.MinAvailable, b.MaxUnavailable))
	p.add(fmt.Sprintf("  allows %d now; healthy %d, desired %d, expected %d", b.Allowed, b.Current, b.Desired, b.Expected))
	if b.Never {
		p.field("  ", "never allows", b.NeverWhy)
		if b.NeverWhy == "" {
			p.add("  never allows a disruption as it stands")
		}
	}
	if b.Stale {
		p.add("  stale: the disruption controller has not processed its latest spec")
	}
}

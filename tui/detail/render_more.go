package detail

import (
	"fmt"
	"strings"

	"github.com/kubectl-maintenance/kubectl-maintenance/tui/data"
)

func renderPod(p *page, snap data.Snapshot, key string) {
	p.add("Pod " + key)
	var row *data.PodRow
	for i := range snap.Pods {
		if snap.Pods[i].Key == key {
			row = &snap.Pods[i]
		}
	}
	var budgets []string
	if row != nil {
		p.link("  node: "+row.Node, data.Ref{Kind: "Node", Name: row.Node})
		p.field("  ", podVerb(*row), row.Reason)
		budgets = append(budgets, row.Budgets...)
	} else {
		for _, b := range snap.PDBs { // a pod that goes now: its budget's list names it
			for _, pod := range b.Pods {
				if k, node, _ := strings.Cut(pod, " on "); k == key {
					p.link("  node: "+node, data.Ref{Kind: "Node", Name: node})
					budgets = append(budgets, b.Key)
				}
			}
		}
		p.add("  a drain would evict it now (no budget holds it back)")
	}
	for _, m := range snap.Maintenances {
		for _, n := range m.NodeList {
			for _, b := range n.Blockers {
				if b.Pod == key {
					p.add("")
					p.link(fmt.Sprintf("Waits in maintenance %s (%s), node %s:", m.Name, m.Phase, n.Name), data.Ref{Kind: "Maintenance", Name: m.Name})
					b.Pod = ""
					writeBlocker(p, b, "")
					budgets = appendBudgets(budgets, b.PDB)
				}
			}
		}
	}
	writeBudgets(p, snap, budgets, func(k, _ string) bool { return k == key })
}

func renderPDB(p *page, snap data.Snapshot, key string) {
	p.add("PodDisruptionBudget " + key)
	b, ok := findPDB(snap, key)
	if !ok {
		p.add("  not in the cluster (deleted?)")
		return
	}
	writeNumbers(p, b)
	if len(b.Pods) > 0 {
		p.add("")
		p.add("Its pods:")
	}
	for _, pod := range b.Pods {
		k, _, _ := strings.Cut(pod, " on ")
		p.link("  "+pod, RefOf("Pod", k))
	}
}

func renderMaintenance(p *page, snap data.Snapshot, name string) {
	p.add("Maintenance " + name)
	var m *data.MaintenanceRow
	for i := range snap.Maintenances {
		if snap.Maintenances[i].Name == name {
			m = &snap.Maintenances[i]
		}
	}
	if m == nil {
		p.add("  not in the cluster (cancelled?)")
		return
	}
	p.field("  ", "action", m.Action)
	phase := m.Phase
	if m.Paused && phase != "Paused" {
		phase += " (pausing)"
	}
	if m.Deleting {
		phase += " (being cancelled)"
	}
	p.field("  ", "phase", phase)
	p.field("  ", "selects", m.Selects)
	p.field("  ", "reason", m.Reason)
	p.field("  ", "window", m.Window)
	p.field("  ", "next start", m.NextStart)
	p.field("  ", "window ends", m.WindowEnd)
	p.field("  ", "progress", m.Nodes)
	p.field("  ", "counts", m.Counts)
	p.field("  ", "message", m.Message)
	p.field("  ", "cordoned by it", strings.Join(m.Cordoned, ", "))
	if len(m.NodeList) > 0 {
		p.add("")
		p.add("Nodes:")
	}
	var budgets []string
	for _, n := range m.NodeList {
		line := "  node " + n.Name
		if n.State != "" {
			line += " " + n.State
		}
		if n.PodsLeft > 0 {
			line += fmt.Sprintf(", %d pod(s) left", n.PodsLeft)
		}
		p.link(line, data.Ref{Kind: "Node", Name: n.Name})
		p.field("    ", "message", n.Message)
		for _, b := range n.Blockers {
			writeBlocker(p, b, "")
			budgets = appendBudgets(budgets, b.PDB)
		}
	}
	writeBudgets(p, snap, budgets, func(string, string) bool { return false })
}

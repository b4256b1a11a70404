package tui

import (
	"fmt"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/kubectl-maintenance/kubectl-maintenance/tui/data"
)

// bigSnapshot is 1,000 nodes in 5 pools with 30 pods each, and 3,000 PDBs (the read model
// dashboard/source builds from such a cluster; its own benchmark times that build).
func bigSnapshot() data.Snapshot {
	var s data.Snapshot
	for i := range 1000 {
		s.Nodes = append(s.Nodes, data.NodeRow{Name: fmt.Sprintf("node-%04d", i), Status: "Ready",
			Pools: []string{fmt.Sprintf("pool-%d", i%5)}, Pods: 30, Evictable: 30, Version: "v1.36.3", Age: "5d"})
	}
	for a := range 3000 {
		s.PDBs = append(s.PDBs, data.PDBRow{Key: fmt.Sprintf("ns-%02d/app-%04d", a%50, a), MinAvailable: "N/A",
			MaxUnavailable: "1", Allowed: 1, Current: 10, Desired: 9, Expected: 10})
	}
	s.Synced = true
	return s
}

// BenchmarkFrame is one frame: a new snapshot through Update, then View, at 1,000 nodes
// and 30,000 pods. Target: at most 16 ms.
func BenchmarkFrame(b *testing.B) {
	snap := bigSnapshot()
	m := New(newFake(), true)
	next, _ := m.Update(tea.WindowSizeMsg{Width: 160, Height: 50})
	m = next.(App)
	b.ReportAllocs()
	for b.Loop() {
		next, _ = m.Update(SnapshotMsg{Snapshot: snap})
		m = next.(App)
		_ = m.View()
	}
}

// BenchmarkKeyFrame is one key press (cursor down) and the frame after it.
func BenchmarkKeyFrame(b *testing.B) {
	m := New(newFake(), true)
	next, _ := m.Update(tea.WindowSizeMsg{Width: 160, Height: 50})
	next, _ = next.(App).Update(SnapshotMsg{Snapshot: bigSnapshot()})
	m = next.(App)
	b.ReportAllocs()
	for b.Loop() {
		next, _ = m.Update(press("down"))
		m = next.(App)
		_ = m.View()
	}
}

package grid

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

func TestLayout(t *testing.T) {
	cols := []Column{{Title: "NAME", Width: 10, Min: 4, Grow: true}, {Title: "STATUS", Width: 8, Min: 4},
		{Title: "VERSION", Width: 7, Optional: true}, {Title: "AGE", Width: 3, Optional: true}}
	tests := []struct {
		name   string
		width  int
		idx    []int
		widths []int
	}{
		{"everything fits and NAME grows", 40, []int{0, 1, 2, 3}, []int{16, 8, 7, 3}},
		{"exactly the preferred widths", 34, []int{0, 1, 2, 3}, []int{10, 8, 7, 3}},
		{"the last optional column goes first", 30, []int{0, 1, 2}, []int{11, 8, 7}},
		{"both optional columns go before anything is cut", 20, []int{0, 1}, []int{10, 8}},
		{"then columns are cut towards their minimum, the left ones keep the most", 14, []int{0, 1}, []int{8, 4}},
		{"narrower than the minimums: the line is cut when rendered", 5, []int{0, 1}, []int{4, 4}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			idx, widths := Layout(cols, tc.width)
			if !equal(idx, tc.idx) || !equal(widths, tc.widths) {
				t.Errorf("Layout(%d) = %v %v, want %v %v", tc.width, idx, widths, tc.idx, tc.widths)
			}
		})
	}
}

func TestFitGivesShortColumnsWidthToTheOthers(t *testing.T) {
	cols := []Column{{Title: "  NAME", Width: 13, Min: 8, Grow: true}, {Title: "STATUS", Width: 24, Min: 8},
		{Title: "PODS", Width: 4}, {Title: "BLOCKER", Width: 11, Min: 7, Grow: true}}
	tests := []struct {
		name   string
		rows   [][]string
		width  int
		widths []int
	}{
		{"short statuses: NAME and BLOCKER take STATUS's width", [][]string{{"  drain-k78wk-a", "Ready", "4", "-"}}, 50, []int{20, 6, 4, 14}},
		{"a long status keeps its preferred width", [][]string{{"  n", "Ready,SchedulingDisabled draining", "4", "-"}}, 60, []int{12, 24, 4, 14}},
		{"no rows: the titles", nil, 40, []int{11, 6, 4, 13}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, widths := Layout(Fit(cols, tc.rows), tc.width)
			if !equal(widths, tc.widths) {
				t.Errorf("widths %v, want %v", widths, tc.widths)
			}
		})
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestAnyOrderOfSizeAndRows is the bubbles table's panic turned into a property: rows
// with more or fewer cells than the columns shown, sizes shrinking and growing, the
// cursor past the end; every frame has exactly height lines no wider than width.
func TestAnyOrderOfSizeAndRows(t *testing.T) {
	m := New(Column{Title: "A", Width: 10, Grow: true}, Column{Title: "B", Width: 5, Optional: true}, Column{Title: "C", Width: 6, Min: 2})
	rows := [][]string{{"a1", "b1", "c1", "extra"}, {"a2"}, {}, {"a-very-long-cell-that-never-fits", "b", "c"}}
	for _, size := range [][2]int{{120, 30}, {80, 24}, {12, 2}, {1, 1}, {0, 5}, {40, 3}} {
		m.SetSize(size[0], size[1])
		m.SetRows(rows)
		m.SetCursor(99)
		m.SetSize(size[0], size[1])
		lines := strings.Split(m.View(), "\n")
		if len(lines) != max(size[1], 1) {
			t.Errorf("%dx%d: %d lines", size[0], size[1], len(lines))
		}
		for _, l := range lines {
			if w := ansi.StringWidth(l); w > max(size[0], 0) {
				t.Errorf("%dx%d: line %q is %d wide", size[0], size[1], l, w)
			}
		}
		if c := m.Cursor(); c != len(rows)-1 {
			t.Errorf("%dx%d: cursor %d, want the last row", size[0], size[1], c)
		}
	}
	m.SetRows(nil)
	if m.Cursor() != -1 {
		t.Errorf("cursor %d on an empty table, want -1", m.Cursor())
	}
}

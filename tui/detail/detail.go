package detail

import (
	"strings"

	"github.com/kubectl-maintenance/kubectl-maintenance/tui/data"
)

// Model is the open detail view: a stack of objects (Enter on a link pushes, Esc pops),
// the link under the cursor and the scroll of the current page.
type Model struct {
	stack         []frame
	width, height int
}

// frame is one page of the stack: its object, the cursor (an index into the page's
// lines, on a link when it has any) and the first line shown.
type frame struct {
	ref        data.Ref
	cur, first int
}

// Open starts the view on ref (it replaces any open stack).
func Open(ref data.Ref) Model { return Model{stack: []frame{{ref: ref, cur: -1}}} }

// Active reports whether the view is open.
func (m Model) Active() bool { return len(m.stack) > 0 }

// Ref is the object shown ("" Kind when closed).
func (m Model) Ref() data.Ref {
	if len(m.stack) == 0 {
		return data.Ref{}
	}
	return m.stack[len(m.stack)-1].ref
}

// SetSize fits the page.
func (m *Model) SetSize(w, h int) { m.width, m.height = w, max(h, 1) }

// Width is the width pages are rendered at.
func (m Model) Width() int { return m.width }

// Back pops the current page; the view closes after the first.
func (m *Model) Back() {
	if len(m.stack) > 0 {
		m.stack = m.stack[:len(m.stack)-1]
	}
}

// Key handles a key on page lines: up/down move between links (or scroll a page without
// any), pgup/pgdown scroll, enter opens the link under the cursor. It returns whether the
// object shown changed.
func (m *Model) Key(k string, lines []Line) bool {
	if len(m.stack) == 0 {
		return false
	}
	f := &m.stack[len(m.stack)-1]
	links := linkIndexes(lines)
	switch k {
	case "down", "j":
		if next := after(links, f.cur); next >= 0 {
			f.cur = next
		} else {
			f.first++
		}
	case "up", "k":
		if prev := before(links, f.cur); prev >= 0 {
			f.cur = prev
		} else {
			f.first--
		}
	case "pgdown", "space", "f":
		f.first += m.height - 1
	case "pgup", "b":
		f.first -= m.height - 1
	case "home", "g":
		f.first, f.cur = 0, -1
	case "enter":
		if f.cur >= 0 && f.cur < len(lines) && lines[f.cur].Link.Kind != "" {
			m.stack = append(m.stack, frame{ref: lines[f.cur].Link, cur: -1})
			return true
		}
	}
	m.keep(lines)
	return false
}

// keep bounds the scroll and keeps the cursor's line in sight.
func (m *Model) keep(lines []Line) {
	f := &m.stack[len(m.stack)-1]
	if f.cur >= 0 && f.cur < len(lines) {
		if f.cur < f.first {
			f.first = f.cur
		}
		if f.cur >= f.first+m.height {
			f.first = f.cur - m.height + 1
		}
	}
	f.first = max(0, min(f.first, len(lines)-m.height))
}

func linkIndexes(lines []Line) []int {
	var out []int
	for i, l := range lines {
		if l.Link.Kind != "" {
			out = append(out, i)
		}
	}
	return out
}

func after(idx []int, cur int) int {
	for _, i := range idx {
		if i > cur {
			return i
		}
	}
	return -1
}

func before(idx []int, cur int) int {
	for j := len(idx) - 1; j >= 0; j-- {
		if idx[j] < cur {
			return idx[j]
		}
	}
	return -1
}

// View renders the page's visible lines, the link under the cursor marked with "> ",
// other links with "  " (their text starts indented already).
func (m Model) View(lines []Line) string {
	if len(m.stack) == 0 {
		return ""
	}
	f := m.stack[len(m.stack)-1]
	first := max(0, min(f.first, len(lines)-m.height))
	var out []string
	for i := first; i < len(lines) && len(out) < m.height; i++ {
		t := lines[i].Text
		if i == f.cur {
			t = ">" + strings.TrimPrefix(t, " ")
		}
		out = append(out, t)
	}
	return strings.Join(out, "\n")
}

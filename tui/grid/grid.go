// Package grid is the dashboard's table: a header, rows of cells and a cursor, rendered to
// exactly the width and height it is given. It replaces bubbles' table, whose SetColumns
// redraws the old rows against the new columns (an index out of range when a resize drops
// a column). Here rows are kept whole and cut to the visible columns only while
// rendering, so no order of SetSize and SetRows can panic.
package grid

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// Column is one column: its title, the width it wants, and how it gives way when the
// screen is narrow.
type Column struct {
	Title string
	// Width is the column's preferred width in cells.
	Width int
	// Min is the narrowest the column may be cut to (0: Width, it is never cut).
	Min int
	// Optional columns are dropped, last first, when the required ones do not fit.
	Optional bool
	// Grow marks a column that takes spare width.
	Grow bool
}

// Model is a table with a cursor.
type Model struct {
	cols          []Column
	rows          [][]string
	cursor        int
	offset        int
	width, height int
	// Header and Selected style the header line and the cursor's row.
	Header, Selected lipgloss.Style
	keys             keyMap
}

type keyMap struct{ up, down, pageUp, pageDown, home, end key.Binding }

// New returns an empty table with cols, 80x10.
func New(cols ...Column) Model {
	return Model{cols: cols, width: 80, height: 10,
		Header: lipgloss.NewStyle().Bold(true), Selected: lipgloss.NewStyle().Reverse(true),
		keys: keyMap{
			up: key.NewBinding(key.WithKeys("up", "k")), down: key.NewBinding(key.WithKeys("down", "j")),
			pageUp: key.NewBinding(key.WithKeys("pgup")), pageDown: key.NewBinding(key.WithKeys("pgdown")),
			home: key.NewBinding(key.WithKeys("home", "g")), end: key.NewBinding(key.WithKeys("end", "G")),
		}}
}

// SetSize sets the width and height (the header line included). Any value is accepted.
func (m *Model) SetSize(width, height int) {
	m.width, m.height = max(width, 0), max(height, 1)
	m.clamp()
}

// SetColumns replaces the columns (rows, cursor and styles stay).
func (m *Model) SetColumns(cols ...Column) { m.cols = cols }

// SetRows replaces the rows. A row may have fewer or more cells than there are columns.
func (m *Model) SetRows(rows [][]string) {
	m.rows = rows
	m.clamp()
}

// Rows returns the number of rows.
func (m Model) Rows() int { return len(m.rows) }

// Cursor is the index of the row under the cursor (-1 when there are no rows).
func (m Model) Cursor() int {
	if len(m.rows) == 0 {
		return -1
	}
	return m.cursor
}

// SetCursor moves the cursor to row i (clamped).
func (m *Model) SetCursor(i int) {
	m.cursor = i
	m.clamp()
}

// visibleRows is how many rows fit under the header.
func (m Model) visibleRows() int { return max(m.height-1, 1) }

func (m *Model) clamp() {
	m.cursor = min(max(m.cursor, 0), max(len(m.rows)-1, 0))
	n := m.visibleRows()
	if m.cursor < m.offset {
		m.offset = m.cursor
	}
	if m.cursor >= m.offset+n {
		m.offset = m.cursor - n + 1
	}
	m.offset = min(max(m.offset, 0), max(len(m.rows)-n, 0))
}

// Update moves the cursor on up/down/page/home/end keys.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return m, nil
	}
	switch {
	case key.Matches(k, m.keys.up):
		m.cursor--
	case key.Matches(k, m.keys.down):
		m.cursor++
	case key.Matches(k, m.keys.pageUp):
		m.cursor -= m.visibleRows()
	case key.Matches(k, m.keys.pageDown):
		m.cursor += m.visibleRows()
	case key.Matches(k, m.keys.home):
		m.cursor = 0
	case key.Matches(k, m.keys.end):
		m.cursor = len(m.rows) - 1
	}
	m.clamp()
	return m, nil
}

// Layout returns the indexes and widths of the columns shown at width w: optional
// columns are dropped from the right until the rest fit at their preferred widths; if
// they still do not, columns are cut towards their minimum widths (the leftmost keep
// the most). Spare width goes to the Grow columns. Columns are separated by two spaces.
func Layout(cols []Column, w int) (idx, widths []int) {
	minOf := func(c Column) int {
		if c.Min > 0 && c.Min < c.Width {
			return c.Min
		}
		return c.Width
	}
	shown := make([]int, 0, len(cols))
	for i := range cols {
		shown = append(shown, i)
	}
	need := func(width func(Column) int) int {
		n := 2 * max(len(shown)-1, 0)
		for _, i := range shown {
			n += width(cols[i])
		}
		return n
	}
	preferred := func(c Column) int { return c.Width }
	for need(preferred) > w {
		drop := -1
		for j := len(shown) - 1; j >= 0; j-- {
			if cols[shown[j]].Optional {
				drop = j
				break
			}
		}
		if drop < 0 {
			break
		}
		shown = append(shown[:drop], shown[drop+1:]...)
	}
	widths = make([]int, len(shown))
	spare := w - need(minOf)
	for j, i := range shown {
		widths[j] = minOf(cols[i])
	}
	for j, i := range shown { // back towards the preferred widths
		if spare <= 0 {
			break
		}
		add := min(cols[i].Width-widths[j], spare)
		widths[j] += add
		spare -= add
	}
	var grow []int
	for j, i := range shown {
		if cols[i].Grow {
			grow = append(grow, j)
		}
	}
	for k, j := range grow {
		if spare <= 0 {
			break
		}
		add := spare / (len(grow) - k)
		widths[j] += add
		spare -= add
	}
	return shown, widths
}

// Fit returns the columns with each preferred width cut to its content (the title and
// the widest cell): a column whose cells are short gives its width to the others, so a
// node's name is not cut while STATUS keeps room for a status nobody has.
func Fit(cols []Column, rows [][]string) []Column {
	out := append([]Column(nil), cols...)
	for i := range out {
		want := ansi.StringWidth(out[i].Title)
		for _, r := range rows {
			if i < len(r) {
				want = max(want, ansi.StringWidth(r[i]))
			}
		}
		if want < out[i].Width {
			out[i].Width = want
			if out[i].Min > want {
				out[i].Min = 0
			}
		}
	}
	return out
}

// View renders exactly height lines, none wider than width.
func (m Model) View() string {
	idx, widths := Layout(Fit(m.cols, m.rows), m.width)
	line := func(cells func(i int) string) string {
		var b strings.Builder
		for j, i := range idx {
			if j > 0 {
				b.WriteString("  ")
			}
			b.WriteString(cell(cells(i), widths[j]))
		}
		return ansi.Truncate(strings.TrimRight(b.String(), " "), m.width, "…")
	}
	out := make([]string, 0, m.height)
	out = append(out, m.Header.Render(line(func(i int) string { return m.cols[i].Title })))
	end := min(m.offset+m.visibleRows(), len(m.rows))
	for r := m.offset; r < end; r++ {
		row := m.rows[r]
		l := line(func(i int) string {
			if i < len(row) {
				return row[i]
			}
			return ""
		})
		if r == m.cursor {
			l = m.Selected.Render(l + strings.Repeat(" ", max(0, m.width-ansi.StringWidth(l))))
		}
		out = append(out, l)
	}
	for len(out) < m.height {
		out = append(out, "")
	}
	return strings.Join(out[:m.height], "\n")
}

// cell pads or cuts s to w cells.
func cell(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if sw := ansi.StringWidth(s); sw > w {
		return ansi.Truncate(s, w, "…")
	} else if sw < w {
		return s + strings.Repeat(" ", w-sw)
	}
	return s
}

package tui

import (
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui/eventlog"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui/progress"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui/styles"
)

// ProgressApp is the progress view that drain and pool move show in a terminal: per-node
// bars and the last events, fed by the engine's event channel. It quits when the channel
// closes; Ctrl-C calls interrupt (the engine then stops and the channel closes).
type ProgressApp struct {
	events    <-chan event.Event
	interrupt func()
	progress  progress.Model
	log       eventlog.Model
	styles    styles.Styles
	width     int
	height    int
	stopping  bool
}

// NewProgressApp returns the progress view over events.
func NewProgressApp(events <-chan event.Event, interrupt func(), noColor bool) ProgressApp {
	p := progress.New()
	p.SetWidth(80)
	return ProgressApp{events: events, interrupt: interrupt, progress: p, log: eventlog.New(), styles: styles.New(noColor), width: 80, height: 24}
}

// Init starts reading events.
func (m ProgressApp) Init() tea.Cmd {
	return tea.Batch(waitEvent(0, m.events), m.progress.Tick(), tick())
}

// Update folds events in and quits when they end.
func (m ProgressApp) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.progress.SetWidth(msg.Width)
		m.log.SetSize(msg.Width, max(1, msg.Height/3))
	case EventMsg:
		m.progress.Apply(0, msg.Event)
		m.log.Add(msg.Event)
		return m, waitEvent(0, m.events)
	case ActionDoneMsg:
		return m, tea.Quit
	case tickMsg:
		return m, tick()
	case tea.KeyPressMsg:
		if msg.String() == "ctrl+c" && !m.stopping {
			m.stopping = true
			m.interrupt()
		}
	default:
		var cmd tea.Cmd
		m.progress, cmd = m.progress.Update(msg)
		return m, cmd
	}
	return m, nil
}

// View renders the bars, then the last events.
func (m ProgressApp) View() tea.View {
	var b strings.Builder
	b.WriteString(m.progress.View(time.Now()))
	b.WriteString("\n\n")
	lines := m.log.Lines()
	if n := max(1, m.height/3); len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	for i, l := range lines {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(m.styles.Faint.Render(l))
	}
	if m.stopping {
		b.WriteString("\n" + m.styles.Warn.Render("interrupted: finishing calls in flight..."))
	} else {
		b.WriteString("\n" + m.styles.Faint.Render("ctrl+c: stop (the nodes stay resumable)"))
	}
	return tea.NewView(fit(b.String(), strings.Count(b.String(), "\n")+1, m.width))
}

package tui

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/kubectl-maintenance/kubectl-maintenance/tui/confirm"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui/progress"
)

// openDialog starts a mutating action on the selection (or the node under the cursor):
// the dialog opens, and its plan is computed in the background.
func (a App) openDialog(k string) (tea.Model, tea.Cmd) {
	action := map[string]confirm.Action{"c": confirm.Cordon, "u": confirm.Uncordon, "d": confirm.Drain, "m": confirm.Move}[k]
	targets := a.targets()
	if len(targets) == 0 {
		a.status = "no node selected: select nodes with space on the Nodes view"
		return a, nil
	}
	if busy := a.busy(targets); len(busy) > 0 {
		a.status = fmt.Sprintf("%s already in an action (Progress view, x cancels it)", strings.Join(busy, ", "))
		return a, nil
	}
	if action == confirm.Move && len(a.snap.PoolNames) == 0 {
		a.status = "no NodePools: kubectl maintenance pool apply -f POOL.yaml"
		return a, nil
	}
	current := map[string][]string{}
	for _, n := range a.snap.Nodes {
		if slices.Contains(targets, n.Name) {
			current[n.Name] = n.Pools
		}
	}
	d := confirm.New(confirm.Request{Action: action, Nodes: targets, Options: confirm.DefaultOptions()}, a.snap.PoolNames, current)
	a.dialog = &d
	a.showHelp = false // the help would hide the dialog's question
	a.resize()
	return a, a.planCmd(d.Req)
}

// targets are the selected nodes, else the node under the cursor.
func (a App) targets() []string {
	var out []string
	for n := range a.selected {
		out = append(out, n)
	}
	sort.Strings(out)
	if len(out) == 0 && a.view == ViewNodes {
		if n := a.nodes.Current(); n != "" {
			out = []string{n}
		}
	}
	return out
}

func (a App) planCmd(req confirm.Request) tea.Cmd {
	b := a.backend
	return func() tea.Msg {
		text, err := b.Plan(req)
		return PlanMsg{Req: req, Text: text, Err: err}
	}
}

func (a App) dialogKey(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	before := a.dialog.Req
	d, _ := a.dialog.Update(msg)
	a.dialog = &d
	if !d.Done() {
		if !sameRequest(before, d.Req) {
			a.dialog.ResetPlan()
			return a, a.planCmd(d.Req)
		}
		return a, nil
	}
	a.dialog = nil
	if !d.Confirmed() {
		a.status = "cancelled"
		return a, nil
	}
	req := d.Req
	if busy := a.busy(req.Nodes); len(busy) > 0 { // started meanwhile from another dialog
		a.status = fmt.Sprintf("%s already in an action (Progress view, x cancels it)", strings.Join(busy, ", "))
		return a, nil
	}
	a.nextID++
	id := a.nextID
	a.runs[id] = &run{id: id, req: req}
	a.progress.Begin(id, string(req.Action), req.Nodes)
	a.selected = map[string]bool{}
	a.view = ViewProgress
	a.status = fmt.Sprintf("%s of %s started", req.Action, strings.Join(req.Nodes, ", "))
	a.refresh()
	b := a.backend
	return a, func() tea.Msg {
		ch, cancel, err := b.Start(req)
		return StartedMsg{ID: id, Events: ch, Cancel: cancel, Err: err}
	}
}

// busy lists the nodes of names that an action started from here still works on: a node
// is in at most one action at a time.
func (a App) busy(names []string) []string {
	var out []string
	for _, r := range a.runs {
		for _, n := range r.req.Nodes {
			if slices.Contains(names, n) {
				out = append(out, n)
			}
		}
	}
	sort.Strings(out)
	return out
}

func (a App) started(msg StartedMsg) (tea.Model, tea.Cmd) {
	r := a.runs[msg.ID]
	if r == nil {
		return a, nil
	}
	if msg.Err != nil {
		delete(a.runs, msg.ID)
		a.progress.End(msg.ID, a.now())
		a.status = fmt.Sprintf("%s: error: %s", r.req.Action, msg.Err.Error())
		return a.maybeQuit()
	}
	r.events, r.cancel = msg.Events, msg.Cancel
	if r.cancelled && r.cancel != nil { // cancelled before it had started
		r.cancel()
	}
	return a, waitEvent(r.id, r.events)
}

func (a App) actionDone(id int) (tea.Model, tea.Cmd) {
	r := a.runs[id]
	if r == nil {
		return a, nil
	}
	left := a.progress.Left(id)
	a.progress.End(id, a.now())
	delete(a.runs, id)
	switch {
	case r.cancelled && len(left) > 0:
		a.left = append(a.left, a.describeLeft(r.req, left))
		a.status = fmt.Sprintf("%s of %s stopped", r.req.Action, strings.Join(r.req.Nodes, ", "))
	case r.failed != "":
		a.status = fmt.Sprintf("%s of %s failed: %s", r.req.Action, strings.Join(r.req.Nodes, ", "), r.failed)
	case len(r.failedNodes) > 0:
		first := slices.Sorted(maps.Keys(r.failedNodes))[0]
		a.status = fmt.Sprintf("%s of %s: %d of %d node(s) failed (node %s: %s)", r.req.Action, strings.Join(r.req.Nodes, ", "),
			len(r.failedNodes), len(r.req.Nodes), first, r.failedNodes[first])
	default:
		a.status = fmt.Sprintf("%s of %s finished", r.req.Action, strings.Join(r.req.Nodes, ", "))
	}
	return a.maybeQuit()
}

// maybeQuit ends the program once every action stopped after a quit.
func (a App) maybeQuit() (tea.Model, tea.Cmd) {
	if a.stopping && len(a.runs) == 0 {
		return a, tea.Quit
	}
	return a, nil
}

// cancelCurrent cancels the action of the node under the Progress view's cursor.
func (a App) cancelCurrent() (tea.Model, tea.Cmd) {
	n, ok := a.progress.Current()
	r := a.runs[n.ID]
	if !ok || r == nil {
		a.status = "nothing to cancel: the node under the cursor is in no running action"
		return a, nil
	}
	a.cancelRun(r)
	a.status = fmt.Sprintf("cancelling %s of %s...", r.req.Action, strings.Join(r.req.Nodes, ", "))
	return a, nil
}

func (a *App) cancelRun(r *run) {
	r.cancelled = true
	a.progress.Stopping(r.id)
	if r.cancel != nil {
		r.cancel()
	}
}

// stopAll cancels every action and quits once they have stopped.
func (a App) stopAll() (tea.Model, tea.Cmd) {
	a.quitting, a.stopping = false, true
	a.interrupted = len(a.runs) > 0
	for _, r := range a.runs {
		a.cancelRun(r)
	}
	a.status = "stopping every action..."
	return a.maybeQuit()
}

// Interrupted reports whether quitting stopped work that was running (the command then
// exits 130).
func (a App) Interrupted() bool { return a.interrupted || len(a.runs) > 0 }

// Stopped says, after the program ended, what work a quit or a cancel left unfinished:
// one line per stopped action with the command that finishes it. Empty when nothing was
// left (the command then exits 0).
func (a App) Stopped() []string {
	out := append([]string(nil), a.left...)
	for _, r := range a.runs { // a second ctrl+c did not wait for these
		out = append(out, a.describeLeft(r.req, a.progress.Left(r.id)))
	}
	sort.Strings(out)
	return slices.Compact(out) // a node stopped twice the same way is said once
}

// describeLeft names the nodes an action left and how to finish or undo its work: whole
// commands, with the cluster flags the dashboard was started with and the dialog's
// options, that work as printed.
func (a App) describeLeft(req confirm.Request, left []progress.Node) string {
	names := make([]string, 0, len(left))
	for _, n := range left {
		names = append(names, n.Name)
	}
	if len(names) == 0 {
		names = req.Nodes
	}
	list := strings.Join(names, " ")
	cmd := func(args ...string) string {
		words := append(append([]string{"kubectl maintenance"}, args...), a.clusterFlags...)
		return "`" + strings.Join(words, " ") + "`"
	}
	opts := req.Options.Flags()
	switch req.Action {
	case confirm.Drain:
		return fmt.Sprintf("drain stopped on %s (cordoned, not empty): finish with %s, or undo with %s", list,
			cmd(append(append([]string{"drain"}, names...), opts...)...), cmd(append([]string{"uncordon"}, names...)...))
	case confirm.Move:
		return fmt.Sprintf("move to pool %s stopped on %s: finish with %s", req.Pool, list,
			cmd(append(append(append([]string{"pool", "move"}, names...), "--to", req.Pool), opts...)...))
	}
	return fmt.Sprintf("%s stopped on %s: finish with %s", req.Action, list, cmd(append([]string{string(req.Action)}, names...)...))
}

// forward sends navigation keys to the current view.
func (a App) forward(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmd tea.Cmd
	switch a.view {
	case ViewNodes:
		a.nodes, cmd = a.nodes.Update(msg)
	case ViewPools:
		a.pools, cmd = a.pools.Update(msg)
	case ViewPDBs:
		a.pdbs, cmd = a.pdbs.Update(msg)
	case ViewProgress:
		a.progress, cmd = a.progress.Update(msg)
	case ViewEvents:
		a.events, cmd = a.events.Update(msg)
	}
	return a, cmd
}

// refresh puts the snapshot, selection and filter into the tables.
func (a *App) refresh() {
	f := a.filter.Value()
	a.nodes.SetRows(a.snap.Nodes, a.selected, f)
	a.pools.SetRows(a.snap.Pools)
	a.pdbs.SetRows(a.snap.PDBs, f)
	a.progress.SetMaintenances(a.snap.Maintenances)
}

// resize fits every component between the header (tabs) and the footer (status, help).
func (a *App) resize() {
	body := a.bodyHeight()
	a.nodes.SetSize(a.width, body)
	a.pools.SetSize(a.width, body)
	a.pdbs.SetSize(a.width, body)
	a.events.SetSize(a.width, body)
	a.progress.SetSize(a.width, body)
	a.detail.SetSize(a.width, body)
	a.help.SetWidth(a.width)
	if a.dialog != nil {
		w, h := a.dialogSize()
		a.dialog.SetSize(w, h)
	}
}

// dialogSize is the room inside the dialog's frame.
func (a App) dialogSize() (w, h int) {
	return max(10, a.width-a.styles.Dialog.GetHorizontalFrameSize()), max(1, a.bodyHeight()-a.styles.Dialog.GetVerticalFrameSize())
}

// bodyHeight is what is left for the view: the header is 2 lines, the footer the status
// line and the help.
func (a App) bodyHeight() int {
	return max(1, a.height-2-1-a.helpHeight())
}

// quitQuestion asks before stopping the running actions, in at most h lines of w
// columns: the list of actions gives way, never the question.
func (a App) quitQuestion(w, h int) string {
	ids := make([]int, 0, len(a.runs))
	for id := range a.runs {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	var list []string
	for _, id := range ids {
		r := a.runs[id]
		list = append(list, fmt.Sprintf("  %s %s", r.req.Action, strings.Join(r.req.Nodes, ", ")))
	}
	head := fmt.Sprintf("%d action(s) running:", len(a.runs))
	question := strings.Split(ansi.Wrap("Stop them and quit? The nodes keep their state; the command printed on exit finishes the job.", w, ""), "\n")
	answer := "[y] stop and quit  [n] keep running"
	room := h - len(question) - 4 // the head, two blank lines and the answer
	if room < len(list) {
		n := max(room-1, 0)
		list = append(list[:n], fmt.Sprintf("  ... and %d more (Progress view)", len(list)-n))
		if room <= 0 {
			list = nil
		}
	}
	lines := append(append([]string{head}, list...), "")
	lines = append(append(lines, question...), "", answer)
	if len(lines) > h { // a tiny terminal: the question and the answer first
		lines = append(question, answer)
		if len(lines) > h {
			lines = lines[len(lines)-h:]
		}
	}
	return strings.Join(lines, "\n")
}

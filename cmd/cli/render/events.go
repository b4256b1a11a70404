package render

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/outcome"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

// ExitInterrupted is the exit code of a run interrupted by Ctrl-C or SIGTERM (cmd/cli's
// ExitInterrupted): its summary says how to finish or undo it.
const ExitInterrupted = outcome.CodeInterrupted

// Printer turns the operations layer's events into output.
type Printer interface {
	// Event prints one event.
	Event(ev event.Event)
	// Summary prints the end of the run: counts, and the exit code the run ends with.
	Summary(sum drain.Summary, err error, code int)
}

// Human prints kubectl drain's lines: results on Out, warnings, waits and retries on
// ErrOut, each naming the PDB and its numbers. A routine drain prints kubectl's two lines
// per pod, one line per node state change and one per wait change; the plan's headline,
// the summary and eviction retries only when they tell something (a pod that can never
// go, a dry run, a run that did not succeed) or with Verbose.
type Human struct {
	Out, ErrOut io.Writer
	// Verbose (-v 1 or more) prints the plan's headline, retries and the summary always.
	Verbose bool
	// dry is set once an event of a dry run is seen.
	dry bool
	// remedies are the remedies already said, by budget (or pod) and text: each is said
	// once per run (the NDJSON stream carries it on every event).
	remedies map[string]bool
	eta      etaTally // the plans' ETAs, for the summary (eta.go)
}

// DryRunSuffix is what a line of a dry run ends with: " (dry run)" for "client",
// " (server dry run)" for "server", "" otherwise.
func DryRunSuffix(mode string) string {
	switch mode {
	case "client":
		return " (dry run)"
	case "server":
		return " (server dry run)"
	}
	return ""
}

// Event prints one event as kubectl drain's line (or none).
func (p *Human) Event(ev event.Event) {
	sfx := DryRunSuffix(ev.DryRun)
	p.dry = p.dry || ev.DryRun != ""
	if p.forceEvent(ev) { // dead nodes and force (force.go)
		return
	}
	switch ev.Type {
	case event.EventPlan:
		if p.Verbose || p.dry || len(ev.Plan.Blocked()) > 0 {
			fmt.Fprintln(p.ErrOut, PlanHeadline(ev.Plan))
		}
		fmt.Fprintln(p.ErrOut, etaLine(ev.Plan)) // one line: how long it should take (issue 24)
		if p.dry {
			dryRunOrder(p.ErrOut, ev.Plan) // each node's drain order (order.go)
		}
		p.eta.add(ev.Plan)
	case event.EventWarning:
		fmt.Fprintf(p.ErrOut, "Warning: %s\n", ev.Message)
	case event.EventNodeCordoned:
		if ev.Already {
			fmt.Fprintf(p.Out, "node/%s already cordoned%s\n", ev.Node, sfx)
		} else {
			fmt.Fprintf(p.Out, "node/%s cordoned%s\n", ev.Node, sfx)
		}
	case event.EventEvictionStarted:
		if ev.Attempt > 1 {
			if p.Verbose { // the wait line before it said why; kubectl says a pod once
				fmt.Fprintf(p.Out, "evicting pod %s (attempt %d)%s\n", ev.Pod, ev.Attempt, sfx)
			}
		} else {
			fmt.Fprintf(p.Out, "evicting pod %s%s\n", ev.Pod, sfx)
		}
	case event.EventEvictionBlocked:
		fmt.Fprintln(p.ErrOut, blockedLine(ev)+p.causeLines(ev))
	case event.EventPodEvicted:
		fmt.Fprintf(p.Out, "pod/%s evicted%s\n", PodName(ev.Pod), sfx)
	case event.EventNodeDrained:
		fmt.Fprintf(p.Out, "node/%s drained%s\n", ev.Node, sfx)
	case event.EventNodeFailed:
		fmt.Fprintf(p.ErrOut, "error: unable to drain node %q: %s\n", ev.Node, ev.Message)
	case event.EventPoolBatch:
		fmt.Fprintf(p.ErrOut, "batch: %s\n", ev.Message)
	case event.EventNodeBlocked:
		if ev.DryRun != "" {
			fmt.Fprintf(p.Out, "node/%s blocked%s: %s\n", ev.Node, sfx, ev.Message)
			break
		}
		fmt.Fprintf(p.Out, "node/%s given up, left cordoned in state blocked: %s\n", ev.Node, ev.Message)
	case event.EventNodeNotStarted:
		fmt.Fprintf(p.ErrOut, "node/%s %s\n", ev.Node, ev.Message)
	case event.EventNodeWaiting:
		fmt.Fprintln(p.ErrOut, ev.Message)
	case event.EventSurgeStarted, event.EventDeploymentRestored:
		fmt.Fprintln(p.Out, ev.Message+sfx)
	case event.EventSurgeReady:
		fmt.Fprintln(p.ErrOut, ev.Message+sfx)
	case event.EventNodeMoved:
		fmt.Fprintf(p.Out, "node/%s moved to pool %s\n", ev.Node, ev.Message)
	case event.EventNodeUncordoned:
		if ev.Message != "" {
			fmt.Fprintf(p.Out, "node/%s %s\n", ev.Node, ev.Message)
		} else {
			fmt.Fprintf(p.Out, "node/%s uncordoned\n", ev.Node)
		}
	}
}

// blockedLine explains a wait: who waits, on which budget, with its numbers, and until when.
func blockedLine(ev event.Event) string {
	sfx := DryRunSuffix(ev.DryRun)
	switch ev.Reason {
	case string(pdb.Never), string(pdb.Multiple):
		return fmt.Sprintf("pod %s is blocked: %s; waiting for the budget to change%s", ev.Pod, ev.Message, sfx)
	case string(pdb.Exhausted), string(pdb.Stale), "DisruptionBudget":
		when := "retrying when its status changes"
		if ev.RetryAfter > 0 {
			when = fmt.Sprintf("retrying when its status changes, not before %s", roughly(ev.RetryAfter))
		}
		return fmt.Sprintf("pod %s waits for pdb %s: %s; %s%s", ev.Pod, ev.PDB, strings.TrimPrefix(ev.Message, "pdb "+ev.PDB+" "), when, sfx)
	case "DryRunRefused":
		return fmt.Sprintf("pod %s would be refused: %s%s", ev.Pod, ev.Message, sfx)
	case drain.ReasonOrderGroup: // drain order groups
		return fmt.Sprintf("pod %s %s%s", ev.Pod, ev.Message, sfx)
	case drain.ReasonDoNotDisrupt, drain.ReasonWaitCompleted:
		return fmt.Sprintf("node %s waits for pod %s%s%s", ev.Node, ev.Pod, waitedFor(ev), sfx)
	}
	return fmt.Sprintf("error when evicting pod %s (will retry after %s): %s%s", ev.Pod, roughly(ev.RetryAfter), ev.Message, sfx)
}

// PodName is the name part of a namespace/name key.
func PodName(key string) string {
	if i := strings.IndexByte(key, '/'); i >= 0 {
		return key[i+1:]
	}
	return key
}

// PlanHeadline sums up a plan in one line.
func PlanHeadline(p *event.Plan) string {
	pods, blocked := 0, 0
	for _, n := range p.Nodes {
		pods += len(n.Steps)
		for _, s := range n.Steps {
			if s.Wave == 0 {
				blocked++
			}
		}
	}
	s := fmt.Sprintf("plan: %d node(s), %d pod(s) to evict in %d wave(s)", len(p.Nodes), pods, p.Waves)
	if blocked > 0 {
		s += fmt.Sprintf("; %d pod(s) can never go as things stand", blocked)
	}
	return s
}

// Summary prints the nodes not finished and those the policy gave up or did not start,
// then, when the run did not succeed, was a dry run or Verbose is set, the counts and the
// ETA against the time taken.
func (p *Human) Summary(sum drain.Summary, err error, code int) {
	// Every node not finished: the ones waiting on blocked pods and, in a rolling drain,
	// the ones not started yet (kubectl's heading).
	var pending []string
	for _, b := range sum.PendingBlocks {
		if !slices.Contains(pending, b.Node) {
			pending = append(pending, b.Node)
		}
	}
	for _, n := range sum.PendingNodes {
		if !slices.Contains(pending, n) {
			pending = append(pending, n)
		}
	}
	if len(pending) > 0 {
		fmt.Fprintln(p.ErrOut, "There are pending nodes to be drained:")
		for _, n := range pending {
			fmt.Fprintf(p.ErrOut, " %s\n", n)
		}
	}
	policySummary(p.ErrOut, sum)
	if code == 0 && !p.Verbose && !p.dry {
		return // kubectl's lines said it all
	}
	fmt.Fprintf(p.ErrOut, "summary: %d node(s) drained, %d failed, %d pending; %d pod(s) evicted, %d left%s; %d eviction request(s), %d refused; %s\n",
		sum.NodesDrained, sum.NodesFailed, sum.NodesPending, sum.PodsEvicted, sum.PodsPending, leftOn(sum.LeftOn), sum.Evictions, sum.Refusals, sum.Elapsed.Round(time.Millisecond))
	if l := p.eta.line(sum.Elapsed); l != "" {
		fmt.Fprintln(p.ErrOut, l)
	}
	if code == ExitInterrupted {
		fmt.Fprintln(p.ErrOut, "interrupted: the nodes keep their state; run the same command again to finish, or `kubectl maintenance uncordon` to undo the cordon")
	}
}

// leftOn is " (n1: 2, n2: 1)": the pods left, by node in name order ("" when none).
func leftOn(left map[string]int) string {
	if len(left) == 0 {
		return ""
	}
	nodes := make([]string, 0, len(left))
	for n := range left {
		nodes = append(nodes, n)
	}
	slices.Sort(nodes)
	parts := make([]string, len(nodes))
	for i, n := range nodes {
		parts[i] = fmt.Sprintf("%s: %d", n, left[n])
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// policySummary lists, before the summary line, the nodes given up by
// --on-blocked=skip (each pod left and what blocks it) and the nodes not started.
func policySummary(w io.Writer, sum drain.Summary) {
	forceSummary(w, sum) // dead nodes and force (force.go)
	if len(sum.Skipped) > 0 {
		fmt.Fprintln(w, "Skipped nodes (blocked; left cordoned, state blocked):")
		for _, n := range sum.Skipped {
			fmt.Fprintf(w, " %s: %s\n", n.Node, n.Reason)
			for _, b := range n.Blockers {
				fmt.Fprintf(w, "   pod %s: %s\n", b.Pod, b.Message)
			}
		}
	}
	if len(sum.NotStarted) > 0 {
		fmt.Fprintln(w, "Nodes not started:")
		for _, n := range sum.NotStarted {
			fmt.Fprintf(w, " %s\n", n)
		}
	}
}

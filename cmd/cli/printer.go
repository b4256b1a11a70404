package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

// EventPrinter turns the engine's events into output.
type EventPrinter interface {
	// Event prints one event.
	Event(ev event.Event)
	// Summary prints the end of the run: counts, and the exit code the run ends with.
	Summary(sum drain.Summary, err error, code int)
}

// humanPrinter prints kubectl drain's lines: results on stdout, warnings, waits and
// retries on stderr, each naming the PDB and its numbers. A routine drain prints
// kubectl's two lines per pod, one line per node state change and one per wait change;
// the plan's headline, the summary and eviction retries only when they tell something
// (a pod that can never go, a dry run, a run that did not succeed) or with -v.
type humanPrinter struct {
	out, errOut io.Writer
	// verbose (-v 1 or more) prints the plan's headline, retries and the summary always.
	verbose bool
	// dry is set once an event of a dry run is seen.
	dry bool
	// remedies are the remedies already said, by budget (or pod) and text: each is said
	// once per run (the NDJSON stream carries it on every event).
	remedies map[string]bool
	eta      etaTally // the plans' ETAs, for the summary (eta.go)
}

func dryRunSuffix(mode string) string {
	switch mode {
	case "client":
		return " (dry run)"
	case "server":
		return " (server dry run)"
	}
	return ""
}

func (p *humanPrinter) Event(ev event.Event) {
	sfx := dryRunSuffix(ev.DryRun)
	p.dry = p.dry || ev.DryRun != ""
	switch ev.Type {
	case event.EventPlan:
		if p.verbose || p.dry || len(ev.Plan.Blocked()) > 0 {
			fmt.Fprintln(p.errOut, planHeadline(ev.Plan))
		}
		fmt.Fprintln(p.errOut, etaLine(ev.Plan)) // one line: how long it should take (issue 24)
		p.eta.add(ev.Plan)
	case event.EventWarning:
		fmt.Fprintf(p.errOut, "Warning: %s\n", ev.Message)
	case event.EventNodeCordoned:
		if ev.Already {
			fmt.Fprintf(p.out, "node/%s already cordoned%s\n", ev.Node, sfx)
		} else {
			fmt.Fprintf(p.out, "node/%s cordoned%s\n", ev.Node, sfx)
		}
	case event.EventEvictionStarted:
		if ev.Attempt > 1 {
			if p.verbose { // the wait line before it said why; kubectl says a pod once
				fmt.Fprintf(p.out, "evicting pod %s (attempt %d)%s\n", ev.Pod, ev.Attempt, sfx)
			}
		} else {
			fmt.Fprintf(p.out, "evicting pod %s%s\n", ev.Pod, sfx)
		}
	case event.EventEvictionBlocked:
		fmt.Fprintln(p.errOut, blockedLine(ev)+p.causeLines(ev))
	case event.EventPodEvicted:
		fmt.Fprintf(p.out, "pod/%s evicted%s\n", podName(ev.Pod), sfx)
	case event.EventNodeDrained:
		fmt.Fprintf(p.out, "node/%s drained%s\n", ev.Node, sfx)
	case event.EventNodeFailed:
		fmt.Fprintf(p.errOut, "error: unable to drain node %q: %s\n", ev.Node, ev.Message)
	case event.EventPoolBatch:
		fmt.Fprintf(p.errOut, "batch: %s\n", ev.Message)
	case event.EventNodeBlocked:
		fmt.Fprintf(p.out, "node/%s given up, left cordoned in state blocked: %s\n", ev.Node, ev.Message)
	case event.EventNodeNotStarted:
		fmt.Fprintf(p.errOut, "node/%s %s\n", ev.Node, ev.Message)
	case event.EventSurgeStarted, event.EventDeploymentRestored:
		fmt.Fprintln(p.out, ev.Message+sfx)
	case event.EventSurgeReady:
		fmt.Fprintln(p.errOut, ev.Message+sfx)
	case event.EventNodeMoved:
		fmt.Fprintf(p.out, "node/%s moved to pool %s\n", ev.Node, ev.Message)
	case event.EventNodeUncordoned:
		if ev.Message != "" {
			fmt.Fprintf(p.out, "node/%s %s\n", ev.Node, ev.Message)
		} else {
			fmt.Fprintf(p.out, "node/%s uncordoned\n", ev.Node)
		}
	}
}

// blockedLine explains a wait: who waits, on which budget, with its numbers, and until when.
func blockedLine(ev event.Event) string {
	sfx := dryRunSuffix(ev.DryRun)
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
	case drain.ReasonDoNotDisrupt, drain.ReasonWaitCompleted:
		return fmt.Sprintf("node %s waits for pod %s%s%s", ev.Node, ev.Pod, waitedFor(ev), sfx)
	}
	return fmt.Sprintf("error when evicting pod %s (will retry after %s): %s%s", ev.Pod, roughly(ev.RetryAfter), ev.Message, sfx)
}

func podName(key string) string {
	if i := strings.IndexByte(key, '/'); i >= 0 {
		return key[i+1:]
	}
	return key
}

// planHeadline sums up a plan in one line.
func planHeadline(p *event.Plan) string {
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

func (p *humanPrinter) Summary(sum drain.Summary, err error, code int) {
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
		fmt.Fprintln(p.errOut, "There are pending nodes to be drained:")
		for _, n := range pending {
			fmt.Fprintf(p.errOut, " %s\n", n)
		}
	}
	printPolicySummary(p.errOut, sum)
	if code == 0 && !p.verbose && !p.dry {
		return // kubectl's lines said it all
	}
	fmt.Fprintf(p.errOut, "summary: %d node(s) drained, %d failed, %d pending; %d pod(s) evicted, %d left; %d eviction request(s), %d refused; %s\n",
		sum.NodesDrained, sum.NodesFailed, sum.NodesPending, sum.PodsEvicted, sum.PodsPending, sum.Evictions, sum.Refusals, sum.Elapsed.Round(time.Millisecond))
	if l := p.eta.line(sum.Elapsed); l != "" {
		fmt.Fprintln(p.errOut, l)
	}
	if code == ExitInterrupted {
		fmt.Fprintln(p.errOut, "interrupted: the nodes keep their state; run the same command again to finish, or `kubectl maintenance uncordon` to undo the cordon")
	}
}

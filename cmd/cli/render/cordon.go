package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/operation"
)

// Cordon prints kubectl's cordon and uncordon lines on Out (and an uncordon's restore of
// what a --surge drain left); failures are the command's error (one line), so its
// Summary prints nothing.
type Cordon struct{ Out io.Writer }

// Event prints the line of a cordon, an uncordon or a restore.
func (p Cordon) Event(ev event.Event) {
	sfx := DryRunSuffix(ev.DryRun)
	switch ev.Type {
	case event.EventNodeCordoned:
		if ev.Already {
			fmt.Fprintf(p.Out, "node/%s already cordoned%s\n", ev.Node, sfx)
		} else {
			fmt.Fprintf(p.Out, "node/%s cordoned%s\n", ev.Node, sfx)
		}
	case event.EventDeploymentRestored: // an uncordon restores what a --surge drain left
		fmt.Fprintf(p.Out, "deployment.apps/%s %s%s\n", PodName(ev.Deployment), ev.Message, sfx)
	case event.EventPodEvicted:
		fmt.Fprintf(p.Out, "pod/%s evicted (%s)\n", PodName(ev.Pod), ev.Message)
	case event.EventNodeUncordoned:
		switch ev.Reason {
		case operation.ReasonAlreadySchedulable:
			fmt.Fprintf(p.Out, "node/%s already uncordoned%s\n", ev.Node, sfx)
		case operation.ReasonLeftCordoned:
			why := strings.TrimPrefix(ev.Message, "left cordoned: ")
			fmt.Fprintf(p.Out, "node/%s left cordoned%s: %s (use --force to uncordon it anyway)\n", ev.Node, sfx, why)
		default:
			fmt.Fprintf(p.Out, "node/%s uncordoned%s\n", ev.Node, sfx)
		}
	}
}

// Summary prints nothing: a cordon's failures are its error.
func (Cordon) Summary(drain.Summary, error, int) {}

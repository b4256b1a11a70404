package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/operation"
)

// The --surge events: the human printer's lines (stdout for what changed, stderr for the
// wait) and the NDJSON fields.
func TestSurgeEventsAreRendered(t *testing.T) {
	at := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		ev             event.Event
		stdout, stderr string
	}{
		{event.Event{Type: event.EventSurgeStarted, Node: "n1", Pod: "shop/web-1", Deployment: "shop/web",
			Message: "deployment shop/web scaled from 1 to 2 replicas to move pod shop/web-1"},
			"deployment shop/web scaled from 1 to 2 replicas to move pod shop/web-1\n", ""},
		{event.Event{Type: event.EventSurgeReady, Node: "n1", Pod: "shop/web-1", Deployment: "shop/web",
			Message: "pod shop/web-2 of deployment shop/web is Ready on node n2; evicting pod shop/web-1"},
			"", "pod shop/web-2 of deployment shop/web is Ready on node n2; evicting pod shop/web-1\n"},
		{event.Event{Type: event.EventDeploymentRestored, Node: "n1", Pod: "shop/web-1", Deployment: "shop/web", Reason: "Resumed",
			Message: "deployment shop/web restored from 2 to 1 replicas"},
			"deployment shop/web restored from 2 to 1 replicas\n", ""},
	} {
		t.Run(string(tc.ev.Type), func(t *testing.T) {
			var out, errOut bytes.Buffer
			(&humanPrinter{out: &out, errOut: &errOut}).Event(tc.ev)
			if out.String() != tc.stdout || errOut.String() != tc.stderr {
				t.Errorf("human: stdout %q, stderr %q; want %q, %q", out.String(), errOut.String(), tc.stdout, tc.stderr)
			}
			var js bytes.Buffer
			tc.ev.Time = at
			newNDJSONPrinter(&js, func() time.Time { return at }, func() int64 { return 0 }).Event(tc.ev)
			lines := strings.Split(strings.TrimSpace(js.String()), "\n")
			var got map[string]any
			if err := json.Unmarshal([]byte(lines[len(lines)-1]), &got); err != nil {
				t.Fatal(err)
			}
			for k, want := range map[string]any{"type": string(tc.ev.Type), "level": "info", "deployment": "shop/web",
				"pod": "shop/web-1", "node": "n1", "message": tc.ev.Message} {
				if got[k] != want {
					t.Errorf("ndjson %s = %v, want %v", k, got[k], want)
				}
			}
			if tc.ev.Reason != "" && got["reason"] != tc.ev.Reason {
				t.Errorf("ndjson reason = %v, want %s", got["reason"], tc.ev.Reason)
			}
		})
	}
}

// --surge is a flag of drain and plan (and of the pool drains and moves, which take
// drain's flags), off by default, and asks the operations layer to surge only when given.
func TestSurgeFlag(t *testing.T) {
	c := &Common{}
	for _, cmd := range []*cobra.Command{NewCmdDrain(c), NewCmdPlan(c), NewCmdPoolMove(c), newCmdPoolSync(c)} {
		f := cmd.Flags().Lookup("surge")
		if f == nil || f.DefValue != "false" {
			t.Errorf("%s: --surge %v, want a flag defaulting to false", cmd.Name(), f)
		}
	}
	o := NewDrainOptions(c)
	if o.request(operation.Drain).Surge {
		t.Errorf("without --surge the request surges (it should only resume surges)")
	}
	o.Surge = true
	if !o.request(operation.Drain).Surge {
		t.Errorf("with --surge the request does not surge")
	}
}

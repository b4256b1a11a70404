package render

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

func TestWaitLineRendersCauseRemedyAndWaited(t *testing.T) {
	cases := []struct {
		name string
		ev   event.Event
		want string
	}{
		{"first wait with a cause",
			event.Event{Type: event.EventEvictionBlocked, Pod: "ns/a", PDB: "ns/web", Reason: string(pdb.Exhausted),
				Message: "pdb ns/web needs 1 healthy pods, has 1, allows 0", Cause: "pdb ns/web ...: its replacement pod is not Ready: ns/b is unschedulable: 0/3 nodes are available", Remedy: "uncordon a node"},
			"pod ns/a waits for pdb ns/web: needs 1 healthy pods, has 1, allows 0; retrying when its status changes; cause: pdb ns/web ...: its replacement pod is not Ready: ns/b is unschedulable: 0/3 nodes are available\n  remedy: uncordon a node"},
		{"said again",
			event.Event{Type: event.EventEvictionBlocked, Pod: "ns/a", PDB: "ns/web", Reason: string(pdb.Never),
				Message: "pdb ns/web has maxUnavailable 0: it never allows a disruption", Cause: "pdb ns/web has maxUnavailable 0: it never allows a disruption", Remedy: "relax pdb ns/web", Waited: 90 * time.Second},
			"pod ns/a is blocked: pdb ns/web has maxUnavailable 0: it never allows a disruption; waiting for the budget to change (waiting for 1m30s)\n  remedy: relax pdb ns/web"},
		{"a pod a rule holds",
			event.Event{Type: event.EventEvictionBlocked, Node: "n1", Pod: "ns/job", Reason: drain.ReasonWaitCompleted, Cause: "pod ns/job is labelled ...", Remedy: "wait", Waited: 30 * time.Second},
			"node n1 waits for pod ns/job (waiting for 30s); cause: pod ns/job is labelled ...\n  remedy: wait"},
		{"the drain's own evictions in flight: no cause, no remedy, the reservation named, the retry rounded",
			event.Event{Type: event.EventEvictionBlocked, Pod: "ns/a", PDB: "ns/web", Reason: string(pdb.Exhausted), RetryAfter: 446415191 * time.Nanosecond, Routine: true,
				Message: "pdb ns/web needs 5 healthy pods, has 6, allows 0: 1 taken by this drain's evictions in flight", Cause: "pdb ns/web needs 5 healthy pods, has 6, allows 0", Remedy: "wait"},
			"pod ns/a waits for pdb ns/web: needs 5 healthy pods, has 6, allows 0: 1 taken by this drain's evictions in flight; retrying when its status changes, not before 0.4s"},
		{"no cause: as before",
			event.Event{Type: event.EventEvictionBlocked, Pod: "ns/a", Reason: "Error", Message: "boom", RetryAfter: time.Second},
			"error when evicting pod ns/a (will retry after 1.0s): boom"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var errOut bytes.Buffer
			(&Human{Out: &bytes.Buffer{}, ErrOut: &errOut}).Event(c.ev)
			if got := strings.TrimSuffix(errOut.String(), "\n"); got != c.want {
				t.Errorf("got\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}

func TestRemedyIsSaidOncePerBudget(t *testing.T) {
	var errOut bytes.Buffer
	p := &Human{Out: &bytes.Buffer{}, ErrOut: &errOut}
	wait := func(pod, budget, remedy string) event.Event {
		return event.Event{Type: event.EventEvictionBlocked, Pod: pod, PDB: budget, Reason: string(pdb.Never),
			Message: "pdb " + budget + " has maxUnavailable 0: it never allows a disruption", Remedy: remedy}
	}
	p.Event(wait("ns/a", "ns/web", "relax pdb ns/web"))
	p.Event(wait("ns/b", "ns/web", "relax pdb ns/web"))
	p.Event(wait("ns/c", "ns/db", "relax pdb ns/db"))
	p.Event(wait("ns/d", "ns/web", "scale ns/web up"))
	want := []string{
		"pod ns/a is blocked: pdb ns/web has maxUnavailable 0: it never allows a disruption; waiting for the budget to change",
		"  remedy: relax pdb ns/web",
		"pod ns/b is blocked: pdb ns/web has maxUnavailable 0: it never allows a disruption; waiting for the budget to change",
		"pod ns/c is blocked: pdb ns/db has maxUnavailable 0: it never allows a disruption; waiting for the budget to change",
		"  remedy: relax pdb ns/db",
		"pod ns/d is blocked: pdb ns/web has maxUnavailable 0: it never allows a disruption; waiting for the budget to change",
		"  remedy: scale ns/web up",
	}
	if got := strings.TrimSuffix(errOut.String(), "\n"); got != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
}

func TestDurationsAreRounded(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", 446415191 * time.Nanosecond: "0.4s", 20 * time.Millisecond: "0.1s", 1250 * time.Millisecond: "1.3s",
		12600 * time.Millisecond: "13s", 90*time.Second + 400*time.Millisecond: "1m30s", 2*time.Hour + 10*time.Second: "2h0m0s",
	} {
		if got := roughly(d); got != want {
			t.Errorf("roughly(%s) = %q, want %q", d, got, want)
		}
	}
}

func TestNDJSONCarriesCauseRemedyWaited(t *testing.T) {
	var out bytes.Buffer
	p := NewNDJSON(&out, "v0.0.0-test", time.Now, func() int64 { return 0 })
	p.Event(event.Event{Type: event.EventEvictionBlocked, Pod: "ns/a", Reason: "Exhausted", Cause: "c", Remedy: "r", Waited: 30 * time.Second,
		CauseKind: "Exhausted", Routine: true})
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var v, ev map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &v); err != nil || v["events_version"] != EventsVersion {
		t.Errorf("version event %s (%v), want events_version %s", lines[0], err, EventsVersion)
	}
	if err := json.Unmarshal([]byte(lines[1]), &ev); err != nil {
		t.Fatal(err)
	}
	// Everything the human lines leave out of a routine wait is here.
	if ev["cause"] != "c" || ev["remedy"] != "r" || ev["waited_seconds"] != 30.0 || ev["cause_kind"] != "Exhausted" || ev["routine"] != true {
		t.Errorf("event %s lacks cause, remedy, waited_seconds, cause_kind or routine", lines[1])
	}
}

func TestPlanPrintsCausesAndRemedies(t *testing.T) {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}}
	q := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "dnd"}}
	r := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c"}}
	plan := &event.Plan{Nodes: []event.NodePlan{{Name: "n1", Steps: []pdb.Step{
		{Pod: q, Wave: 0, Decision: pdb.Decision{Verdict: drain.VerdictDoNotDisrupt}, Blocker: "has karpenter.sh/do-not-disrupt", Cause: "has karpenter.sh/do-not-disrupt", Remedy: "--ignore-do-not-disrupt"},
		{Pod: r, Wave: 3, Decision: pdb.Decision{Verdict: pdb.Exhausted}, Cause: "replacement ns/b is unschedulable: 0/3 nodes", Remedy: "uncordon a node"},
		{Pod: p, Wave: 2, Decision: pdb.Decision{Verdict: pdb.Exhausted}, Cause: "replacement ns/b is unschedulable: 0/3 nodes", Remedy: "uncordon a node"},
	}}}}
	var out bytes.Buffer
	Plan(&out, plan)
	for _, want := range []string{"  pod ns/a: replacement ns/b is unschedulable: 0/3 nodes\n    remedy: uncordon a node\n", "  pod ns/dnd: remedy: --ignore-do-not-disrupt\n", "never  ns/dnd"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("plan output lacks %q:\n%s", want, out.String())
		}
	}
	if i, j, k := strings.Index(out.String(), "  2 "), strings.Index(out.String(), "  3 "), strings.Index(out.String(), "  never "); i < 0 || j < i || k < j {
		t.Errorf("plan rows not in wave order (2, 3, never):\n%s", out.String())
	}
	if n := strings.Count(out.String(), "remedy: uncordon a node"); n != 1 {
		t.Errorf("the remedy two pods share is said %d times, want once:\n%s", n, out.String())
	}
	var js bytes.Buffer
	_ = json.NewEncoder(&js).Encode(ToPlanJSON(plan))
	if !strings.Contains(js.String(), `"cause":"replacement ns/b is unschedulable`) || !strings.Contains(js.String(), `"remedy":"--ignore-do-not-disrupt"`) {
		t.Errorf("plan JSON lacks cause/remedy: %s", js.String())
	}
}

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
			(&Human{Out: &out, ErrOut: &errOut}).Event(tc.ev)
			if out.String() != tc.stdout || errOut.String() != tc.stderr {
				t.Errorf("human: stdout %q, stderr %q; want %q, %q", out.String(), errOut.String(), tc.stdout, tc.stderr)
			}
			var js bytes.Buffer
			tc.ev.Time = at
			NewNDJSON(&js, "v0.0.0-test", func() time.Time { return at }, func() int64 { return 0 }).Event(tc.ev)
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

package maintenance

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/operation"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

func TestRequest(t *testing.T) {
	notAfter := metav1.NewTime(time.Date(2026, 11, 26, 6, 0, 0, 0, time.UTC))
	cases := map[string]struct {
		spec    v1alpha1.MaintenanceSpec
		check   func(t *testing.T, r operation.Request)
		wantErr bool
	}{
		"a drain takes kubectl drain's defaults": {
			spec: v1alpha1.MaintenanceSpec{Action: v1alpha1.ActionDrain, Nodes: []string{"n1"}},
			check: func(t *testing.T, r operation.Request) {
				d := r.Drain
				if r.Action != operation.Drain || d.GracePeriodSeconds != -1 || d.ChunkSize != drain.DefaultChunkSize ||
					d.MaxParallelNodes != drain.DefaultMaxParallelNodes || d.Timeout != 0 || !r.RecordEvents || r.Origin().Command != "maintenance/m" || r.Command != "maintenance/m" {
					t.Errorf("request %+v", r)
				}
			},
		},
		"a pool drain leaves parallelism to the pool": {
			spec: v1alpha1.MaintenanceSpec{Action: v1alpha1.ActionDrain, Pool: "blue"},
			check: func(t *testing.T, r operation.Request) {
				if r.Pool != "blue" || r.Drain.MaxParallelNodes != 0 {
					t.Errorf("pool %q, max parallel %d", r.Pool, r.Drain.MaxParallelNodes)
				}
			},
		},
		"every setting carried": {
			spec: v1alpha1.MaintenanceSpec{Action: v1alpha1.ActionMove, To: "green", Selector: "rack=7",
				Drain: v1alpha1.DrainSettings{Force: true, IgnoreDaemonSets: true, DeleteEmptyDirData: true, GracePeriodSeconds: ptr.To(int32(30)),
					Timeout: v1alpha1.DurationOf(time.Hour), PodSelector: "app=web", SkipWaitForDeleteTimeoutSeconds: 5, ChunkSize: ptr.To(int64(50)), IgnoreDoNotDisrupt: true},
				Policy: v1alpha1.Policy{OnBlocked: "skip", BlockedAfter: v1alpha1.DurationOf(time.Minute), NotAfter: &notAfter, Surge: true, MaxParallelNodes: 3}},
			check: func(t *testing.T, r operation.Request) {
				d := r.Drain
				if r.Action != operation.Move || r.To != "green" || r.Selector != "rack=7" || !r.Surge || !d.Force || !d.IgnoreDaemonSets || !d.DeleteEmptyDirData ||
					d.GracePeriodSeconds != 30 || d.Timeout != time.Hour || d.PodSelector != "app=web" || d.SkipWaitForDeleteTimeoutSeconds != 5 ||
					d.ChunkSize != 50 || !d.IgnoreDoNotDisrupt || d.OnBlocked != drain.OnBlockedSkip || d.BlockedAfter != time.Minute ||
					!d.NotAfter.Equal(notAfter.Time) || d.MaxParallelNodes != 3 {
					t.Errorf("request %+v", r)
				}
			},
		},
		"a move without a target": {spec: v1alpha1.MaintenanceSpec{Action: v1alpha1.ActionMove, Nodes: []string{"n1"}}, wantErr: true},
		"an unknown action":       {spec: v1alpha1.MaintenanceSpec{Action: "Reboot", Nodes: []string{"n1"}}, wantErr: true},
		// What the CRD's rules refuse, stored before they existed: the object fails alone.
		"a timeout Go cannot read":           {spec: v1alpha1.MaintenanceSpec{Action: v1alpha1.ActionDrain, Nodes: []string{"n1"}, Drain: v1alpha1.DrainSettings{Timeout: dur("abc")}}, wantErr: true},
		"a timeout in days":                  {spec: v1alpha1.MaintenanceSpec{Action: v1alpha1.ActionDrain, Nodes: []string{"n1"}, Drain: v1alpha1.DrainSettings{Timeout: dur("1d")}}, wantErr: true},
		"a bad blockedAfter":                 {spec: v1alpha1.MaintenanceSpec{Action: v1alpha1.ActionDrain, Nodes: []string{"n1"}, Policy: v1alpha1.Policy{BlockedAfter: dur("xyz")}}, wantErr: true},
		"a negative soak":                    {spec: v1alpha1.MaintenanceSpec{Action: v1alpha1.ActionDrain, Pool: "blue", Policy: v1alpha1.Policy{Soak: dur("-1m")}}, wantErr: true},
		"an empty node name":                 {spec: v1alpha1.MaintenanceSpec{Action: v1alpha1.ActionDrain, Nodes: []string{""}}, wantErr: true},
		"a node name with a slash":           {spec: v1alpha1.MaintenanceSpec{Action: v1alpha1.ActionDrain, Nodes: []string{"a/b"}}, wantErr: true},
		"a selector that does not parse":     {spec: v1alpha1.MaintenanceSpec{Action: v1alpha1.ActionDrain, Selector: "a in (b"}, wantErr: true},
		"a pod selector that does not parse": {spec: v1alpha1.MaintenanceSpec{Action: v1alpha1.ActionDrain, Nodes: []string{"n1"}, Drain: v1alpha1.DrainSettings{PodSelector: "=x"}}, wantErr: true},
		"a fractional duration reads": {spec: v1alpha1.MaintenanceSpec{Action: v1alpha1.ActionDrain, Nodes: []string{"n1"}, Drain: v1alpha1.DrainSettings{Timeout: dur("1.5h")}},
			check: func(t *testing.T, r operation.Request) {
				if r.Drain.Timeout != 90*time.Minute {
					t.Errorf("timeout %s, want 1h30m", r.Drain.Timeout)
				}
			}},
		"the run's identity is the object's": {spec: v1alpha1.MaintenanceSpec{Action: v1alpha1.ActionDrain, Nodes: []string{"n1"}},
			check: func(t *testing.T, r operation.Request) {
				if r.RunID != "maintenance-u1" || r.Origin().ID != "maintenance-u1" {
					t.Errorf("run ID %q, origin ID %q, want maintenance-u1", r.RunID, r.Origin().ID)
				}
			}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			m := &v1alpha1.Maintenance{ObjectMeta: metav1.ObjectMeta{Name: "m", UID: "u1"}, Spec: tc.spec}
			r, err := Request(m)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want error %v", err, tc.wantErr)
			}
			if tc.check != nil {
				tc.check(t, r)
			}
		})
	}
}

func dur(s string) *v1alpha1.Duration {
	d := v1alpha1.Duration(s)
	return &d
}

func TestOutcome(t *testing.T) {
	cases := map[string]struct {
		err   error
		phase v1alpha1.Phase
	}{
		"done":                {nil, v1alpha1.PhaseSucceeded},
		"nodes skipped":       {&drain.SkippedError{}, v1alpha1.PhaseBlocked},
		"stopped by fail":     {fmt.Errorf("run: %w", &drain.StoppedError{}), v1alpha1.PhaseBlocked},
		"deadline passed":     {&drain.NotStartedError{}, v1alpha1.PhaseDeadlinePassed},
		"timed out":           {fmt.Errorf("drain: %w", context.DeadlineExceeded), v1alpha1.PhaseTimedOut},
		"finished by force":   {fmt.Errorf("run: %w", &drain.ForcedError{}), v1alpha1.PhaseForced},
		"an error of the API": {errors.New("boom"), v1alpha1.PhaseFailed},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got, _ := phaseOf(tc.err); got != tc.phase {
				t.Errorf("phase %s, want %s", got, tc.phase)
			}
		})
	}
}

func TestRemaining(t *testing.T) {
	start := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	cases := map[string]struct {
		timeout time.Duration
		now     time.Time
		left    time.Duration
		ok      bool
	}{
		"no timeout":         {0, start.Add(time.Hour), 0, true},
		"some left":          {time.Hour, start.Add(20 * time.Minute), 40 * time.Minute, true},
		"spent by a restart": {time.Hour, start.Add(2 * time.Hour), -time.Hour, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			left, ok := remaining(tc.timeout, start, tc.now)
			if left != tc.left || ok != tc.ok {
				t.Errorf("remaining = %s, %v; want %s, %v", left, ok, tc.left, tc.ok)
			}
		})
	}
}

func TestTrackerFoldsEvents(t *testing.T) {
	now := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	tr := newTracker(nil, []string{"n1", "n2"}, v1alpha1.ActionDrain)
	steps := []pdb.Step{{}, {}}
	tr.apply(event.Event{Type: event.EventPlan, Time: now, Plan: &event.Plan{Nodes: []event.NodePlan{{Name: "n1", Steps: steps}, {Name: "n2"}}}})
	tr.apply(event.Event{Type: event.EventNodeCordoned, Time: now, Node: "n1"})
	tr.apply(event.Event{Type: event.EventEvictionStarted, Time: now, Node: "n1", Pod: "ns/a"})
	blocked := event.Event{Type: event.EventEvictionBlocked, Time: now, Node: "n1", Pod: "ns/b", PDB: "ns/web", Message: "needs 3, has 3", Cause: "replacement not Ready"}
	tr.apply(blocked)
	tr.apply(event.Event{Type: event.EventPodEvicted, Time: now, Node: "n1", Pod: "ns/a"})
	tr.take()
	tr.apply(blocked) // said again, unchanged
	if tr.dirty {
		t.Errorf("a wait said again unchanged made the status dirty")
	}
	got := tr.take()
	if n := got[0]; n.State != NodeDraining || n.PodsLeft != 1 || len(n.Blockers) != 1 || n.Blockers[0].PDB != "ns/web" || n.Since == nil {
		t.Errorf("n1 %+v", n)
	}
	tr.apply(event.Event{Type: event.EventPodEvicted, Time: now, Node: "n1", Pod: "ns/b"})
	tr.apply(event.Event{Type: event.EventNodeDrained, Time: now, Node: "n1"})
	tr.apply(event.Event{Type: event.EventNodeBlocked, Time: now, Node: "n2", Message: "pdb ns/db"})
	got = tr.take()
	if got[0].State != NodeDrained || got[0].PodsLeft != 0 || len(got[0].Blockers) != 0 || got[1].State != NodeBlocked || got[1].Message != "pdb ns/db" {
		t.Errorf("nodes %+v", got)
	}
	c := tr.counts(v1alpha1.Counts{PodsEvicted: 3}, nil)
	// A node given up is counted as blocked (skipped), not as pending (issue 30, finding 9).
	if c.NodesDrained != 1 || c.NodesPending != 0 || c.NodesBlocked != 1 || c.PodsEvicted != 5 {
		t.Errorf("counts %+v, want 1 drained, 1 blocked, none pending, 5 evicted (3 before)", c)
	}
	tr.apply(event.Event{Type: event.EventPlan, Time: now, Plan: &event.Plan{Nodes: []event.NodePlan{{Name: "n3"}}}})
	tr.apply(event.Event{Type: event.EventNodeNotStarted, Time: now, Node: "n3"})
	if c := tr.counts(v1alpha1.Counts{}, nil); c.NodesNotStarted != 1 || c.NodesDrained != 1 || c.NodesPending != 0 {
		t.Errorf("counts %+v, want the node --not-after kept from starting counted as not started, not drained", c)
	}
	// The run lets go a node it cordoned but did not start (uncordons it): still not
	// started, not an uncordoned (finished) node.
	tr.apply(event.Event{Type: event.EventNodeUncordoned, Time: now, Node: "n3"})
	if c := tr.counts(v1alpha1.Counts{}, nil); c.NodesNotStarted != 1 || c.NodesDrained != 1 {
		t.Errorf("counts %+v after the not-started node was let go, want it still not started", c)
	}
}

// A node is finished when drained, moved or uncordoned; cordoned only when cordoning is
// the Maintenance's action: in a drain a cordoned node waits for its first eviction.
func TestNodeStateDoneDependsOnTheAction(t *testing.T) {
	tests := []struct {
		state  string
		action v1alpha1.Action
		done   bool
	}{
		{NodeDrained, v1alpha1.ActionDrain, true},
		{NodeMoved, v1alpha1.ActionMove, true},
		{NodeUncordoned, v1alpha1.ActionUncordon, true},
		{NodeCordoned, v1alpha1.ActionCordon, true},
		{NodeCordoned, v1alpha1.ActionDrain, false},
		{NodeCordoned, v1alpha1.ActionMove, false},
		{NodeDraining, v1alpha1.ActionDrain, false},
		{NodeFailed, v1alpha1.ActionDrain, false},
		{NodePending, v1alpha1.ActionCordon, false},
	}
	for _, tc := range tests {
		if got := v1alpha1.NodeStateDone(tc.state, tc.action); got != tc.done {
			t.Errorf("NodeStateDone(%s, %s) = %v, want %v", tc.state, tc.action, got, tc.done)
		}
	}
}

// A node another run holds is named in the waits until the run does something on it; a
// warning said again unchanged is no change.
func TestTrackerWaits(t *testing.T) {
	tr := newTracker(nil, []string{"n1", "n2"}, v1alpha1.ActionDrain)
	tr.take()
	held := event.Event{Type: event.EventWarning, Node: "n2", Reason: drain.ReasonHeld, Message: "node n2 is held by run abc by jane (kubectl-maintenance drain n2) on laptop (pid 42)"}
	steps := []struct {
		ev        event.Event
		want      string
		wantDirty bool
	}{
		{held, held.Message, true},
		{held, held.Message, false},
		{event.Event{Type: event.EventWarning, Node: "n2", Message: "something else"}, held.Message, false},
		{event.Event{Type: event.EventNodeCordoned, Node: "n1"}, held.Message, true},
		{event.Event{Type: event.EventNodeCordoned, Node: "n2"}, "", true},
	}
	for i, s := range steps {
		tr.apply(s.ev)
		if got := tr.waits(); got != s.want {
			t.Errorf("step %d: waits %q, want %q", i, got, s.want)
		}
		if tr.dirty != s.wantDirty {
			t.Errorf("step %d: dirty %v, want %v", i, tr.dirty, s.wantDirty)
		}
		tr.take()
	}
}

// A run resumed by a new leader finds fewer pods on a draining node than the last status
// said: those the dead leader evicted after its last write count as evicted.
func TestTrackerKeepsTheEarlierRunsEvictions(t *testing.T) {
	prev := []v1alpha1.NodeStatus{{Name: "n1", State: NodeDraining, PodsLeft: 4}, {Name: "n2", State: NodePending}}
	tr := newTracker(prev, []string{"n1", "n2"}, v1alpha1.ActionDrain)
	tr.apply(event.Event{Type: event.EventPlan, Plan: &event.Plan{Nodes: []event.NodePlan{
		{Name: "n1", Steps: []pdb.Step{{}, {}, {}}}, {Name: "n2", Steps: []pdb.Step{{}}}}}})
	if c := tr.counts(v1alpha1.Counts{PodsEvicted: 2}, nil); c.PodsEvicted != 3 {
		t.Errorf("evicted %d, want 3 (2 written, 1 evicted after the last write)", c.PodsEvicted)
	}
	if c := tr.counts(v1alpha1.Counts{PodsEvicted: 2}, &drain.Summary{PodsEvicted: 4}); c.PodsEvicted != 7 {
		t.Errorf("evicted at the end %d, want 7", c.PodsEvicted)
	}
}

// An eviction the engine sent before a node left the run may be answered after it: the
// answer counts, but the node stays Released (CI, TestForcedUncordonReleasesAMaintenanceNode).
func TestTrackerKeepsAnEndedNodeEnded(t *testing.T) {
	now := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	late := []event.Event{
		{Type: event.EventEvictionStarted, Time: now, Node: "n1", Pod: "ns/b"},
		{Type: event.EventEvictionAccepted, Time: now, Node: "n1", Pod: "ns/b"},
		{Type: event.EventEvictionBlocked, Time: now, Node: "n1", Pod: "ns/c", PDB: "ns/web"},
	}
	for _, end := range []struct {
		ev    event.Event
		state string
	}{
		{event.Event{Type: event.EventNodeFailed, Node: "n1", Reason: drain.ReasonReleased, Message: "node n1 left this run"}, NodeReleased},
		{event.Event{Type: event.EventNodeFailed, Node: "n1", Message: "timed out"}, NodeFailed},
		{event.Event{Type: event.EventNodeDrained, Node: "n1"}, NodeDrained},
		{event.Event{Type: event.EventNodeGone, Node: "n1"}, NodeGone},
	} {
		tr := newTracker(nil, []string{"n1"}, v1alpha1.ActionDrain)
		tr.apply(event.Event{Type: event.EventEvictionStarted, Time: now, Node: "n1", Pod: "ns/a"})
		end.ev.Time = now
		tr.apply(end.ev)
		for _, ev := range late {
			tr.apply(ev)
		}
		n := tr.take()[0]
		if n.State != end.state || len(n.Blockers) != 0 {
			t.Errorf("after %s: state %s, blockers %v; want %s and none", end.ev.Type, n.State, n.Blockers, end.state)
		}
		if tr.requests != 2 {
			t.Errorf("after %s: %d requests counted, want 2 (the late one counts)", end.ev.Type, tr.requests)
		}
	}
}

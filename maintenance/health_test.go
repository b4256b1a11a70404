package maintenance

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/outcome"
)

// kstatus (what Flux, Argo CD and cli-utils read) over every phase a Maintenance's status
// takes, as the writers leave it (phase, Progressing with its reason, the message) and
// setHealth completes it: Current only for a good end, InProgress while the controller
// works, Failed for every end that needs a person.
func TestHealthReadByKstatus(t *testing.T) {
	type tcase struct {
		name    string
		phase   v1alpha1.Phase
		reason  string
		counts  v1alpha1.Counts
		want    status.Status
		wantCnd string // the condition True besides Progressing/WaitingForNodes
	}
	cases := []tcase{
		{name: "no phase yet (the controller's first write)", phase: "", reason: "", want: status.InProgressStatus, wantCnd: v1alpha1.ConditionReconciling},
		{name: "pending: waiting for nodes another run holds", phase: v1alpha1.PhasePending, reason: "Pending", want: status.InProgressStatus, wantCnd: v1alpha1.ConditionReconciling},
		{name: "scheduled: the window is not open yet", phase: v1alpha1.PhaseScheduled, reason: reasonScheduled, want: status.InProgressStatus, wantCnd: v1alpha1.ConditionReconciling},
		{name: "running", phase: v1alpha1.PhaseRunning, reason: "Running", want: status.InProgressStatus, wantCnd: v1alpha1.ConditionReconciling},
		{name: "paused", phase: v1alpha1.PhasePaused, reason: "Paused", want: status.InProgressStatus, wantCnd: v1alpha1.ConditionReconciling},
		{name: "a one-shot window closed with every node done is a good end", phase: v1alpha1.PhaseDeadlinePassed, reason: ReasonWindowClosed,
			counts: v1alpha1.Counts{NodesDrained: 2}, want: status.CurrentStatus, wantCnd: v1alpha1.ConditionReady},
		{name: "a window closed with nodes not started needs a person", phase: v1alpha1.PhaseDeadlinePassed, reason: ReasonWindowClosed,
			counts: v1alpha1.Counts{NodesDrained: 1, NodesNotStarted: 1}, want: status.FailedStatus, wantCnd: v1alpha1.ConditionStalled},
	}
	// Every end of the outcome table, so that a new outcome is read too.
	for o, row := range outcome.Table {
		if row.Phase == "" {
			continue // Interrupted: not an end of a Maintenance
		}
		tc := tcase{name: "ended " + row.Reason, phase: v1alpha1.Phase(row.Phase), reason: row.Reason, want: status.FailedStatus, wantCnd: v1alpha1.ConditionStalled,
			counts: v1alpha1.Counts{NodesDrained: 1, NodesFailed: 1, NodesNotStarted: 1}}
		if o == outcome.Succeeded {
			tc.want, tc.wantCnd, tc.counts = status.CurrentStatus, v1alpha1.ConditionReady, v1alpha1.Counts{NodesDrained: 2}
		}
		cases = append(cases, tc)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			const gen = 3
			s := v1alpha1.MaintenanceStatus{Phase: tc.phase, Message: "what the phase says", Counts: tc.counts, ObservedGeneration: gen}
			if tc.reason != "" {
				p := metav1.ConditionFalse
				if tc.phase == v1alpha1.PhaseRunning {
					p = metav1.ConditionTrue
				}
				setCondition(&s, gen, v1alpha1.ConditionProgressing, p, tc.reason, s.Message)
			}
			setWaiting(&s, gen, "")
			setHealth(&s, gen)

			m := &v1alpha1.Maintenance{ObjectMeta: metav1.ObjectMeta{Name: "m", Generation: gen}, Status: s}
			m.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind("Maintenance"))
			got := compute(t, m)
			if got.Status != tc.want {
				t.Errorf("kstatus = %s (%s), want %s", got.Status, got.Message, tc.want)
			}
			for _, typ := range []string{v1alpha1.ConditionReconciling, v1alpha1.ConditionStalled, v1alpha1.ConditionReady} {
				c := meta.FindStatusCondition(s.Conditions, typ)
				if c == nil {
					t.Fatalf("no %s condition", typ)
				}
				if want := typ == tc.wantCnd; (c.Status == metav1.ConditionTrue) != want {
					t.Errorf("%s = %s, want True: %v", typ, c.Status, want)
				}
				if c.ObservedGeneration != gen || c.Reason == "" || c.Message == "" {
					t.Errorf("%s = %+v: want observedGeneration %d, a reason and a message", typ, c, gen)
				}
			}
			if tc.reason != "" && meta.FindStatusCondition(s.Conditions, tc.wantCnd).Reason != tc.reason {
				t.Errorf("%s reason = %q, want the phase's %q", tc.wantCnd, meta.FindStatusCondition(s.Conditions, tc.wantCnd).Reason, tc.reason)
			}
		})
	}
	t.Run("a status of an older generation is in progress", func(t *testing.T) {
		s := v1alpha1.MaintenanceStatus{Phase: v1alpha1.PhaseSucceeded, ObservedGeneration: 1}
		setHealth(&s, 1)
		m := &v1alpha1.Maintenance{ObjectMeta: metav1.ObjectMeta{Name: "m", Generation: 2}, Status: s}
		m.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind("Maintenance"))
		if got := compute(t, m); got.Status != status.InProgressStatus {
			t.Errorf("kstatus = %s, want InProgress", got.Status)
		}
	})
}

// The summary counts every node of the status.
func TestSummaryCountsTheNodes(t *testing.T) {
	for _, n := range []int{0, 1, 3} {
		s := v1alpha1.MaintenanceStatus{Nodes: make([]v1alpha1.NodeStatus, n), Counts: v1alpha1.Counts{NodesTotal: 99}}
		setSummary(&s)
		if s.Counts.NodesTotal != int32(n) {
			t.Errorf("%d nodes: nodesTotal %d", n, s.Counts.NodesTotal)
		}
	}
}

func compute(t *testing.T, obj runtime.Object) *status.Result {
	t.Helper()
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	got, err := status.Compute(&unstructured.Unstructured{Object: u})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// An ended run waits for no node: WaitingForNodes True (said while it ran, a CLI run
// holding a node) turns False at the end; an object that never had it gets none.
func TestAnEndedRunWaitsForNoNode(t *testing.T) {
	tests := []struct {
		name string
		had  *metav1.ConditionStatus
		want metav1.ConditionStatus // "" for no condition
	}{
		{"waiting when it ended", ptrTo(metav1.ConditionTrue), metav1.ConditionFalse},
		{"not waiting", ptrTo(metav1.ConditionFalse), metav1.ConditionFalse},
		{"never said", nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &v1alpha1.MaintenanceStatus{}
			if tc.had != nil {
				setWaiting(s, 1, map[metav1.ConditionStatus]string{metav1.ConditionTrue: "node n1 is held by run r1"}[*tc.had])
			}
			endWaiting(s, 1)
			c := meta.FindStatusCondition(s.Conditions, v1alpha1.ConditionWaitingForNodes)
			switch {
			case tc.want == "" && c != nil:
				t.Errorf("WaitingForNodes %s added", c.Status)
			case tc.want != "" && (c == nil || c.Status != tc.want):
				t.Errorf("WaitingForNodes %v, want %s", c, tc.want)
			}
		})
	}
}

func ptrTo[T any](v T) *T { return &v }

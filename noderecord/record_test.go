package noderecord

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-maintenance/kubectl-maintenance/internal/kubefake"
)

func node(name string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

var t0 = time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)

func TestReadState(t *testing.T) {
	const move = "kubectl-maintenance.io/pool-move"
	ours := metav1.ManagedFieldsEntry{Manager: FieldManager, Operation: metav1.ManagedFieldsOperationUpdate,
		FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:unschedulable":{}}}`)}
	tests := map[string]struct {
		labels, annotations map[string]string
		cordonedByUs        bool
		want, why           string
	}{
		"untouched":                              {nil, nil, false, "", ""},
		"the annotation of an older version":     {nil, map[string]string{AnnotationDrain: StateDrained}, false, StateDrained, ""},
		"the annotation wins over a stale label": {map[string]string{LabelState: StateDraining}, map[string]string{AnnotationDrain: StateBlocked, AnnotationBlocked: "pdb a/b"}, false, StateBlocked, "pdb a/b"},
		"our cordon with no record":              {nil, nil, true, StateCordoned, ""},
		"a pool move in progress":                {nil, map[string]string{AnnotationDrain: StateDraining, move: "draining"}, true, StateMoving, ""},
		"a failed node stays failed in a move":   {nil, map[string]string{AnnotationDrain: StateFailed, AnnotationFailed: "timed out", move: "draining"}, true, StateFailed, "timed out"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			n := node("n1")
			n.Labels, n.Annotations = tc.labels, tc.annotations
			if tc.cordonedByUs {
				n.Spec.Unschedulable = true
				n.ManagedFields = []metav1.ManagedFieldsEntry{ours}
			}
			got := Read(n, move)
			if got.State != tc.want || got.Blocked != tc.why {
				t.Errorf("Read = %q (why %q), want %q (why %q)", got.State, got.Blocked, tc.want, tc.why)
			}
			if Touched(n) != (tc.want != "") {
				t.Errorf("Touched = %v", Touched(n))
			}
		})
	}
}

// The patch of each state, applied to a node, reads back as that state, with the run and
// a heartbeat only while the run drains the node.
func TestStatePatchReadsBack(t *testing.T) {
	run := Run{ID: "abc123", Host: "h", PID: 7, Command: "kubectl maintenance drain n1", User: "jane"}
	tests := map[string]struct {
		state, why    string
		wantHeartbeat bool
	}{
		"draining holds the node":        {StateDraining, "", true},
		"drained lets it go":             {StateDrained, "", false},
		"selected-drained lets it go":    {StateSelectedDrained, "", false},
		"blocked says why":               {StateBlocked, "pdb ns/web (allows 0)", false},
		"failed says why and lets it go": {StateFailed, "the run timed out", false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := kubefake.New(node("n1"))
			if _, err := Patch(context.Background(), c.CoreV1(), "n1", map[string]any{"metadata": StatePatch(tc.state, t0, &run, tc.why)}, false); err != nil {
				t.Fatal(err)
			}
			n, _ := c.CoreV1().Nodes().Get(context.Background(), "n1", metav1.GetOptions{})
			rec := Read(n, "")
			if rec.State != tc.state || rec.Blocked != tc.why || rec.Run.ID != run.ID || rec.Run.Host != "h" || rec.User != "jane" || !rec.Since.Equal(t0) {
				t.Errorf("read back %+v", rec)
			}
			if got := !rec.Heartbeat.IsZero(); got != tc.wantHeartbeat {
				t.Errorf("heartbeat %v, want one: %v", rec.Heartbeat, tc.wantHeartbeat)
			}
			if RemovePatch(n) == nil {
				t.Errorf("RemovePatch of a recorded node is nil")
			}
		})
	}
}

func TestHeldBy(t *testing.T) {
	other := Run{ID: "other", Host: "elsewhere", PID: 1}
	gone := func(r Run) bool { return r.PID == 99 }
	tests := map[string]struct {
		rec  Record
		held bool
	}{
		"no run recorded":                         {Record{}, false},
		"our own run":                             {Record{Run: Run{ID: "me"}, Heartbeat: t0}, false},
		"another run with a fresh heartbeat":      {Record{Run: other, Heartbeat: t0.Add(-10 * time.Second)}, true},
		"another run whose heartbeat expired":     {Record{Run: other, Heartbeat: t0.Add(-HeartbeatExpiry)}, false},
		"another run that let the node go":        {Record{Run: other}, false},
		"another run whose process is gone":       {Record{Run: Run{ID: "x", Host: "here", PID: 99}, Heartbeat: t0}, false},
		"a heartbeat from a clock a little ahead": {Record{Run: other, Heartbeat: t0.Add(5 * time.Second)}, true},
	}
	l := Liveness{Expiry: HeartbeatExpiry, ProcessGone: gone}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if _, held := l.HeldBy(tc.rec, "me", t0); held != tc.held {
				t.Errorf("HeldBy = %v, want %v", held, tc.held)
			}
		})
	}
}

// Update sends the node's resourceVersion with the patch and, on a conflict, reads the
// node again and decides again on what it finds.
func TestUpdateDecidesAgainOnAConflict(t *testing.T) {
	n := node("n1")
	n.ResourceVersion = "1"
	c := kubefake.New(n)
	conflicts := 1
	var sent []string
	c.PrependReactor("patch", "nodes", func(a k8stesting.Action) (bool, runtime.Object, error) {
		sent = append(sent, string(a.(k8stesting.PatchAction).GetPatch()))
		if conflicts > 0 {
			conflicts--
			return true, nil, apierrors.NewConflict(schema.GroupResource{Resource: "nodes"}, "n1", errors.New("changed"))
		}
		return false, nil, nil
	})
	decided := 0
	_, err := Update(context.Background(), c.CoreV1(), "n1", false, func(*corev1.Node) (map[string]any, error) {
		decided++
		return map[string]any{"metadata": HeartbeatPatch(t0)}, nil
	})
	if err != nil || decided != 2 || len(sent) != 2 {
		t.Fatalf("Update = %v after %d decisions and %d patches", err, decided, len(sent))
	}
	for _, p := range sent {
		if !contains(p, `"resourceVersion"`) {
			t.Errorf("patch without a precondition: %s", p)
		}
	}
	held := &HeldError{Node: "n1", Holder: Run{ID: "other"}}
	_, err = Update(context.Background(), c.CoreV1(), "n1", false, func(*corev1.Node) (map[string]any, error) { return nil, held })
	if !errors.Is(err, held) {
		t.Errorf("a decision's error is returned as is, got %v", err)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
func TestForMaintenanceNamesTheMaintenance(t *testing.T) {
	r := ForMaintenance("kernel-upgrade", "system:serviceaccount:ops:controller")
	if r.ID == "" || r.Command != "maintenance/kernel-upgrade" {
		t.Errorf("ForMaintenance = %+v", r)
	}
	if again := r.WithID(); again.ID != r.ID {
		t.Errorf("WithID changed an ID: %q -> %q", r.ID, again.ID)
	}
}

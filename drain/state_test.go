package drain

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-maintenance/kubectl-maintenance/internal/kubefake"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// The state transitions, each as the patch this tool sends, read back as ReadState sees
// them: cordon -> draining -> blocked -> draining (a re-run) -> drained -> uncordon.
func TestStateTransitions(t *testing.T) {
	c := kubefake.New(testNode("n1"))
	var patches int
	c.PrependReactor("patch", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) { patches++; return false, nil, nil })
	ctx := context.Background()
	t0 := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	get := func() *corev1.Node {
		n, err := c.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	origin := &noderecord.Run{Command: "kubectl maintenance drain n1", User: "jane"}
	steps := []struct {
		name  string
		do    func() error
		state string
		since time.Time
		user  string
		why   string
	}{
		{"cordon records cordoned", func() error { _, err := CordonAs(ctx, c, get(), false, t0, &noderecord.Run{User: "bob"}); return err }, noderecord.StateCordoned, t0, "bob", ""},
		{"a drain's cordon records draining with its origin", func() error {
			_, _, err := CordonForDrainAs(ctx, c, "n1", false, t0.Add(time.Minute), origin)
			return err
		}, noderecord.StateDraining, t0.Add(time.Minute), "jane", ""},
		{"skip records blocked and why", func() error {
			return SetState(ctx, c, "n1", noderecord.StateBlocked, t0.Add(2*time.Minute), "pdb ns/web (needs 2)", origin)
		}, noderecord.StateBlocked, t0.Add(2 * time.Minute), "jane", "pdb ns/web (needs 2)"},
		{"a re-run drains again and forgets why it was blocked", func() error {
			_, _, err := CordonForDrainAs(ctx, c, "n1", false, t0.Add(3*time.Minute), origin)
			return err
		}, noderecord.StateDraining, t0.Add(3 * time.Minute), "jane", ""},
		{"drained", func() error {
			return SetState(ctx, c, "n1", noderecord.StateDrained, t0.Add(4*time.Minute), "", origin)
		}, noderecord.StateDrained, t0.Add(4 * time.Minute), "jane", ""},
	}
	for _, s := range steps {
		before := patches
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if patches != before+1 {
			t.Errorf("%s: %d patches, want 1", s.name, patches-before)
		}
		n := get()
		got := noderecord.Read(n, "")
		if got.State != s.state || n.Labels[noderecord.LabelState] != s.state || !got.Since.Equal(s.since) || got.User != s.user || got.Blocked != s.why {
			t.Errorf("%s: state %+v label %q", s.name, got, n.Labels[noderecord.LabelState])
		}
		if !noderecord.Touched(n) {
			t.Errorf("%s: not touched", s.name)
		}
	}
	if _, err := Uncordon(ctx, c, get(), false, false); err != nil {
		t.Fatal(err)
	}
	n := get()
	if n.Spec.Unschedulable || noderecord.Touched(n) || noderecord.Read(n, "").State != "" {
		t.Errorf("after uncordon: unschedulable %v labels %v annotations %v", n.Spec.Unschedulable, n.Labels, n.Annotations)
	}
}

func TestReadState(t *testing.T) {
	const move = "kubectl-maintenance.io/pool-move"
	tests := map[string]struct {
		labels, annotations map[string]string
		cordonedByUs        bool
		want                string
	}{
		"untouched":                              {nil, nil, false, ""},
		"the annotation of an older version":     {nil, map[string]string{noderecord.AnnotationDrain: noderecord.StateDrained}, false, noderecord.StateDrained},
		"the annotation wins over a stale label": {map[string]string{noderecord.LabelState: noderecord.StateDraining}, map[string]string{noderecord.AnnotationDrain: noderecord.StateBlocked}, false, noderecord.StateBlocked},
		"the label alone":                        {map[string]string{noderecord.LabelState: noderecord.StateCordoned}, nil, true, noderecord.StateCordoned},
		"our cordon with no record":              {nil, nil, true, noderecord.StateCordoned},
		"a pool move in progress":                {map[string]string{noderecord.LabelState: noderecord.StateDraining}, map[string]string{noderecord.AnnotationDrain: noderecord.StateDraining, move: "draining"}, true, noderecord.StateMoving},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			n := testNode("n1")
			n.Labels, n.Annotations = tc.labels, tc.annotations
			if tc.cordonedByUs {
				n.Spec.Unschedulable = true
				n.ManagedFields = []metav1.ManagedFieldsEntry{owned(noderecord.FieldManager, unschedulableFields)}
			}
			if got := noderecord.Read(n, move).State; got != tc.want {
				t.Errorf("ReadState = %q, want %q", got, tc.want)
			}
			if touched := noderecord.Touched(n); touched != (tc.want != "") {
				t.Errorf("Touched = %v", touched)
			}
		})
	}
}

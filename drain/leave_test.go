package drain

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// A node held by a run leaves it when it is schedulable again, when its record is gone,
// or when another run's record replaced it; not while it stays cordoned with the run's
// record, whatever its state.
func TestLeftBecause(t *testing.T) {
	now := time.Date(2026, 11, 28, 2, 0, 0, 0, time.UTC)
	node := func(unschedulable bool, state, runID string) *corev1.Node {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{}, Annotations: map[string]string{}}}
		n.Spec.Unschedulable = unschedulable
		if state != "" {
			n.Labels[noderecord.LabelState] = state
			n.Annotations[noderecord.AnnotationDrain] = state
		}
		if runID != "" {
			n.Annotations[noderecord.AnnotationRun] = `{"id":"` + runID + `","host":"h","pid":1}`
		}
		return n
	}
	cases := map[string]struct {
		node *corev1.Node
		want string // "" when the node stays the run's
	}{
		"cordoned, draining, ours":       {node(true, noderecord.StateDraining, "self"), ""},
		"cordoned, drained, ours":        {node(true, noderecord.StateDrained, "self"), ""},
		"uncordoned, record still ours":  {node(false, noderecord.StateDraining, "self"), "uncordoned by someone else"},
		"uncordoned, record removed":     {node(false, "", ""), "uncordoned by someone else"},
		"cordoned, record removed":       {node(true, "", ""), "its record was removed"},
		"cordoned, another run's record": {node(true, noderecord.StateDraining, "other"), "taken over by run other"},
		"uncordoned and another run's":   {node(false, noderecord.StateDraining, "other"), "taken over by run other"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := leftBecause(tc.node, "self", now)
			switch {
			case tc.want == "" && got != "":
				t.Errorf("left: %q, want the node kept", got)
			case tc.want != "" && !strings.Contains(got, tc.want):
				t.Errorf("left: %q, want it to say %q", got, tc.want)
			case tc.want != "" && !strings.Contains(got, "2026-11-28T02:00:00Z"):
				t.Errorf("left: %q, want the time", got)
			}
		})
	}
}

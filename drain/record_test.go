package drain

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
)

// runAll runs the rig's drain of nodes to its end and returns every event it sent.
func runAll(t *testing.T, g *rig, nodes ...string) ([]event.Event, result) {
	t.Helper()
	g.start(nodes...)
	var evs []event.Event
	for ev := range g.events {
		evs = append(evs, ev)
	}
	return evs, <-g.done
}

func TestNodeEventsThroughTheEventsRecorder(t *testing.T) {
	tests := []struct {
		name string
		// forbid makes every Event creation forbidden.
		forbid      bool
		wantReasons []string
		wantWarning int
	}{
		{name: "the node's Events are written (events.k8s.io/v1) before Run returns",
			wantReasons: []string{"Cordoned", "DrainStarted", "Drained"}},
		{name: "a user who may not create Events drains anyway, with one warning",
			forbid: true, wantWarning: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := newRig(t, Config{RecordEvents: true}, testNode("n1"), podOn("p1", "n1", "u1"), podOn("p2", "n1", "u2"), testPDB(2))
			creates := 0
			g.client.PrependReactor("create", "events", func(a k8stesting.Action) (bool, runtime.Object, error) {
				creates++
				if tc.forbid {
					return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "events.k8s.io", Resource: "events"}, "", nil)
				}
				return false, nil, nil
			})
			evs, res := runAll(t, g, "n1")
			if res.err != nil || res.sum.NodesDrained != 1 {
				t.Fatalf("Run = %+v, %v; want the node drained", res.sum, res.err)
			}
			warnings := 0
			for _, ev := range evs {
				if ev.Type == event.EventWarning && ev.Reason == "EventsForbidden" {
					warnings++
				}
			}
			if warnings != tc.wantWarning {
				t.Errorf("%d EventsForbidden warnings, want %d", warnings, tc.wantWarning)
			}
			if tc.forbid && creates != 1 {
				t.Errorf("%d Event creations tried after the first was forbidden, want 1 in all", creates)
			}
			list, err := g.client.EventsV1().Events(metav1.NamespaceDefault).List(context.Background(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var reasons []string
			for _, e := range list.Items {
				if e.Regarding.Kind != "Node" || e.Regarding.Name != "n1" || e.ReportingController != ReportingController ||
					e.Action == "" || e.Type != corev1.EventTypeNormal {
					t.Errorf("event %s: regarding %+v, controller %q, action %q, type %q", e.Name, e.Regarding, e.ReportingController, e.Action, e.Type)
				}
				reasons = append(reasons, e.Reason)
			}
			slices.Sort(reasons)
			if !slices.Equal(reasons, tc.wantReasons) {
				t.Errorf("recorded reasons %v, want %v", reasons, tc.wantReasons)
			}
		})
	}
}

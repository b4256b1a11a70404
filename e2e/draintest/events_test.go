package draintest

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

// The drain records Events (events.k8s.io/v1) on the node through client-go's recorder,
// and every one of them is written by the time the command exits.
func TestDrainRecordsNodeEventsBeforeItExits(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a", "b")
	e.AddNodes()
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", 2, e.Here(fixture.PodOptions{})); err != nil {
		t.Fatal(err)
	}
	e.Ready("web", 2)
	e.Guard()
	if r := e.Run("drain", e.Nodes[0]); r.Code != 0 {
		t.Fatalf("drain exit %d, want 0", r.Code)
	}
	// Listed at once: the command flushed its recorder before it exited.
	list, err := e.C.EventsV1().Events(metav1.NamespaceDefault).List(e.Ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("regarding.name", e.Nodes[0]).String()})
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, ev := range list.Items {
		if ev.ReportingController != drain.ReportingController {
			continue
		}
		if ev.Regarding.Kind != "Node" || ev.Action == "" || ev.Note == "" {
			t.Errorf("event %s: regarding %+v, action %q, note %q", ev.Name, ev.Regarding, ev.Action, ev.Note)
		}
		reasons = append(reasons, ev.Reason)
	}
	slices.Sort(reasons)
	if want := []string{"Cordoned", "DrainStarted", "Drained"}; !slices.Equal(reasons, want) {
		t.Errorf("node %s: Events %v, want %v", e.Nodes[0], reasons, want)
	}
}

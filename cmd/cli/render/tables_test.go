package render

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
	"github.com/kubectl-maintenance/kubectl-maintenance/operation"
)

// A watch prints a node again only when it changed, and once more when it is no longer
// touched.
func TestStatusWatchPrintsChangesOnly(t *testing.T) {
	last := map[string]string{}
	a := operation.NodeStatus{Name: "a", State: noderecord.StateDraining, PodsLeft: 2}
	b := operation.NodeStatus{Name: "b", State: noderecord.StateDrained}
	steps := []struct {
		name string
		now  []operation.NodeStatus
		want []string // name=state of what is printed
	}{
		{"the first look prints everything", []operation.NodeStatus{a, b}, []string{"a=draining", "b=drained"}},
		{"nothing changed: nothing printed", []operation.NodeStatus{a, b}, nil},
		{"a pod left: printed again", []operation.NodeStatus{{Name: "a", State: noderecord.StateDraining, PodsLeft: 1}, b}, []string{"a=draining"}},
		{"uncordoned: printed with no state", []operation.NodeStatus{b}, []string{"a="}},
	}
	for _, s := range steps {
		var got []string
		for _, c := range StatusChanges(s.now, last) {
			got = append(got, c.Name+"="+c.State)
		}
		if strings.Join(got, ",") != strings.Join(s.want, ",") {
			t.Errorf("%s: printed %v, want %v", s.name, got, s.want)
		}
	}
	b1, _ := json.Marshal(a)
	if strings.Contains(string(b1), `"name"`) {
		t.Errorf("the name is in metadata, not in status: %s", b1)
	}
}

package render

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

// The plan shows each pod's order group, the pods kept, and until when a do-not-disrupt
// duration protects a pod, in the human plan and in the JSON plan.
func TestPlanShowsDrainOrder(t *testing.T) {
	until := time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)
	step := func(name string) pdb.Step {
		return pdb.Step{Pod: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}, Wave: 1}
	}
	plan := &event.Plan{Waves: 1, Nodes: []event.NodePlan{{Name: "n1", Steps: []pdb.Step{step("f1"), step("web"), step("l1")},
		Order: []event.PodOrder{
			{Pod: "ns/f1", Group: "order -5", Order: -5, Source: "MachineDrainRule a-first"},
			{Pod: "ns/web", Group: "order 0"},
			{Pod: "ns/l1", Group: "order 10", Order: 10, Source: "drain order rule app=last"},
			{Pod: "ns/dnd", Group: "do-not-disrupt", Source: "karpenter.sh/do-not-disrupt=4h", Until: until},
			{Pod: "ns/batch", Group: "wait-completed", Source: "label cluster.x-k8s.io/drain=WaitCompleted"},
		}}}}
	var b bytes.Buffer
	Plan(&b, plan)
	out := b.String()
	rows := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		rows[strings.Join(strings.Fields(l), " ")] = true
	}
	for name, want := range map[string]string{
		"the order -5 group with its rule": "order -5 ns/f1 MachineDrainRule a-first",
		"group 0 without a rule":           "order 0 ns/web -",
		"the until-when":                   "do-not-disrupt until 2026-11-28T08:00:00Z, then order 0 ns/dnd karpenter.sh/do-not-disrupt=4h",
		"the wait-completed pod":           "wait-completed ns/batch label cluster.x-k8s.io/drain=WaitCompleted",
		"what a group waits for":           "drain order (a group starts once every pod of the groups before it is gone):",
	} {
		if !rows[want] {
			t.Errorf("%s: no row %q in\n%s", name, want, out)
		}
	}
	if i, j := strings.Index(out, "ns/f1 "), strings.Index(out, "ns/l1 "); i > j {
		t.Errorf("group -5 not listed before group 10:\n%s", out)
	}
	js, err := json.Marshal(ToPlanJSON(plan))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`{"pod":"ns/f1","group":"order -5","order":-5,"source":"MachineDrainRule a-first"}`, `"until":"2026-11-28T08:00:00Z"`} {
		if !strings.Contains(string(js), want) {
			t.Errorf("%s not in the JSON plan %s", want, js)
		}
	}
}

// A --dry-run's plain lines show each node's drain order too.
func TestDryRunShowsDrainOrder(t *testing.T) {
	plan := &event.Plan{Nodes: []event.NodePlan{{Name: "n1", Order: []event.PodOrder{{Pod: "ns/f1", Group: "order -5", Order: -5}}}, {Name: "n2"}}}
	var b bytes.Buffer
	dryRunOrder(&b, plan)
	out := b.String()
	if !strings.Contains(out, "node/n1:") || !strings.Contains(out, "ns/f1") || strings.Contains(out, "node/n2") {
		t.Fatalf("dry-run order:\n%s", out)
	}
}

package mnttest

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// Issue 30, test 6: the controller run as a ServiceAccount holding exactly the ClusterRole
// of config/rbac/rbac.yaml drains a node and records the engine's node Events
// (events.k8s.io); with events.k8s.io taken out of its role, the controller names the
// missing permission at start.
func TestControllerAsItsServiceAccount(t *testing.T) {
	e := oneNodeWorkload(t, "a", "web", 2, nil, 0)
	rules := shippedControllerRules(t)
	kc := e.User(t, "controller", rules).Kubeconfig
	ctl := runControllerOn(e, "", "--kubeconfig", kc, "--leader-elect", "--leader-election-namespace="+e.NS)
	mc := mclient(t)
	create(e, mc, e.NS, mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: names(e, 0)})
	m, _ := waitFor(e, mc, e.NS, "the end", func(m *mntv1.Maintenance) bool { return m.Status.Phase.Done() })
	if m.Status.Phase != mntv1.PhaseSucceeded {
		t.Fatalf("phase %s (%s), want Succeeded", m.Status.Phase, m.Status.Message)
	}
	if s := ctl.logs.String(); strings.Contains(s, "the controller may not") {
		t.Errorf("the controller with the shipped role says it lacks a permission:\n%s", s)
	}
	reasons := map[string]bool{}
	deadline := time.Now().Add(20 * time.Second)
	for !reasons["Drained"] && time.Now().Before(deadline) {
		evs, err := e.C.EventsV1().Events(metav1.NamespaceAll).List(e.Ctx, metav1.ListOptions{FieldSelector: "regarding.name=" + e.Nodes[0]})
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs.Items {
			reasons[ev.Reason] = true
		}
		time.Sleep(500 * time.Millisecond)
	}
	if !reasons["Cordoned"] || !reasons["Drained"] {
		t.Errorf("node Events recorded as the ServiceAccount: %v, want Cordoned and Drained", reasons)
	}

	// The same role without events.k8s.io: the start names what is missing.
	var fewer []rbacv1.PolicyRule
	for _, r := range rules {
		if len(r.APIGroups) == 1 && r.APIGroups[0] == "events.k8s.io" {
			continue
		}
		fewer = append(fewer, r)
	}
	kc2 := e.User(t, "no-events", fewer).Kubeconfig
	ctl2 := runControllerOn(e, "", "--kubeconfig", kc2, "--leader-elect", "--leader-election-namespace="+e.NS)
	want := []string{"the controller may not create events.events.k8s.io", "the controller may not patch events.events.k8s.io"}
	deadline = time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) && !strings.Contains(ctl2.logs.String(), want[1]) {
		time.Sleep(200 * time.Millisecond)
	}
	for _, w := range want {
		if !strings.Contains(ctl2.logs.String(), w) {
			t.Errorf("the controller's start does not say %q:\n%s", w, ctl2.logs.String())
		}
	}
}

// shippedControllerRules are the rules of the controller's ClusterRole in
// config/rbac/rbac.yaml.
func shippedControllerRules(t *testing.T) []rbacv1.PolicyRule {
	t.Helper()
	raw, err := os.ReadFile("../../config/rbac/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range bytes.Split(raw, []byte("\n---")) {
		var r rbacv1.ClusterRole
		if err := yaml.Unmarshal(doc, &r); err != nil {
			t.Fatal(err)
		}
		if r.Kind == "ClusterRole" && r.Name == "kubectl-maintenance-controller" {
			return r.Rules
		}
	}
	t.Fatal("no controller ClusterRole in config/rbac/rbac.yaml")
	return nil
}

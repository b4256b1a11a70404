package mnttest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// createLabelled creates a Maintenance labelled test=<the env's namespace> (so that
// get -l selects the test's own objects in the shared cluster); deleted at the test's end.
func createLabelled(e *fixture.Env, mc client.Client, name string, spec mntv1.MaintenanceSpec) {
	e.T.Helper()
	m := &mntv1.Maintenance{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"test": e.NS}}, Spec: spec}
	if err := mc.Create(e.Ctx, m); err != nil {
		e.T.Fatal(err)
	}
	e.T.Cleanup(func() { _ = mc.Delete(e.Ctx, m) })
}

// ndjson parses every line of out as a JSON object (failing on a line that is not) and
// returns them in order.
func ndjson(t *testing.T, out string) []map[string]any {
	t.Helper()
	var evs []map[string]any
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		ev := map[string]any{}
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("a stdout line is not JSON: %q: %v\nstdout:\n%s", l, err, out)
		}
		evs = append(evs, ev)
	}
	return evs
}

// Issue 30, finding 8: get -o name prints kind.group/name per object; get -o json without
// a name prints a List even of one object (jsonpath over .items works); follow of a name
// that never existed is one line and exit 2. No controller runs: the objects stay as
// created.
func TestScriptingGetAndFollowNotFound(t *testing.T) {
	e := newEnv(t, "a")
	mc := mclient(t)
	sel := "test=" + e.NS
	spec := mntv1.MaintenanceSpec{Action: mntv1.ActionCordon, Nodes: []string{e.Nodes[0]}}
	one := e.NS + "-one"
	createLabelled(e, mc, one, spec)

	r := e.Run("get", "-l", sel, "-o", "json")
	if r.Code != 0 {
		t.Fatalf("get -o json: exit %d: %s", r.Code, r.Stderr)
	}
	var list struct {
		APIVersion, Kind string
		Items            []struct {
			Kind     string
			Metadata struct{ Name string }
		}
	}
	if err := json.Unmarshal([]byte(r.Stdout), &list); err != nil {
		t.Fatalf("get -o json: %v\n%s", err, r.Stdout)
	}
	if list.Kind != "List" || list.APIVersion != "v1" || len(list.Items) != 1 || list.Items[0].Metadata.Name != one || list.Items[0].Kind != "Maintenance" {
		t.Errorf("get -o json of exactly one Maintenance: %s %s with %+v, want a v1 List of maintenance %s", list.APIVersion, list.Kind, list.Items, one)
	}
	r = e.Run("get", "-l", sel, "-o", "jsonpath={.items[*].metadata.name}")
	if r.Code != 0 || r.Stdout != one {
		t.Errorf("get -o jsonpath={.items[*].metadata.name}: exit %d, %q, want %q", r.Code, r.Stdout, one)
	}
	r = e.Run("get", one, "-o", "json")
	if r.Code != 0 || !strings.Contains(r.Stdout, `"kind": "Maintenance"`) || strings.Contains(r.Stdout, `"kind": "List"`) {
		t.Errorf("get NAME -o json: exit %d, want the object alone:\n%s", r.Code, r.Stdout)
	}

	two := e.NS + "-two"
	createLabelled(e, mc, two, spec)
	r = e.Run("get", "-l", sel, "-o", "name")
	want := fmt.Sprintf("maintenance.maintenance.kubectl-maintenance.io/%s\nmaintenance.maintenance.kubectl-maintenance.io/%s\n", one, two)
	if r.Code != 0 || r.Stdout != want {
		t.Errorf("get -o name: exit %d (%s), stdout %q, want %q", r.Code, r.Stderr, r.Stdout, want)
	}
	r = e.Run("get", "-o", "name") // every Maintenance of the cluster, ours among them
	if r.Code != 0 || !strings.Contains(r.Stdout, "maintenance.maintenance.kubectl-maintenance.io/"+two+"\n") {
		t.Errorf("get -o name without a selector: exit %d (%s), stdout %q", r.Code, r.Stderr, r.Stdout)
	}
	if r = e.Run("get", one, "-l", sel); r.Code != 2 {
		t.Errorf("get NAME -l: exit %d, want 2 (kubectl: a name and a selector don't go together)", r.Code)
	}

	nosuch := e.NS + "-nosuch"
	r = e.Run("follow", nosuch)
	if r.Code != 2 || r.Stdout != "" || r.Stderr != fmt.Sprintf("error: maintenance %q not found\n", nosuch) {
		t.Errorf("follow %s: exit %d, stdout %q, stderr %q; want exit 2 and the one line `error: maintenance %q not found`", nosuch, r.Code, r.Stdout, r.Stderr, nosuch)
	}
	if r = e.Run("follow", nosuch, "-o", "json"); r.Code != 2 || r.Stdout != "" {
		t.Errorf("follow %s -o json: exit %d, stdout %q; want exit 2 and nothing on stdout", nosuch, r.Code, r.Stdout)
	}
}

// Issue 30, finding 8: drain --server-side -o json prints NDJSON like a local run's -o
// json (the version first, the nodes' events, the summary last with the exit code), every
// line JSON; the created line goes to stderr. follow -o json of the finished object ends
// the same way.
func TestScriptingServerSideDrainJSON(t *testing.T) {
	e := oneNodeWorkload(t, "a", "web", 2, &fixture.PDBSpec{App: "web", MaxUnavailable: fixture.Int(1)}, 1)
	startController(e)
	name := e.NS + "-json"
	r := e.Run("drain", "--server-side", "--name", name, "-o", "json", e.Nodes[0], "--ignore-daemonsets")
	t.Logf("stdout:\n%sstderr:\n%s", r.Stdout, r.Stderr)
	if r.Code != 0 {
		t.Fatalf("exit %d, want 0", r.Code)
	}
	fixture.MustContain(t, "stderr", r.Stderr, "maintenance.maintenance.kubectl-maintenance.io/"+name+" created")
	evs := ndjson(t, r.Stdout)
	var types []string
	for _, ev := range evs {
		types = append(types, fmt.Sprint(ev["type"]))
	}
	if len(evs) < 3 || types[0] != "version" || types[len(types)-1] != "summary" {
		t.Fatalf("events %v, want version first and summary last", types)
	}
	fixture.MustContain(t, "event types", strings.Join(types, " "), "node.cordoned", "node.drained")
	sum := evs[len(evs)-1]
	if sum["exit_code"] != float64(0) {
		t.Errorf("summary exit_code %v, want 0", sum["exit_code"])
	}
	if s, _ := sum["summary"].(map[string]any); s["nodes_drained"] != float64(1) || s["pods_evicted"] != float64(2) {
		t.Errorf("summary %v, want 1 node drained, 2 pods evicted", sum["summary"])
	}

	r = e.Run("follow", name, "-o", "json")
	if r.Code != 0 {
		t.Errorf("follow -o json of the finished object: exit %d, want 0", r.Code)
	}
	evs = ndjson(t, r.Stdout)
	if last := evs[len(evs)-1]; last["type"] != "summary" || last["exit_code"] != float64(0) {
		t.Errorf("follow -o json ends with %v, want the summary with exit_code 0", last)
	}
	_ = e.Run("cancel", name)
}

// Issue 30: the dashboard's x on a Maintenance asks first (the dialog's "Proceed? [y] yes
// [n] no"); n keeps the object, y deletes it. No controller runs (no finalizer): a
// deleted object is gone at once.
func TestDashboardAsksBeforeCancellingAMaintenance(t *testing.T) {
	e := newEnv(t, "a")
	fixture.NeedTmux(t)
	mc := mclient(t)
	name := e.NS + "-x"
	createLabelled(e, mc, name, mntv1.MaintenanceSpec{Action: mntv1.ActionCordon, Nodes: []string{e.Nodes[0]}})
	exists := func() bool {
		err := mc.Get(e.Ctx, types.NamespacedName{Name: name}, &mntv1.Maintenance{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		return err == nil
	}

	tm := fixture.StartTerm(t, e.NS, 120, 40, fmt.Sprintf("%s --kubeconfig %s dashboard", plugin, shared.Kubeconfig))
	tm.WaitFor(" nodes, ", 30*time.Second)
	tm.Keys("4")
	tm.WaitFor(name, 30*time.Second)
	// Other tests' Maintenances may be listed too: x names the one under the cursor;
	// keep it and move down until it is ours.
	question := "Cancel maintenance/" + name + " "
	for i := 0; ; i++ {
		tm.Keys("x")
		s := tm.WaitFor("Proceed? [y] yes  [n] no", 10*time.Second)
		if strings.Contains(s, question) {
			t.Logf("the question:\n%s", s)
			break
		}
		if i > 20 {
			t.Fatalf("x never asked about maintenance/%s:\n%s", name, s)
		}
		tm.Keys("n", "Down")
	}
	time.Sleep(time.Second) // time for a cancel that did not wait for the answer
	if !exists() {
		t.Fatal("x deleted the Maintenance before the answer")
	}
	tm.Keys("n")
	tm.WaitFor("maintenance/"+name+" not cancelled", 10*time.Second)
	time.Sleep(time.Second)
	if !exists() {
		t.Fatal("n deleted the Maintenance")
	}
	tm.Keys("x")
	tm.WaitFor(question, 10*time.Second)
	tm.Keys("y")
	tm.WaitFor("maintenance/"+name+" cancelled", 30*time.Second)
	deadline := time.Now().Add(30 * time.Second)
	for exists() {
		if time.Now().After(deadline) {
			t.Fatal("y did not delete the Maintenance")
		}
		time.Sleep(200 * time.Millisecond)
	}
	tm.Keys("q")
	tm.WaitFor("EXITED 0", 10*time.Second)
}

// Issue 30, findings 8 and 9: a Maintenance that gives a node up (onBlocked: skip) streams
// the blocked wait and the node given up as NDJSON, ends in a summary with exit code 3,
// and its status names the spec's fields (policy.onBlocked), not the CLI's flags.
func TestScriptingServerSideBlockedJSONSaysSpecFields(t *testing.T) {
	e := oneNodeWorkload(t, "stuck", "db", 1, &fixture.PDBSpec{App: "db", MinAvailable: fixture.Int(1)}, 0)
	startController(e)
	name := e.NS + "-blocked"
	r := e.Run("drain", "--server-side", "--name", name, "-o", "json", e.Nodes[0], "--on-blocked=skip", "--blocked-after=2s")
	t.Logf("stdout:\n%sstderr:\n%s", r.Stdout, r.Stderr)
	if r.Code != 3 {
		t.Errorf("exit %d, want 3", r.Code)
	}
	evs := ndjson(t, r.Stdout)
	var types []string
	for _, ev := range evs {
		types = append(types, fmt.Sprint(ev["type"]))
	}
	fixture.MustContain(t, "event types", strings.Join(types, " "), "pod.eviction_blocked", "node.blocked")
	if last := evs[len(evs)-1]; last["type"] != "summary" || last["exit_code"] != float64(3) {
		t.Errorf("the stream ends with %v, want the summary with exit_code 3", last)
	}
	m := get(e, mclient(t), name)
	said := m.Status.Message
	for _, n := range m.Status.Nodes {
		said += "\n" + n.Message
		for _, b := range n.Blockers {
			said += "\n" + b.Message + "\n" + b.Cause + "\n" + b.Remedy
		}
	}
	t.Logf("status words:\n%s", said)
	if strings.Contains(said, "--on-blocked") || strings.Contains(said, "--timeout") || strings.Contains(said, "--surge") {
		t.Errorf("the status names CLI flags:\n%s", said)
	}
	fixture.MustContain(t, "status", said, "policy.onBlocked: skip")
	_ = e.Run("cancel", name)
}

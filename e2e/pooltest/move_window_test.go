package pooltest

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// inPool reports whether the node carries pool's role label.
func inPool(e *fixture.Env, node, pool string) bool {
	_, ok := e.Node(node).Labels[nodepool.RoleLabel(pool)]
	return ok
}

// Issue 20, test 3: pool move is a sliding window. Four nodes leave a pool with
// maxUnavailable 1; node a holds a pod under a budget that allows no disruption until the
// test relaxes it (at least 60 s later). The other three move meanwhile (a batch-by-batch
// move that started with a would move none of them while a is held), a watcher sees at
// most one of the four unschedulable at a time, and once the budget allows it a moves
// too: exit 0. Without --timeout, the move says once that it waits until the budget
// changes and how to stop it (issue 21, point 6).
func TestMoveIsASlidingWindow(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a", "b", "c", "d", "g")
	blue, green := e.NS+"-blue", e.NS+"-green"
	applyPool(e, poolSpecYAML(blue, blue, 1))
	applyPool(e, poolSpecYAML(green, green, 1))
	poolNodes(e, blue, 0, 1, 2, 3)
	poolNodes(e, green, 4)
	applyPool(e, poolSpecYAML(blue, blue, 1))
	applyPool(e, poolSpecYAML(green, green, 1))
	held := fixture.PodOptions{NodeSelector: map[string]string{"kubernetes.io/hostname": e.Nodes[0]}, Tolerations: tolerateAll}
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "held", 1, held); err != nil {
		t.Fatal(err)
	}
	e.Ready("held", 1)
	e.PDB("held", fixture.PDBSpec{App: "held", MaxUnavailable: fixture.Int(0)}, 0)
	web := fixture.PodOptions{NodeSelector: map[string]string{"test": e.NS}, Tolerations: tolerateAll}
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", 3, web); err != nil {
		t.Fatal(err)
	}
	e.Ready("web", 3)
	e.PDB("web", fixture.PDBSpec{App: "web", MaxUnavailable: fixture.Int(1)}, 1)
	e.Guard()
	stop := unschedulablePeak(e, e.Nodes[:4])
	began := time.Now()
	done := make(chan fixture.Result, 1)
	go func() {
		done <- e.Run(append(append([]string{"pool", "move"}, e.Nodes[:4]...), "--to", green, "-o", "json")...)
	}()
	// The other three move while a is held (generous: the machine is shared).
	deadline := time.Now().Add(5 * time.Minute)
	for _, n := range e.Nodes[1:4] {
		for !inPool(e, n, green) {
			select {
			case r := <-done:
				t.Fatalf("pool move ended (exit %d) before %s moved\nstdout:\n%s\nstderr:\n%s", r.Code, n, r.Stdout, r.Stderr)
			case <-time.After(500 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				t.Fatalf("node %s did not move while %s was held by its budget", n, e.Nodes[0])
			}
		}
	}
	if inPool(e, e.Nodes[0], green) || !inPool(e, e.Nodes[0], blue) {
		t.Fatalf("node %s moved while its pod's budget allowed no disruption", e.Nodes[0])
	}
	// Hold a for 60 s in all, then let the budget allow one disruption.
	time.Sleep(time.Until(began.Add(60 * time.Second)))
	p, err := e.C.PolicyV1().PodDisruptionBudgets(e.NS).Get(e.Ctx, "held", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	one := intstr.FromInt32(1)
	p.Spec.MaxUnavailable = &one
	if _, err := e.C.PolicyV1().PodDisruptionBudgets(e.NS).Update(e.Ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	var r fixture.Result
	select {
	case r = <-done:
	case <-time.After(5 * time.Minute):
		t.Fatalf("pool move did not end once the budget allowed the held pod to go")
	}
	time.Sleep(200 * time.Millisecond) // let the last watch events arrive
	peak := stop()
	if r.Code != 0 {
		t.Fatalf("pool move exit %d, want 0\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if peak > 1 {
		t.Errorf("the watcher saw %d of the moving nodes unschedulable at once, want at most 1 (maxUnavailable 1)", peak)
	}
	for _, n := range e.Nodes[:4] {
		if !inPool(e, n, green) || inPool(e, n, blue) || e.Node(n).Spec.Unschedulable {
			t.Errorf("node %s is not moved to %s and schedulable", n, green)
		}
	}
	evs := ndjsonEvents(t, r.Stdout)
	if moved, _ := countEvents(evs, "node.moved"); len(moved) != 4 {
		t.Errorf("node.moved for %d node(s), want 4: %v", len(moved), moved)
	}
	// No --timeout, a budget that never allows: said once, with how the wait ends.
	forever := 0
	for _, ev := range evs {
		if ev["reason"] == drain.ReasonWaitsForever {
			forever++
			fixture.MustContain(t, "the wait-forever line", ev["message"].(string), "waits until the budget changes", "Ctrl-C")
		}
	}
	if forever != 1 {
		t.Errorf("%d lines say the move waits until the budget changes, want 1", forever)
	}
	t.Logf("FIGURE sliding move of 4 nodes, one held 60 s by a budget: %s wall, peak %d unschedulable", r.Elapsed.Round(time.Second), peak)
}

// Issue 20, test 4: a pool of five with maxUnavailable 1, one member cordoned by
// someone else (as kubectl cordon does) and another drained earlier and left cordoned:
// neither counts against the pool, so a move of two other members finishes (exit 0), and
// a wait line, if the move says one, names the foreign cordon as not counted.
func TestMoveIgnoresForeignAndLeftCordons(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a", "b", "c", "d", "e", "g")
	blue, green := e.NS+"-blue", e.NS+"-green"
	applyPool(e, poolSpecYAML(blue, blue, 1))
	applyPool(e, poolSpecYAML(green, green, 2))
	poolNodes(e, blue, 0, 1, 2, 3, 4)
	poolNodes(e, green, 5)
	applyPool(e, poolSpecYAML(blue, blue, 1))
	applyPool(e, poolSpecYAML(green, green, 2))
	o := fixture.PodOptions{NodeSelector: map[string]string{"test": e.NS}, Tolerations: tolerateAll}
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", 3, o); err != nil {
		t.Fatal(err)
	}
	e.Ready("web", 3)
	e.PDB("web", fixture.PDBSpec{App: "web", MaxUnavailable: fixture.Int(1)}, 1)
	foreign, left := e.Nodes[2], e.Nodes[3]
	if _, err := e.C.CoreV1().Nodes().Patch(e.Ctx, foreign, types.StrategicMergePatchType, []byte(`{"spec":{"unschedulable":true}}`),
		metav1.PatchOptions{FieldManager: "kubectl-cordon"}); err != nil {
		t.Fatal(err)
	}
	if r := e.Run("drain", left, "--ignore-daemonsets", "--timeout", "3m"); r.Code != 0 {
		t.Fatalf("the earlier drain of %s: exit %d\n%s", left, r.Code, r.Stderr)
	}
	if n := e.Node(left); !n.Spec.Unschedulable || n.Labels[noderecord.LabelState] != noderecord.StateDrained {
		t.Fatalf("node %s is not drained and cordoned before the move", left)
	}
	e.Ready("web", 3)
	e.Guard()
	r := e.Run("pool", "move", e.Nodes[0], e.Nodes[1], "--to", green, "-o", "json", "--timeout", "5m")
	if r.Code != 0 {
		t.Fatalf("pool move exit %d, want 0\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, n := range e.Nodes[:2] {
		if !inPool(e, n, green) || e.Node(n).Spec.Unschedulable {
			t.Errorf("node %s is not moved to %s and schedulable", n, green)
		}
	}
	for _, n := range []string{foreign, left} {
		if !e.Node(n).Spec.Unschedulable {
			t.Errorf("node %s was uncordoned by the move", n)
		}
	}
	waits := 0
	for _, ev := range ndjsonEvents(t, r.Stdout) {
		msg, _ := ev["message"].(string)
		if ev["reason"] != drain.ReasonRoom {
			continue
		}
		waits++
		t.Logf("wait line: %s", msg)
		if !strings.Contains(msg, "not counted: ") || !strings.Contains(msg, foreign+": cordoned by someone else") {
			t.Errorf("the wait line does not name %s as not counted (cordoned by someone else): %s", foreign, msg)
		}
		if strings.Contains(msg, "out of service ("+foreign) || strings.Contains(msg, "; "+foreign+": in progress") {
			t.Errorf("the wait line counts the foreign cordon: %s", msg)
		}
	}
	t.Logf("%d wait line(s)", waits)
}

package draintest

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// schedulable renders each node's schedulability.
func schedulable(e *fixture.Env, nodes ...string) string {
	var out []string
	for _, n := range nodes {
		out = append(out, fmt.Sprintf("%s=%v", n, !e.Node(n).Spec.Unschedulable))
	}
	return strings.Join(out, " ")
}

// Issue test 8: kill -9 right after the cordon, and again mid-eviction; the re-run
// finishes; uncordon restores exactly the state before, including a node someone else
// had cordoned before the drain.
func TestKillNineThenRerunAndUncordonRestore(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a", "b", "spare")
	e.AddNodes(0, 1)
	slow := e.Here(fixture.PodOptions{ReadyDelay: time.Second})
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", 4, slow); err != nil {
		t.Fatal(err)
	}
	e.Ready("web", 4)
	e.PDB("web", fixture.PDBSpec{App: "web", MaxUnavailable: fixture.Int(1)}, 1)
	e.AddNodes(2)
	cordonAs(t, e, e.Nodes[1], "someone-else", true)
	before := schedulable(e, e.Nodes[:2]...)
	e.Guard()
	args := []string{"drain", e.Nodes[0], e.Nodes[1]}

	r, _ := stream(t, e, syscall.SIGKILL, nth("node.cordoned", 2), args...)
	if r.Code != 137 {
		t.Errorf("killed after the cordon: exit %d, want 137", r.Code)
	}
	for _, n := range e.Nodes[:2] {
		if got := e.Node(n).Annotations[noderecord.AnnotationDrain]; got != noderecord.StateDraining {
			t.Errorf("node %s: resume record %q after kill -9 following its cordon, want %q", n, got, noderecord.StateDraining)
		}
	}
	r, _ = stream(t, e, syscall.SIGKILL, typ("pod.eviction_accepted"), args...)
	if r.Code != 137 {
		t.Errorf("killed mid-eviction: exit %d, want 137", r.Code)
	}
	r, _ = stream(t, e, 0, nil, append(args, "--timeout", "3m")...)
	if r.Code != 0 {
		t.Fatalf("re-run exit %d, want 0", r.Code)
	}
	for _, n := range e.Nodes[:2] {
		if left := e.PodsOn(n); len(left) != 0 {
			t.Errorf("%d pods left on %s", len(left), n)
		}
	}
	r = e.Run("uncordon", e.Nodes[0], e.Nodes[1])
	if r.Code != 0 {
		t.Fatalf("uncordon exit %d", r.Code)
	}
	if after := schedulable(e, e.Nodes[:2]...); after != before {
		t.Errorf("after uncordon: %s, want the state before the drain: %s", after, before)
	}
	mustContain(t, "uncordon", r.Stdout, "node/"+e.Nodes[1]+" left cordoned", "someone-else")
	for _, n := range e.Nodes[:2] {
		ann := e.Node(n).Annotations
		if _, ok := ann[noderecord.AnnotationDrain]; ok {
			t.Errorf("node %s keeps %s after uncordon", n, noderecord.AnnotationDrain)
		}
		if _, ok := ann[noderecord.AnnotationCordoned]; ok {
			t.Errorf("node %s keeps %s after uncordon", n, noderecord.AnnotationCordoned)
		}
	}
}

// Issue test 9: a stale cordon record (cordoned by us, "kubectl uncordon", cordoned again
// by someone else): our uncordon leaves it cordoned unless --force. A node cordoned by
// someone else, the drain killed at each of its first steps, then uncordon twice: still
// cordoned; the dry runs say what the real command does.
func TestStaleCordonRecordAndKilledEarlySteps(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a", "b")
	e.AddNodes()
	a, b := e.Nodes[0], e.Nodes[1]

	if r := e.Run("drain", a); r.Code != 0 {
		t.Fatalf("drain exit %d", r.Code)
	}
	cordonAs(t, e, a, "kubectl", false) // a plain kubectl uncordon
	cordonAs(t, e, a, "kubectl", true)  // someone cordons it again
	for i := range 2 {
		r := e.Run("uncordon", a)
		if r.Code != 0 || !e.Node(a).Spec.Unschedulable {
			t.Fatalf("uncordon #%d of a node someone else cordoned after us: exit %d, schedulable now", i+1, r.Code)
		}
		mustContain(t, "uncordon", r.Stdout, "left cordoned", "kubectl")
	}
	if r := e.Run("uncordon", a, "--force"); r.Code != 0 || e.Node(a).Spec.Unschedulable {
		t.Fatalf("uncordon --force: exit %d, still cordoned=%v", r.Code, e.Node(a).Spec.Unschedulable)
	}

	cordonAs(t, e, b, "someone-else", true)
	for _, at := range []func(map[string]any) bool{typ("plan"), typ("node.cordoned")} {
		r, _ := stream(t, e, syscall.SIGKILL, at, "drain", b)
		if r.Code != 137 && r.Code != 0 {
			t.Errorf("killed drain: exit %d", r.Code)
		}
	}
	var real []string
	for _, mode := range []string{"client", "server", "none", "none"} {
		r := e.Run("uncordon", b, "--dry-run="+mode)
		if r.Code != 0 {
			t.Fatalf("uncordon --dry-run=%s: exit %d", mode, r.Code)
		}
		mustContain(t, "uncordon --dry-run="+mode, r.Stdout, "left cordoned")
		real = append(real, strings.TrimSpace(strings.NewReplacer(" (dry run)", "", " (server dry run)", "").Replace(r.Stdout)))
		if !e.Node(b).Spec.Unschedulable {
			t.Fatalf("uncordon --dry-run=%s uncordoned a node someone else cordoned", mode)
		}
	}
	for _, s := range real[1:] {
		if s != real[0] {
			t.Errorf("uncordon answers differ: %q vs %q", real[0], s)
		}
	}
}

// Issue test 10: bad input is one line on stderr, exit 2, nothing printed before it, and
// the cluster untouched.
func TestBadInputIsOneLineAndChangesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a")
	e.AddNodes()
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", 1, e.Here(fixture.PodOptions{})); err != nil {
		t.Fatal(err)
	}
	e.Ready("web", 1)
	was := versions(e, e.Nodes[0])
	n := e.Nodes[0]
	for _, args := range [][]string{
		{"drain", n, "--timeout", "-5s"},
		{"drain", n, "--timeout", "soon"},
		{"drain", n, "--grace-period", "-2"},
		{"drain", n, "--skip-wait-for-delete-timeout", "-1"},
		{"drain", n, "--pod-selector", "a=b=c=,"},
		{"drain", n, "-o", "yaml"},
		{"cordon", "bad-0/x"},
		{"uncordon", "Bad_Name"},
		{"drain", "-l", "a=b=c=,"},
	} {
		r := e.Run(args...)
		lines := strings.Split(strings.TrimSpace(r.Stderr), "\n")
		if r.Code != 2 || r.Stdout != "" || len(lines) != 1 || !strings.HasPrefix(lines[0], "error: ") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2, nothing on stdout, one error line", args, r.Code, r.Stdout, r.Stderr)
		}
	}
	if now := versions(e, n); now != was {
		t.Errorf("bad input changed the cluster:\nbefore %s\nafter  %s", was, now)
	}
}

// Issue 21: runs own their nodes. An uncordon of a node a live run is draining leaves it
// to that run (one line naming the run, exit 1, the node still cordoned with the run's
// record); --force takes it.
func TestUncordonLeavesALiveRunsNode(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a")
	e.AddNodes(0)
	oneReplica(t, e, "db", 0, fixture.PDBSpec{MinAvailable: fixture.Int(1)}) // never allows
	e.Guard()
	ctx, cancel := context.WithCancel(e.Ctx)
	done := make(chan fixture.Result, 1)
	go func() { done <- e.RunCtx(ctx, nil, "drain", e.Nodes[0], "--timeout", "2m") }()
	defer func() { cancel(); <-done }()
	waitFor(t, e, "the drain's heartbeat on the node", func() bool {
		return !noderecord.Read(e.Node(e.Nodes[0]), "").Heartbeat.IsZero()
	})

	r := e.Run("uncordon", e.Nodes[0])
	if r.Code != 1 {
		t.Errorf("uncordon of a node a live run holds: exit %d, want 1", r.Code)
	}
	fixture.MustContain(t, "stderr", r.Stderr, "node "+e.Nodes[0]+" is held by", "drain "+e.Nodes[0])
	n := e.Node(e.Nodes[0])
	if rec := noderecord.Read(n, ""); !n.Spec.Unschedulable || rec.State == "" || rec.Run.ID == "" {
		t.Errorf("after the refused uncordon: unschedulable %v, record %+v; want the run's cordon and record", n.Spec.Unschedulable, rec)
	}

	if r := e.Run("uncordon", e.Nodes[0], "--force"); r.Code != 0 {
		t.Errorf("uncordon --force: exit %d\n%s", r.Code, r.Stderr)
	}
	if e.Node(e.Nodes[0]).Spec.Unschedulable {
		t.Errorf("uncordon --force left %s cordoned", e.Nodes[0])
	}
}

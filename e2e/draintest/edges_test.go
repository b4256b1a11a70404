package draintest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

// stream runs the plugin with -o json and sends sig once the NDJSON line for which at
// returns true has been read (never, when at is nil). It returns the result and every
// line.
func stream(t *testing.T, e *fixture.Env, sig syscall.Signal, at func(ev map[string]any) bool, args ...string) (fixture.Result, []map[string]any) {
	t.Helper()
	cmd := exec.CommandContext(e.Ctx, plugin, append([]string{"--kubeconfig", shared.Kubeconfig, "-o", "json"}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	began := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var lines []map[string]any
	var raw strings.Builder
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	sent := false
	for sc.Scan() {
		raw.WriteString(sc.Text() + "\n")
		var ev map[string]any
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		lines = append(lines, ev)
		if !sent && at != nil && at(ev) {
			sent = true
			_ = cmd.Process.Signal(sig)
		}
	}
	err = cmd.Wait()
	r := fixture.Result{Stdout: raw.String(), Stderr: errb.String(), Elapsed: time.Since(began)}
	if ee, ok := err.(*exec.ExitError); ok {
		r.Code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			r.Code = 128 + int(ws.Signal())
		}
	}
	t.Logf("$ kubectl maintenance -o json %s  (exit %d, %s, signal sent %v)\n%s%s", strings.Join(args, " "), r.Code, r.Elapsed.Round(time.Millisecond), sent, r.Stdout, r.Stderr)
	if strings.Contains(r.Stderr, "panic") {
		t.Errorf("the plugin panicked:\n%s", r.Stderr)
	}
	return r, lines
}

func typ(want string) func(map[string]any) bool {
	return func(ev map[string]any) bool { return ev["type"] == want }
}

// nth is true at the n-th line of type want.
func nth(want string, n int) func(map[string]any) bool {
	seen := 0
	return func(ev map[string]any) bool {
		if ev["type"] == want {
			seen++
		}
		return seen == n && ev["type"] == want
	}
}

// cordonAs cordons (true) or uncordons (false) node as a user with another field manager.
func cordonAs(t *testing.T, e *fixture.Env, node, manager string, on bool) {
	t.Helper()
	patch := `{"spec":{"unschedulable":true}}`
	if !on {
		patch = `{"spec":{"unschedulable":null}}`
	}
	if _, err := e.C.CoreV1().Nodes().Patch(e.Ctx, node, types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: manager}); err != nil {
		t.Fatal(err)
	}
}

// Issue test 1: two nodes drained one at a time while no other node can take their pods.
// The whole batch is cordoned before the first eviction, so no evicted pod lands on the
// second node; both end empty (the evicted pods' replacements Pending).
func TestBatchIsCordonedBeforeAnyEviction(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a", "b")
	e.AddNodes()
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", 4, e.Here(fixture.PodOptions{})); err != nil {
		t.Fatal(err)
	}
	e.Ready("web", 4)
	g := e.Guard()
	r, lines := stream(t, e, 0, nil, "drain", e.Nodes[0], e.Nodes[1], "--max-parallel-nodes", "1")
	if r.Code != 0 {
		t.Fatalf("drain exit %d, want 0", r.Code)
	}
	cordoned, firstEviction := 0, -1
	for i, ev := range lines {
		switch ev["type"] {
		case "node.cordoned":
			cordoned++
			if firstEviction >= 0 {
				t.Errorf("node %v cordoned after the first eviction (line %d)", ev["node"], i)
			}
		case "pod.eviction_started":
			if firstEviction < 0 {
				firstEviction = i
			}
		}
	}
	if cordoned != 2 || firstEviction < 0 {
		t.Errorf("%d nodes cordoned, first eviction at line %d", cordoned, firstEviction)
	}
	for _, n := range e.Nodes {
		if left := e.PodsOn(n); len(left) != 0 {
			t.Errorf("node %s reported drained with %d pods on it", n, len(left))
		}
	}
	pods, err := e.C.CoreV1().Pods(e.NS).List(e.Ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && p.Spec.NodeName != "" {
			t.Errorf("pod %s running on %s, want every replacement Pending", p.Name, p.Spec.NodeName)
		}
	}
	if g.Deleted < 4 {
		t.Errorf("guard saw %d pods evicted, want 4", g.Deleted)
	}
}

// Issue test 2: a pod tolerating node.kubernetes.io/unschedulable. The plan warns about it,
// the drain evicts it once and names its replacement that comes back; no loop.
func TestPodToleratingTheCordonIsEvictedOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a")
	e.AddNodes()
	tol := []corev1.Toleration{{Key: corev1.TaintNodeUnschedulable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "agent", 1, e.Here(fixture.PodOptions{Tolerations: tol, DeleteDelay: 3 * time.Second})); err != nil {
		t.Fatal(err)
	}
	old := e.Ready("agent", 1)[0]
	e.Guard()
	r := e.Run("plan", e.Nodes[0])
	mustContain(t, "plan", r.Stdout+r.Stderr, "node.kubernetes.io/unschedulable", old.Name)

	r, lines := stream(t, e, 0, nil, "drain", e.Nodes[0], "--timeout", "2m")
	if r.Code != 0 {
		t.Fatalf("drain exit %d, want 0", r.Code)
	}
	mustContain(t, "drain output", r.Stdout+r.Stderr, "ReturnedToNode", "tolerates the cordon")
	sum := lines[len(lines)-1]["summary"].(map[string]any)
	if n := sum["eviction_requests"].(float64); n != 1 {
		t.Errorf("%v eviction requests, want 1 (no loop)", n)
	}
	back := e.Ready("agent", 1)[0]
	if back.UID == old.UID || !strings.Contains(r.Stdout+r.Stderr, back.Name) {
		t.Errorf("the replacement %s is not named in the output", back.Name)
	}
}

// Issue test 7: SIGINT at four moments of an eight-node drain: exit 130, never a panic,
// and the same command run again finishes.
func TestInterruptAtFourMomentsThenRerunFinishes(t *testing.T) {
	moments := map[string]func(map[string]any) bool{
		"plan":     typ("plan"),
		"cordon":   nth("node.cordoned", 3),
		"eviction": typ("pod.eviction_started"),
		"blocked":  typ("pod.eviction_blocked"),
	}
	for name, at := range moments {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, "a", "b", "c", "d", "e", "f", "g", "h", "spare")
			e.AddNodes(0, 1, 2, 3, 4, 5, 6, 7)
			slow := e.Here(fixture.PodOptions{ReadyDelay: time.Second})
			if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", 8, slow); err != nil {
				t.Fatal(err)
			}
			e.Ready("web", 8)
			e.PDB("web", fixture.PDBSpec{App: "web", MaxUnavailable: fixture.Int(1)}, 1)
			e.AddNodes(8)
			e.Guard()
			args := append([]string{"drain"}, e.Nodes[:8]...)
			r, _ := stream(t, e, syscall.SIGINT, at, append(args, "--max-parallel-nodes", "8")...)
			if r.Code != 130 {
				t.Errorf("interrupted at %s: exit %d, want 130", name, r.Code)
			}
			r, _ = stream(t, e, 0, nil, append(args, "--max-parallel-nodes", "8", "--timeout", "4m")...)
			if r.Code != 0 {
				t.Fatalf("re-run exit %d, want 0", r.Code)
			}
			for _, n := range e.Nodes[:8] {
				if left := e.PodsOn(n); len(left) != 0 {
					t.Errorf("%d pods left on %s", len(left), n)
				}
			}
		})
	}
}

// The live node: a pod bound by name to the node while its drain waits on a budget goes
// through kubectl's filters and is evicted; the node is drained only once it is gone.
func TestPodBoundToTheNodeDuringTheDrainIsEvicted(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a", "spare")
	e.AddNodes(0)
	slow := e.Here(fixture.PodOptions{ReadyDelay: 3 * time.Second})
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", 2, slow); err != nil {
		t.Fatal(err)
	}
	e.Ready("web", 2)
	e.PDB("web", fixture.PDBSpec{App: "web", MaxUnavailable: fixture.Int(1)}, 1)
	e.AddNodes(1)
	g := e.Guard()
	created := false
	bind := func(ev map[string]any) bool {
		if !created && ev["type"] == "pod.eviction_accepted" {
			created = true
			if _, err := fixture.BarePod(e.Ctx, e.C, e.NS, "bound", fixture.PodOptions{NodeName: e.Nodes[0]}); err != nil {
				t.Error(err)
			}
		}
		return false
	}
	r, lines := stream(t, e, 0, bind, "drain", e.Nodes[0], "--force", "--timeout", "2m")
	if r.Code != 0 || !created {
		t.Fatalf("drain exit %d (pod bound during the drain: %v), want 0", r.Code, created)
	}
	evicted := false
	for _, ev := range lines {
		if ev["type"] == "pod.evicted" && ev["pod"] == e.NS+"/bound" {
			evicted = true
		}
	}
	if !evicted {
		t.Error("the pod bound to the node during its drain was not evicted")
	}
	if left := e.PodsOn(e.Nodes[0]); len(left) != 0 {
		t.Errorf("node reported drained with %d pods on it", len(left))
	}
	if g.Deleted < 3 {
		t.Errorf("guard saw %d pods evicted, want 3", g.Deleted)
	}
}

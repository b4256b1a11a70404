package pooltest

import (
	"context"
	"fmt"
	"os/exec"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// moveSetup makes pools blue and green, puts pods of app web (replicas, under
// maxUnavailable 1) on the first blueNodes nodes in blue, then adds the next greenNodes
// nodes to green and syncs it. It returns the pool names.
func moveSetup(e *fixture.Env, replicas int32, blueNodes, greenNodes int) (string, string) {
	e.T.Helper()
	blue, green := e.NS+"-blue", e.NS+"-green"
	for _, p := range []string{blue, green} {
		if r := applyPool(e, poolYAML(p, p, p, "")); r.Code != 0 {
			e.T.Fatalf("pool apply exit %d", r.Code)
		}
	}
	for i := range blueNodes {
		poolNodes(e, blue, i)
	}
	o := fixture.PodOptions{ReadyDelay: time.Second, NodeSelector: map[string]string{"test": e.NS}, Tolerations: tolerateAll}
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", replicas, o); err != nil {
		e.T.Fatal(err)
	}
	e.Ready("web", int(replicas))
	e.PDB("web", fixture.PDBSpec{App: "web", MaxUnavailable: fixture.Int(1)}, 1)
	for i := range greenNodes {
		poolNodes(e, green, blueNodes+i)
	}
	if r := e.Run("pool", "sync"); r.Code != 0 {
		e.T.Fatalf("pool sync exit %d", r.Code)
	}
	return blue, green
}

func TestMoveUnderAPDB(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a", "b", "c")
	blue, green := moveSetup(e, 3, 1, 2)
	g := e.Guard()
	r := e.Run("pool", "move", e.Nodes[0], "--to", green)
	if r.Code != 0 {
		t.Fatalf("pool move exit %d", r.Code)
	}
	t.Logf("FIGURE pool move of 1 node with 3 pods under a PDB: %s", r.Elapsed.Round(time.Millisecond))
	checkMoved(e, e.Nodes[0], blue, green)
	if g.Deleted != 3 {
		t.Errorf("guard saw %d evictions, want 3", g.Deleted)
	}
	e.Ready("web", 3)
}

func TestKilledMoveIsFinishedByARerun(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a", "b")
	blue, green := e.NS+"-blue", e.NS+"-green"
	applyPool(e, poolYAML(blue, blue, blue, ""))
	applyPool(e, poolYAML(green, green, green, ""))
	poolNodes(e, blue, 0)
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "frozen", 1, fixture.PodOptions{NodeSelector: map[string]string{"test": e.NS}, Tolerations: tolerateAll}); err != nil {
		t.Fatal(err)
	}
	e.Ready("frozen", 1)
	e.PDB("frozen", fixture.PDBSpec{App: "frozen", MaxUnavailable: fixture.Int(0)}, 0)
	poolNodes(e, green, 1)
	applyPool(e, poolYAML(green, green, green, "")) // sync the new member
	e.Guard()
	// The drain waits on the frozen budget; kill -9 the move while it does.
	r := e.RunCtx(e.Ctx, func(cmd *exec.Cmd) {
		waitFor(e, e.Nodes[0], func(n *corev1.Node) bool {
			return n.Annotations[noderecord.AnnotationDrain] == noderecord.StateDraining
		})
		_ = cmd.Process.Signal(syscall.SIGKILL)
	}, "pool", "move", e.Nodes[0], "--to", green)
	if r.Code != -1 {
		t.Logf("killed move exit %d", r.Code)
	}
	n := e.Node(e.Nodes[0])
	if !n.Spec.Unschedulable || n.Annotations[nodepool.MoveAnnotation] == "" {
		t.Fatalf("after the kill the node should be cordoned and record the move: %v %v", n.Spec.Unschedulable, n.Annotations)
	}
	if _, err := e.C.PolicyV1().PodDisruptionBudgets(e.NS).Patch(e.Ctx, "frozen", types.MergePatchType, []byte(`{"spec":{"maxUnavailable":1}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	r = e.Run("pool", "move", e.Nodes[0], "--to", green)
	if r.Code != 0 {
		t.Fatalf("re-run exit %d", r.Code)
	}
	fixture.MustContain(t, "stderr", r.Stderr, "(resuming)")
	checkMoved(e, e.Nodes[0], blue, green)
}

func waitFor(e *fixture.Env, node string, cond func(*corev1.Node) bool) {
	e.T.Helper()
	w, err := e.C.CoreV1().Nodes().Watch(e.Ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + node})
	if err != nil {
		e.T.Fatal(err)
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		if n, ok := ev.Object.(*corev1.Node); ok && ev.Type != watch.Deleted && cond(n) {
			return
		}
	}
	e.T.Fatalf("watch of node %s ended", node)
}

func TestConcurrentWriterDuringAMove(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a", "b", "c")
	blue, green := moveSetup(e, 3, 1, 2)
	// Another writer adds a label every 50 ms while the move runs.
	ctx, cancel := context.WithCancel(e.Ctx)
	written := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ctx.Err() == nil; i++ {
			patch := fmt.Sprintf(`{"metadata":{"labels":{"writer.example.com/n%d":"x"}}}`, i)
			if _, err := e.C.CoreV1().Nodes().Patch(ctx, e.Nodes[0], types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err == nil {
				written = i + 1
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	r := e.Run("pool", "move", e.Nodes[0], "--to", green)
	cancel()
	<-done
	if r.Code != 0 {
		t.Fatalf("pool move exit %d", r.Code)
	}
	n := e.Node(e.Nodes[0])
	for i := range written {
		if _, ok := n.Labels[fmt.Sprintf("writer.example.com/n%d", i)]; !ok {
			t.Errorf("label writer.example.com/n%d written during the move was lost", i)
		}
	}
	t.Logf("the concurrent writer wrote %d labels during the move", written)
	checkMoved(e, e.Nodes[0], blue, green)
}

func TestMoveThreeNodes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a", "b", "c", "d", "e", "f")
	blue, green := moveSetup(e, 6, 3, 3)
	e.Guard()
	r := e.Run("pool", "move", e.Nodes[0], e.Nodes[1], e.Nodes[2], "--to", green, "-o", "json")
	if r.Code != 0 {
		t.Fatalf("pool move exit %d", r.Code)
	}
	sum := r.Summary(t)
	t.Logf("FIGURE pool move of 3 nodes (6 pods under maxUnavailable 1, 1 s readiness, the pool's maxUnavailable 1): %s, %v API requests (%.1f per node moved)",
		r.Elapsed.Round(time.Millisecond), sum["api_requests"], sum["api_requests"].(float64)/3)
	for _, n := range e.Nodes[:3] {
		checkMoved(e, n, blue, green)
	}
}

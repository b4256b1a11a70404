package pooltest

import (
	"context"
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
)

// Issue 11, test 4: kill -9 at each step of a two-node move, then the same command: exit
// 0, both nodes in the target pool, and no pod evicted twice. "After the relabel, before
// the uncordon" is no longer a state: the relabel, the removal of the move record and the
// uncordon are one patch; the last kill point is right after the first node's patch.
func TestKillNineAtEachStepOfATwoNodeMove(t *testing.T) {
	t.Parallel()
	steps := []struct {
		name string
		// reached blocks until the step is reached (watching), then returns.
		reached func(e *fixture.Env, green string)
	}{
		{"after-cordon", func(e *fixture.Env, _ string) {
			waitFor(e, e.Nodes[0], func(n *corev1.Node) bool {
				return n.Spec.Unschedulable && n.Annotations[nodepool.MoveAnnotation] != ""
			})
		}},
		{"mid-drain", func(e *fixture.Env, _ string) { waitForEviction(e) }},
		{"after-first-node-relabelled", func(e *fixture.Env, green string) {
			waitFor(e, e.Nodes[0], func(n *corev1.Node) bool { _, ok := n.Labels[nodepool.RoleLabel(green)]; return ok })
		}},
	}
	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, "a", "b", "g")
			blue, green := e.NS+"-blue", e.NS+"-green"
			applyPool(e, poolYAML(blue, blue, blue, ""))
			applyPool(e, poolYAML(green, green, green, ""))
			// Two pods on each node: two replicas while only a exists, two more while a
			// is cordoned by hand (then uncordoned by hand).
			poolNodes(e, blue, 0)
			o := fixture.PodOptions{ReadyDelay: 2 * time.Second, NodeSelector: map[string]string{"test": e.NS}, Tolerations: tolerateAll}
			if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", 2, o); err != nil {
				t.Fatal(err)
			}
			e.Ready("web", 2)
			poolNodes(e, blue, 1)
			setUnschedulable(e, e.Nodes[0], true)
			if _, err := e.C.AppsV1().Deployments(e.NS).Patch(e.Ctx, "web", types.MergePatchType, []byte(`{"spec":{"replicas":4}}`), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
			e.Ready("web", 4)
			setUnschedulable(e, e.Nodes[0], false)
			t.Logf("pods per node before the move: a %d, b %d", len(e.PodsOn(e.Nodes[0])), len(e.PodsOn(e.Nodes[1])))
			e.PDB("web", fixture.PDBSpec{App: "web", MaxUnavailable: fixture.Int(1)}, 1)
			poolNodes(e, green, 2)
			applyPool(e, poolYAML(green, green, green, ""))
			e.Guard()
			args := []string{"pool", "move", e.Nodes[0], e.Nodes[1], "--to", green, "-o", "json"}
			killed := e.RunCtx(e.Ctx, func(cmd *exec.Cmd) {
				step.reached(e, green)
				_ = cmd.Process.Signal(syscall.SIGKILL)
			}, args...)
			if killed.Code == 0 {
				t.Logf("the move finished before the kill landed")
			}
			r := e.Run(args...)
			if r.Code != 0 {
				t.Fatalf("re-run exit %d, want 0", r.Code)
			}
			for _, n := range e.Nodes[:2] {
				checkMoved(e, n, blue, green)
			}
			evs := append(ndjsonEvents(t, killed.Stdout), ndjsonEvents(t, r.Stdout)...)
			requests, _ := countEvents(evs, "pod.eviction_started")
			_, accepted := countEvents(evs, "pod.eviction_accepted")
			total := 0
			for _, c := range requests {
				total += c
			}
			for pod, c := range accepted {
				if c > 1 {
					t.Errorf("pod %s: %d accepted evictions, want at most 1", pod, c)
				}
			}
			t.Logf("FIGURE kill -9 %s, then the same command: %d eviction requests for 2 nodes moved (%.1f per node; per node %v)",
				step.name, total, float64(total)/2, requests)
		})
	}
}

// waitForEviction returns once a pod of the namespace is terminating (an accepted
// eviction). It lists first, then watches from there, so it misses nothing.
func waitForEviction(e *fixture.Env) {
	e.T.Helper()
	ctx, cancel := context.WithCancel(e.Ctx)
	defer cancel()
	list, err := e.C.CoreV1().Pods(e.NS).List(ctx, metav1.ListOptions{})
	if err != nil {
		e.T.Fatal(err)
	}
	for _, p := range list.Items {
		if p.DeletionTimestamp != nil {
			return
		}
	}
	w, err := e.C.CoreV1().Pods(e.NS).Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		e.T.Fatal(err)
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		if p, ok := ev.Object.(*corev1.Pod); ok && (ev.Type == watch.Deleted || p.DeletionTimestamp != nil) {
			return
		}
	}
}

// setUnschedulable cordons or uncordons a node by hand (as another tool would).
func setUnschedulable(e *fixture.Env, node string, on bool) {
	e.T.Helper()
	patch := []byte(`{"spec":{"unschedulable":null}}`)
	if on {
		patch = []byte(`{"spec":{"unschedulable":true}}`)
	}
	if _, err := e.C.CoreV1().Nodes().Patch(e.Ctx, node, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "someone-else"}); err != nil {
		e.T.Fatal(err)
	}
}

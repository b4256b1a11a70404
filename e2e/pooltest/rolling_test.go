package pooltest

import (
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// Issue 11, test 1: four nodes move out of a pool with maxUnavailable 1; a node watcher
// sees at most one of them unschedulable at any moment.
func TestRollingMoveOfFourNodes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a", "b", "c", "d", "g")
	blue, green := e.NS+"-blue", e.NS+"-green"
	for _, p := range []string{blue, green} {
		if r := applyPool(e, poolYAML(p, p, p, "")); r.Code != 0 {
			t.Fatalf("pool apply exit %d", r.Code)
		}
	}
	poolNodes(e, blue, 0, 1, 2, 3)
	o := fixture.PodOptions{ReadyDelay: time.Second, NodeSelector: map[string]string{"test": e.NS}, Tolerations: tolerateAll}
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", 4, o); err != nil {
		t.Fatal(err)
	}
	e.Ready("web", 4)
	e.PDB("web", fixture.PDBSpec{App: "web", MaxUnavailable: fixture.Int(1)}, 1)
	poolNodes(e, green, 4)
	applyPool(e, poolYAML(green, green, green, "")) // sync the new member
	e.Guard()
	stop := unschedulablePeak(e, e.Nodes[:4])
	r := e.Run(append(append([]string{"pool", "move"}, e.Nodes[:4]...), "--to", green, "-o", "json")...)
	peak := stop()
	if r.Code != 0 {
		t.Fatalf("pool move exit %d", r.Code)
	}
	sum := r.Summary(t)
	t.Logf("FIGURE rolling move of 4 nodes out of a pool with maxUnavailable 1 (4 pods under a PDB, 1 s readiness): %s wall, %v eviction requests, peak %d node(s) unschedulable",
		r.Elapsed.Round(time.Millisecond), sum["eviction_requests"], peak)
	if peak > 1 {
		t.Errorf("the watcher saw %d of the source pool's nodes unschedulable at once, want at most 1 (maxUnavailable 1)", peak)
	}
	if moved := strings.Count(r.Stdout, `"type":"node.moved"`); moved != 4 {
		t.Errorf("%d node.moved events, want 4", moved)
	}
	for _, n := range e.Nodes[:4] {
		checkMoved(e, n, blue, green)
	}
	e.Ready("web", 4)
	// The same command again: every node is in the target already, nothing to do.
	r = e.Run(append(append([]string{"pool", "move"}, e.Nodes[:4]...), "--to", green)...)
	if r.Code != 0 {
		t.Fatalf("re-run exit %d, want 0 (nothing to do)", r.Code)
	}
	fixture.MustContain(t, "stderr", r.Stderr, "already in pool "+green+", nothing to do")
}

// Issue 11, test 2: a move into a pool with a NoExecute taint, the node holding a pod
// under a budget that never allows a disruption: the move stops at --timeout (124) naming
// the PDB, and the pod is never deleted. Bad flags and --pod-selector change nothing.
func TestMoveIntoNoExecutePoolStopsAtTheBudget(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a", "g")
	blue, green := e.NS+"-blue", e.NS+"-green"
	applyPool(e, poolYAML(blue, blue, blue, ""))
	applyPool(e, poolSpecYAML(green, green, 1, "example.com/dedicated="+green+":NoSchedule", "example.com/isolated=yes:NoExecute"))
	poolNodes(e, blue, 0)
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "frozen", 1, fixture.PodOptions{NodeSelector: map[string]string{"test": e.NS}, Tolerations: tolerateAll}); err != nil {
		t.Fatal(err)
	}
	pod := e.Ready("frozen", 1)[0]
	e.PDB("frozen", fixture.PDBSpec{App: "frozen", MaxUnavailable: fixture.Int(0)}, 0)
	poolNodes(e, green, 1)
	applyPool(e, poolSpecYAML(green, green, 1, "example.com/dedicated="+green+":NoSchedule", "example.com/isolated=yes:NoExecute"))
	e.Guard()
	before := e.Node(e.Nodes[0])
	for _, bad := range [][]string{{"--timeout", "-5s"}, {"--grace-period", "-7"}, {"--pod-selector", "app=frozen"}, {"--skip-wait-for-delete-timeout", "-1"}} {
		r := e.Run(append([]string{"pool", "move", e.Nodes[0], "--to", green}, bad...)...)
		if r.Code != 2 {
			t.Errorf("%v: exit %d, want 2", bad, r.Code)
		}
		oneLine(t, r.Stderr)
		fixture.MustContain(t, "stderr", r.Stderr, strings.TrimPrefix(bad[0], "--"))
		n := e.Node(e.Nodes[0])
		if n.ResourceVersion != before.ResourceVersion && (n.Spec.Unschedulable || n.Annotations[nodepool.MoveAnnotation] != "") {
			t.Errorf("%v: the node was written: unschedulable %v, annotations %v", bad, n.Spec.Unschedulable, n.Annotations)
		}
	}
	r := e.Run("pool", "move", e.Nodes[0], "--to", green, "--timeout", "8s")
	if r.Code != 124 {
		t.Fatalf("pool move exit %d, want 124", r.Code)
	}
	fixture.MustContain(t, "stderr", r.Stderr, e.NS+"/frozen")
	got, err := e.C.CoreV1().Pods(e.NS).Get(e.Ctx, pod.Name, metav1.GetOptions{})
	if err != nil || got.UID != pod.UID || got.DeletionTimestamp != nil {
		t.Errorf("the pod under the never-allowing budget was deleted or is terminating (err %v)", err)
	}
	n := e.Node(e.Nodes[0])
	if _, ok := n.Labels[nodepool.RoleLabel(green)]; ok {
		t.Errorf("the node was relabelled into %s with the pod still on it", green)
	}
	for _, tn := range n.Spec.Taints {
		if tn.Key == "example.com/isolated" {
			t.Errorf("the NoExecute taint was written with the pod still on the node")
		}
	}
	if n.Annotations[nodepool.MoveAnnotation] == "" || n.Annotations[noderecord.AnnotationDrain] == "" {
		t.Errorf("the stopped move left no record to resume from: %v", n.Annotations)
	}
}

// Issue 11, test 3: a role label no NodePool owns (worker) stays through a move; a pool
// created over nodes already carrying its role label leaves that label on delete, while
// a role label a move wrote goes with its pool.
func TestMoveAndDeleteLeaveRoleLabelsTheyDoNotOwn(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a", "b")
	blue, green, pre := e.NS+"-blue", e.NS+"-green", e.NS+"-pre"
	applyPool(e, poolYAML(blue, blue, blue, ""))
	applyPool(e, poolYAML(green, green, green, ""))
	if _, err := fixture.CreateNodes(e.Ctx, e.C, fixture.NodeSpec{Names: e.Nodes[:1], Pools: []string{blue, "worker"},
		Labels: map[string]string{"test": e.NS, "example.com/owner": "team-a"},
		Taints: []corev1.Taint{{Key: "example.com/maintenance-window", Value: "sunday", Effect: corev1.TaintEffectPreferNoSchedule}}}); err != nil {
		t.Fatal(err)
	}
	applyPool(e, poolYAML(blue, blue, blue, ""))
	r := e.Run("pool", "move", e.Nodes[0], "--to", green, "--dry-run")
	if r.Code != 0 {
		t.Fatalf("pool move --dry-run exit %d", r.Code)
	}
	fixture.MustContain(t, "stderr", r.Stderr, "=label node-role.kubernetes.io/worker (no NodePool owns it: kept)")
	if r := e.Run("pool", "move", e.Nodes[0], "--to", green); r.Code != 0 {
		t.Fatalf("pool move exit %d", r.Code)
	}
	checkMoved(e, e.Nodes[0], blue, green)
	if _, ok := e.Node(e.Nodes[0]).Labels["node-role.kubernetes.io/worker"]; !ok {
		t.Errorf("the move removed node-role.kubernetes.io/worker, which no NodePool owns")
	}
	// A pool created over a node that already carries its role label.
	poolNodes(e, pre, 1)
	applyPool(e, poolYAML(pre, pre, pre, ""))
	before := e.Node(e.Nodes[1])
	r = e.Run("pool", "delete", pre, "--dry-run")
	if r.Code != 0 {
		t.Fatalf("pool delete --dry-run exit %d", r.Code)
	}
	fixture.MustContain(t, "stdout", r.Stdout, "node/"+e.Nodes[1]+": ", "-label example.com/tier="+pre, "-taint example.com/dedicated="+pre+":NoSchedule", "(dry run)")
	if strings.Contains(r.Stdout, "-label "+nodepool.RoleLabel(pre)) {
		t.Errorf("the dry run would remove the role label set before the pool existed:\n%s", r.Stdout)
	}
	if after := e.Node(e.Nodes[1]); !maps.Equal(ownLabels(after), ownLabels(before)) || !reflect.DeepEqual(ownTaints(after), ownTaints(before)) {
		t.Errorf("pool delete --dry-run changed the node: labels %v, taints %v", after.Labels, after.Spec.Taints)
	}
	r = e.Run("pool", "delete", pre)
	if r.Code != 0 {
		t.Fatalf("pool delete exit %d", r.Code)
	}
	n := e.Node(e.Nodes[1])
	if _, ok := n.Labels[nodepool.RoleLabel(pre)]; !ok {
		t.Errorf("pool delete removed the role label set before the pool existed: %v", n.Labels)
	}
	if n.Labels["example.com/tier"] != "" || n.Labels["example.com/owner"] != "team-a" {
		t.Errorf("after pool delete: %v", n.Labels)
	}
	// The green role label was written by the move: it goes with green.
	if r := e.Run("pool", "delete", green); r.Code != 0 {
		t.Fatalf("pool delete exit %d", r.Code)
	}
	n = e.Node(e.Nodes[0])
	if _, ok := n.Labels[nodepool.RoleLabel(green)]; ok {
		t.Errorf("pool delete left the role label its move wrote")
	}
	if _, ok := n.Labels["node-role.kubernetes.io/worker"]; !ok {
		t.Errorf("pool delete removed node-role.kubernetes.io/worker")
	}
}

// The target's RuntimeClass handler is checked before anything changes: a node that does
// not list it stops the move (exit 3), dry run included, unless --allow-missing-handler.
func TestMoveChecksTheRuntimeHandlerFirst(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a")
	blue, kata := e.NS+"-blue", e.NS+"-kata"
	applyPool(e, poolYAML(blue, blue, blue, ""))
	applyPool(e, poolYAML(kata, kata, kata, "kata"))
	poolNodes(e, blue, 0)
	applyPool(e, poolYAML(blue, blue, blue, ""))
	before := e.Node(e.Nodes[0])
	for _, extra := range [][]string{nil, {"--dry-run"}} {
		r := e.Run(append([]string{"pool", "move", e.Nodes[0], "--to", kata}, extra...)...)
		if r.Code != 3 {
			t.Errorf("%v: exit %d, want 3", extra, r.Code)
		}
		fixture.MustContain(t, "stderr", r.Stderr, `"kata"`, "status.runtimeHandlers", "--allow-missing-handler", "nothing was changed")
	}
	if n := e.Node(e.Nodes[0]); n.Spec.Unschedulable || n.Annotations[nodepool.MoveAnnotation] != "" || !maps.Equal(ownLabels(n), ownLabels(before)) {
		t.Errorf("the refused move wrote the node: unschedulable %v, labels %v, annotations %v", n.Spec.Unschedulable, n.Labels, n.Annotations)
	}
	r := e.Run("pool", "move", e.Nodes[0], "--to", kata, "--allow-missing-handler")
	if r.Code != 0 {
		t.Fatalf("pool move --allow-missing-handler exit %d", r.Code)
	}
	fixture.MustContain(t, "stderr", r.Stderr, "Warning: node "+e.Nodes[0]+` does not list runtime handler "kata"`)
	checkMoved(e, e.Nodes[0], blue, kata)
}

// Package pooltest runs the plugin's pool commands, as a user would, against the real
// local cluster: moves under PDBs, interrupted moves, concurrent writers, spec changes,
// CRD validation and pool-wide drains.
package pooltest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/cluster"
	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

var (
	shared  *cluster.Cluster
	plugin  string
	install sync.Once
)

func TestMain(m *testing.M) { os.Exit(fixture.TestMain(m, &shared, &plugin)) }

// newEnv gives the test its namespace and nodes, with the NodePool CRD installed.
func newEnv(t *testing.T, nodes ...string) *fixture.Env {
	e := fixture.NewEnv(t, shared, plugin, nodes...)
	install.Do(func() {
		if r := e.Run("pool", "install"); r.Code != 0 {
			t.Fatalf("pool install exit %d", r.Code)
		}
	})
	return e
}

// applyPool writes a pool file and runs "pool apply -f" on it.
func applyPool(e *fixture.Env, yaml string) fixture.Result {
	e.T.Helper()
	f := filepath.Join(e.T.TempDir(), "pool.yaml")
	if err := os.WriteFile(f, []byte(yaml), 0o600); err != nil {
		e.T.Fatal(err)
	}
	return e.Run("pool", "apply", "-f", f)
}

func poolYAML(name, label, taintValue, handler string) string {
	rc := ""
	if handler != "" {
		rc = "\n  runtimeClass:\n    handler: " + handler
	}
	return fmt.Sprintf(`apiVersion: maintenance.kubectl-maintenance.io/v1alpha1
kind: NodePool
metadata:
  name: %s
spec:
  labels:
    example.com/tier: %s
  taints:
  - key: example.com/dedicated
    value: %s
    effect: NoSchedule%s
`, name, label, taintValue, rc)
}

// poolNodes creates nodes in pool with a hand-set label and taint of their own.
func poolNodes(e *fixture.Env, pool string, idx ...int) {
	e.T.Helper()
	for _, i := range idx {
		_, err := fixture.CreateNodes(e.Ctx, e.C, fixture.NodeSpec{Names: e.Nodes[i : i+1], Pools: []string{pool},
			Labels: map[string]string{"test": e.NS, "example.com/owner": "team-a"},
			Taints: []corev1.Taint{{Key: "example.com/maintenance-window", Value: "sunday", Effect: corev1.TaintEffectPreferNoSchedule}}})
		if err != nil {
			e.T.Fatal(err)
		}
	}
}

// tolerateAll lets test pods run on the pools' tainted nodes.
var tolerateAll = []corev1.Toleration{{Key: "example.com/dedicated", Operator: corev1.TolerationOpExists}}

// checkMoved asserts the node is exactly in pool to: the new pool's labels and taints,
// nothing of the old pool's, the hand-set label and taint intact, schedulable.
func checkMoved(e *fixture.Env, node, from, to string) {
	e.T.Helper()
	n := e.Node(node)
	if _, ok := n.Labels[nodepool.RoleLabel(to)]; !ok {
		e.T.Errorf("node %s lacks the role label of %s: %v", node, to, n.Labels)
	}
	if _, ok := n.Labels[nodepool.RoleLabel(from)]; ok {
		e.T.Errorf("node %s keeps the role label of %s", node, from)
	}
	if n.Labels["example.com/tier"] != to {
		e.T.Errorf("node %s has example.com/tier=%q, want %q", node, n.Labels["example.com/tier"], to)
	}
	if n.Labels["example.com/owner"] != "team-a" {
		e.T.Errorf("the hand-set label was lost: %v", n.Labels)
	}
	var taints []string
	for _, t := range n.Spec.Taints {
		if !strings.HasPrefix(t.Key, "node.kubernetes.io/") { // the node lifecycle controller's
			taints = append(taints, t.Key+"="+t.Value)
		}
	}
	want := "example.com/dedicated=" + to + ",example.com/maintenance-window=sunday"
	if got := strings.Join(sortStrings(taints), ","); got != want {
		e.T.Errorf("node %s taints = %s, want %s", node, got, want)
	}
	if n.Spec.Unschedulable {
		e.T.Errorf("node %s is still cordoned after the move", node)
	}
	if _, ok := n.Annotations[nodepool.MoveAnnotation]; ok {
		e.T.Errorf("node %s keeps the move annotation", node)
	}
}

func sortStrings(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func TestSpecChangeAndDeletion(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a", "b")
	blue := e.NS + "-blue"
	applyPool(e, poolYAML(blue, "v1", "one", "runc"))
	poolNodes(e, blue, 0, 1)
	applyPool(e, poolYAML(blue, "v1", "one", "runc"))
	// Change the label's value and drop the taint.
	changed := strings.Replace(poolYAML(blue, "v2", "one", "runc"), "  taints:\n  - key: example.com/dedicated\n    value: one\n    effect: NoSchedule\n", "", 1)
	if r := applyPool(e, changed); r.Code != 0 {
		t.Fatalf("pool apply exit %d", r.Code)
	}
	for _, name := range e.Nodes {
		n := e.Node(name)
		if n.Labels["example.com/tier"] != "v2" {
			t.Errorf("node %s tier = %q, want v2", name, n.Labels["example.com/tier"])
		}
		for _, tn := range n.Spec.Taints {
			if tn.Key == "example.com/dedicated" {
				t.Errorf("node %s keeps the dropped taint", name)
			}
		}
	}
	rc, err := e.C.NodeV1().RuntimeClasses().Get(e.Ctx, blue, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rc.Handler != "runc" || rc.Scheduling.NodeSelector["example.com/tier"] != "v2" || len(rc.Scheduling.Tolerations) != 0 {
		t.Errorf("runtimeclass not in sync: %+v", rc.Scheduling)
	}
	if r := e.Run("pool", "delete", blue); r.Code != 0 {
		t.Fatalf("pool delete exit %d", r.Code)
	}
	for _, name := range e.Nodes {
		n := e.Node(name)
		// The nodes carried the role label before the pool applied anything: it is not
		// the pool's to remove.
		if _, ok := n.Labels[nodepool.RoleLabel(blue)]; !ok || n.Labels["example.com/tier"] != "" || n.Labels["example.com/owner"] != "team-a" {
			t.Errorf("node %s after pool deletion: %v", name, n.Labels)
		}
		if len(ownTaints(n)) != 1 || n.Spec.Unschedulable {
			t.Errorf("node %s after pool deletion: taints %v unschedulable %v", name, n.Spec.Taints, n.Spec.Unschedulable)
		}
	}
	// The RuntimeClass goes through the real garbage collector (owner reference).
	w, err := e.C.NodeV1().RuntimeClasses().Watch(e.Ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + blue})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := e.C.NodeV1().RuntimeClasses().Get(e.Ctx, blue, metav1.GetOptions{}); apierrors.IsNotFound(err) {
		return
	}
	for ev := range w.ResultChan() {
		if ev.Type == watch.Deleted {
			return
		}
	}
	t.Fatal("the pool's RuntimeClass was not garbage collected")
}

func TestCRDValidationRejectsBadPools(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	name := e.NS + "-bad"
	base := "apiVersion: maintenance.kubectl-maintenance.io/v1alpha1\nkind: NodePool\nmetadata:\n  name: " + name + "\nspec:\n"
	tests := []struct{ name, spec, want string }{
		{"invalid taint effect", "  taints:\n  - key: a\n    effect: Sometimes\n", "Unsupported value"},
		{"duplicate taint", "  taints:\n  - key: a\n    effect: NoSchedule\n  - key: a\n    value: x\n    effect: NoSchedule\n", "two taints have the same key and effect"},
		{"role label as pool label", "  labels:\n    node-role.kubernetes.io/x: \"\"\n", "node-role.kubernetes.io/ labels are the pool membership labels"},
		{"invalid label key", "  labels:\n    \"bad key!\": x\n", "label keys must be qualified names"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := applyPool(e, base+tc.spec)
			if r.Code != 2 {
				t.Errorf("exit %d, want 2", r.Code)
			}
			fixture.MustContain(t, "stderr", r.Stderr, tc.want)
			if lines := strings.Count(strings.TrimSpace(r.Stderr), "\n"); lines != 0 {
				t.Errorf("the error is %d lines, want one:\n%s", lines+1, r.Stderr)
			}
		})
	}
}

func TestDrainPoolRespectsMaxUnavailable(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a", "b", "c", "s")
	blue := e.NS + "-blue"
	applyPool(e, poolYAML(blue, blue, blue, ""))
	poolNodes(e, blue, 0, 1, 2)
	applyPool(e, poolYAML(blue, blue, blue, ""))
	o := fixture.PodOptions{ReadyDelay: time.Second, NodeSelector: map[string]string{"test": e.NS}, Tolerations: tolerateAll}
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", 6, o); err != nil {
		t.Fatal(err)
	}
	e.Ready("web", 6)
	e.PDB("web", fixture.PDBSpec{App: "web", MaxUnavailable: fixture.Int(2)}, 2)
	e.AddNodes(3) // a spare outside the pool takes the replacements
	e.Guard()
	// Watch how many of the pool's nodes are being drained at once.
	stop := peakOf(e, e.Nodes[:3], func(n *corev1.Node) bool {
		return n.Annotations[noderecord.AnnotationDrain] == noderecord.StateDraining
	})
	r := e.Run("drain", "--pool", blue)
	if r.Code != 0 {
		t.Fatalf("drain --pool exit %d", r.Code)
	}
	time.Sleep(200 * time.Millisecond) // let the last watch events arrive
	if most := stop(); most != 1 {
		t.Errorf("at most %d pool nodes were draining at once, want exactly 1 (maxUnavailable 1)", most)
	}
	for _, n := range e.Nodes[:3] {
		if left := len(e.PodsOn(n)); left != 0 {
			t.Errorf("%d pods left on %s", left, n)
		}
	}
}

func TestControllerAppliesSpecChanges(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a")
	blue := e.NS + "-blue"
	applyPool(e, poolYAML(blue, "v1", "one", ""))
	poolNodes(e, blue, 0)
	applyPool(e, poolYAML(blue, "v1", "one", ""))
	// The long-running controller, as a user runs it (no leader election on loopback).
	ctx, cancel := context.WithCancel(e.Ctx)
	defer cancel()
	ctl := exec.CommandContext(ctx, plugin, "--kubeconfig", shared.Kubeconfig, "pool", "controller",
		"--leader-elect=false", "--health-probe-bind-address=0", "--pools="+blue)
	var logs strings.Builder
	ctl.Stderr = &logs
	if err := ctl.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = ctl.Wait(); t.Logf("controller log:\n%s", logs.String()) }()
	// Change the pool's label value straight through the API (not pool apply, which would
	// sync by itself): only the controller can carry it to the node.
	patch := []byte(`{"spec":{"labels":{"example.com/tier":"v2"}}}`)
	dyn, err := dynamic.NewForConfig(shared.Config)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dyn.Resource(v1alpha1.GroupVersion.WithResource("nodepools")).Patch(e.Ctx, blue, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(e, e.Nodes[0], func(n *corev1.Node) bool { return n.Labels["example.com/tier"] == "v2" })
}

// TestPoolInstallSaysWhatChanged: a second install of the same CRD changes nothing and
// says "unchanged" (the stored spec carries the server's defaults, so only the server can
// tell).
func TestPoolInstallSaysWhatChanged(t *testing.T) {
	e := newEnv(t) // installed once already
	r := e.Run("pool", "install")
	if r.Code != 0 {
		t.Fatalf("pool install exit %d", r.Code)
	}
	fixture.MustContain(t, "stdout", r.Stdout, "nodepools.maintenance.kubectl-maintenance.io unchanged")
}

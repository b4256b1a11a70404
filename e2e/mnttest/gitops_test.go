package mnttest

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance"
	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// kubectlApply applies manifest with the project's pinned kubectl (client-side apply, as
// GitOps tools and hand-written objects do: the object is stored as written).
func kubectlApply(e *fixture.Env, manifest string) {
	e.T.Helper()
	cmd := exec.CommandContext(e.Ctx, filepath.Join(shared.BinDir, "kubectl"), "--kubeconfig", shared.Kubeconfig, "apply", "-f", "-")
	cmd.Stdin = strings.NewReader(manifest)
	out, err := cmd.CombinedOutput()
	e.T.Logf("$ kubectl apply -f - <<EOF\n%sEOF\n%s", manifest, out)
	if err != nil {
		e.T.Fatalf("kubectl apply: %v", err)
	}
}

// deleteLater deletes the Maintenances named at the test's end.
func deleteLater(e *fixture.Env, mc client.Client, names ...string) {
	e.T.Cleanup(func() {
		for _, n := range names {
			_ = mc.Delete(context.Background(), &mntv1.Maintenance{ObjectMeta: metav1.ObjectMeta{Name: n}})
		}
	})
}

// specUntouched fails the test when anyone but kubectl owns a field of name's spec (the
// managedFields audit), when its generation moved, or when its stored spec gained the
// drain or policy block it was applied without.
func specUntouched(e *fixture.Env, mc client.Client, name string, wantBlocks map[string]bool) {
	e.T.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.GroupVersionKind{Group: mntv1.GroupVersion.Group, Version: mntv1.GroupVersion.Version, Kind: "Maintenance"})
	if err := mc.Get(e.Ctx, types.NamespacedName{Name: name}, u); err != nil {
		e.T.Fatal(err)
	}
	if g := u.GetGeneration(); g != 1 {
		e.T.Errorf("maintenance/%s: generation %d, want 1 (the spec was written after the apply)", name, g)
	}
	for _, f := range u.GetManagedFields() {
		if f.Manager == "kubectl-client-side-apply" || f.Subresource != "" || f.FieldsV1 == nil {
			continue
		}
		if strings.Contains(f.FieldsV1.GetRawString(), `"f:spec"`) {
			e.T.Errorf("maintenance/%s: manager %q (%s) owns spec fields: %s", name, f.Manager, f.Operation, f.FieldsV1.GetRawString())
		}
	}
	spec, _, _ := unstructured.NestedMap(u.Object, "spec")
	for _, block := range []string{"drain", "policy"} {
		if _, has := spec[block]; has != wantBlocks[block] {
			e.T.Errorf("maintenance/%s: spec.%s stored: %v, want %v (spec %v)", name, block, has, wantBlocks[block], spec)
		}
	}
}

// Issue 39, test 1: minimal objects applied with the pinned kubectl, without the drain
// or policy blocks drain --server-side always writes (a Cordon, a Drain, a window with a
// policy only, a drain block only): each gets its finalizer, runs and ends as a full
// object does, and nothing but kubectl ever wrote the spec.
func TestMinimalObjectsAppliedRun(t *testing.T) {
	e := newEnv(t, "a", "b", "c", "d", "spare")
	e.AddNodes(0, 1, 2, 3)
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", 8, e.Here(fixture.PodOptions{})); err != nil {
		t.Fatal(err)
	}
	e.Ready("web", 8)
	e.PDB("web", fixture.PDBSpec{App: "web", MaxUnavailable: fixture.Int(1)}, 1)
	e.AddNodes(4)
	e.Guard()
	mc := mclient(t)
	startController(e)
	end := time.Now().Add(10 * time.Minute).UTC().Format(time.RFC3339)
	objs := []struct {
		name, spec string
		blocks     map[string]bool
		cordonOnly bool
	}{
		{e.NS + "-cordon", fmt.Sprintf("action: Cordon\n  nodes: [%s]", e.Nodes[0]), nil, true},
		{e.NS + "-drain", fmt.Sprintf("action: Drain\n  nodes: [%s]", e.Nodes[1]), nil, false},
		{e.NS + "-window", fmt.Sprintf("action: Drain\n  nodes: [%s]\n  window: {end: %q}\n  policy: {onWindowClose: Stop}", e.Nodes[2], end), map[string]bool{"policy": true}, false},
		{e.NS + "-drainonly", fmt.Sprintf("action: Drain\n  nodes: [%s]\n  drain: {ignoreDaemonSets: true}", e.Nodes[3]), map[string]bool{"drain": true}, false},
	}
	var manifest strings.Builder
	for _, o := range objs {
		fmt.Fprintf(&manifest, "---\napiVersion: maintenance.kubectl-maintenance.io/v1alpha1\nkind: Maintenance\nmetadata: {name: %s}\nspec:\n  %s\n", o.name, o.spec)
		deleteLater(e, mc, o.name)
	}
	kubectlApply(e, manifest.String())
	for i, o := range objs {
		m, seen := waitFor(e, mc, o.name, "the end", func(m *mntv1.Maintenance) bool { return m.Status.Phase.Done() })
		t.Logf("maintenance/%s: phases %v, nodes %s, counts %+v", o.name, seen, nodeStates(m), m.Status.Counts)
		if m.Status.Phase != mntv1.PhaseSucceeded {
			t.Errorf("maintenance/%s: phase %s (%s), want Succeeded", o.name, m.Status.Phase, m.Status.Message)
		}
		if !hasString(m.Finalizers, maintenance.Finalizer) {
			t.Errorf("maintenance/%s: finalizers %v, want %s", o.name, m.Finalizers, maintenance.Finalizer)
		}
		node := e.Node(e.Nodes[i])
		if !node.Spec.Unschedulable {
			t.Errorf("node %s not cordoned by maintenance/%s", node.Name, o.name)
		}
		if left := len(e.PodsOn(node.Name)); !o.cordonOnly && left != 0 {
			t.Errorf("node %s: %d pods left after maintenance/%s", node.Name, left, o.name)
		}
		specUntouched(e, mc, o.name, o.blocks)
	}
}

func hasString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

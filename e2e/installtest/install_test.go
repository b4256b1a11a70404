package installtest

import (
	"maps"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/install"
	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance"
	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// TestInstallControllerThenUninstall installs the controller into the test's namespace,
// installs it again (nothing changes), changes its image (only the Deployment changes),
// then uninstalls it: refused while a Maintenance runs, done with --force.
func TestInstallControllerThenUninstall(t *testing.T) {
	e := fixture.NewEnv(t, shared, plugin)
	c := newClient(t)
	const image = "registry.example/kubectl-maintenance:e2e"
	flags := []string{"--controller", "-n", e.NS, "--image", image}
	want, err := install.Objects(install.Options{Controller: true, Namespace: e.NS, Image: image})
	if err != nil {
		t.Fatal(err)
	}

	r := e.Run(append([]string{"install"}, flags...)...)
	expectLines(t, r, 0, want, func(string) string { return install.Created })
	for _, o := range want {
		got := get(e, c, o)
		if got == nil {
			t.Fatalf("%s was not created", install.Ref(o))
		}
		// A ServiceAccount applied with a name alone has no field to manage: the API
		// server records no manager for it.
		if managers := managedBy(got); o.GetKind() != "ServiceAccount" && !managers[install.FieldManager+"/Apply"] {
			t.Errorf("%s: field managers %v, want %s applying", install.Ref(o), managers, install.FieldManager)
		}
	}
	dep := get(e, c, find(t, want, "Deployment"))
	cs, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
	if img := cs[0].(map[string]any)["image"]; img != image {
		t.Errorf("the Deployment runs %v, want %s", img, image)
	}

	// Controllers write the status of the Deployment and the PDB after they are created:
	// wait until nothing changes any more, then a second install must change nothing.
	before := settled(e, c, want)
	r = e.Run(append([]string{"install"}, flags...)...)
	expectLines(t, r, 0, want, func(string) string { return install.Unchanged })
	if after := versions(e, c, want); !maps.Equal(before, after) {
		t.Errorf("a second install changed resourceVersions:\nbefore %v\nafter  %v", before, after)
	}

	// Another image changes the Deployment only.
	r = e.Run("install", "--controller", "-n", e.NS, "--image", image+"-2")
	expectLines(t, r, 0, want, func(ref string) string {
		if strings.HasPrefix(ref, "deployment.apps/") {
			return install.Configured
		}
		return install.Unchanged
	})

	// A Maintenance Running (its status written as a controller would, with the
	// controller's finalizer): uninstall refuses and deletes nothing.
	m := &mntv1.Maintenance{ObjectMeta: metav1.ObjectMeta{Name: e.NS + "-running", Finalizers: []string{maintenance.Finalizer}},
		Spec: mntv1.MaintenanceSpec{Action: mntv1.ActionCordon, Nodes: []string{e.NS + "-node"}}}
	if err := c.Create(e.Ctx, m); err != nil {
		t.Fatal(err)
	}
	m.Status.Phase = mntv1.PhaseRunning
	if err := c.Status().Update(e.Ctx, m); err != nil {
		t.Fatal(err)
	}
	r = e.Run("uninstall", "--controller", "-n", e.NS)
	if r.Code != 3 || r.Stdout != "" || strings.Count(r.Stderr, "\n") != 1 || !strings.Contains(r.Stderr, "maintenance/"+m.Name+" (Running)") {
		t.Fatalf("uninstall with a Running Maintenance: exit %d, stdout %q, stderr %q; want exit 3 and one line naming it", r.Code, r.Stdout, r.Stderr)
	}
	for _, o := range want {
		if get(e, c, o) == nil {
			t.Errorf("a refused uninstall deleted %s", install.Ref(o))
		}
	}

	// --force: everything goes, the Maintenance with its CRD (its finalizer taken off).
	r = e.Run("uninstall", "--controller", "-n", e.NS, "--force")
	deleted := reversed(want)
	expectLines(t, r, 0, deleted, func(string) string { return install.Deleted })
	for _, o := range want {
		if get(e, c, o) != nil {
			t.Errorf("%s is still there after uninstall --force", install.Ref(o))
		}
	}
	if err := c.Get(e.Ctx, client.ObjectKeyFromObject(m), &mntv1.Maintenance{}); !apierrors.IsNotFound(err) && !meta.IsNoMatchError(err) {
		t.Errorf("the Maintenance after uninstall: %v, want it gone", err)
	}

	// Again: nothing to do. Then the CRDs alone install as before.
	r = e.Run("uninstall", "--controller", "-n", e.NS)
	expectLines(t, r, 0, deleted, func(string) string { return install.AlreadyDeleted })
	r = e.Run("install")
	expectLines(t, r, 0, want[:2], func(string) string { return install.Created })

	// The controller over CRDs a plain install wrote (with Update, not apply): the apply
	// takes them over without a conflict, and a run after it changes nothing.
	r = e.Run(append([]string{"install"}, flags...)...)
	if r.Code != 0 {
		t.Fatalf("install --controller over a plain install: exit %d: %s", r.Code, r.Stderr)
	}
	settled(e, c, want)
	r = e.Run(append([]string{"install"}, flags...)...)
	expectLines(t, r, 0, want, func(string) string { return install.Unchanged })
}

func newClient(t *testing.T) client.Client {
	t.Helper()
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(mntv1.AddToScheme(s))
	c, err := client.New(shared.Config, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// expectLines checks the exit code and that stdout is one "<ref> <verb>" line per
// object of objs, in order.
func expectLines(t *testing.T, r fixture.Result, code int, objs []*unstructured.Unstructured, verb func(ref string) string) {
	t.Helper()
	var want []string
	for _, o := range objs {
		want = append(want, install.Ref(o)+" "+verb(install.Ref(o)))
	}
	if got := strings.TrimSuffix(r.Stdout, "\n"); r.Code != code || got != strings.Join(want, "\n") {
		t.Fatalf("exit %d, stdout:\n%s\nstderr: %s\nwant exit %d and:\n%s", r.Code, r.Stdout, r.Stderr, code, strings.Join(want, "\n"))
	}
}

// get reads o from the cluster; nil when it is not there.
func get(e *fixture.Env, c client.Client, o *unstructured.Unstructured) *unstructured.Unstructured {
	e.T.Helper()
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(o.GroupVersionKind())
	err := c.Get(e.Ctx, client.ObjectKeyFromObject(o), got)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		e.T.Fatalf("get %s: %v", install.Ref(o), err)
	}
	return got
}

// versions are the objects' resourceVersions, by Ref.
func versions(e *fixture.Env, c client.Client, objs []*unstructured.Unstructured) map[string]string {
	e.T.Helper()
	out := map[string]string{}
	for _, o := range objs {
		if got := get(e, c, o); got != nil {
			out[install.Ref(o)] = got.GetResourceVersion()
		}
	}
	return out
}

// settled returns the objects' resourceVersions once they stayed the same for 3 s and
// every ValidatingAdmissionPolicy's status (its type check, written by
// kube-controller-manager some time after the write) describes its generation.
func settled(e *fixture.Env, c client.Client, objs []*unstructured.Unstructured) map[string]string {
	e.T.Helper()
	prev := versions(e, c, objs)
	for stable := time.Duration(0); stable < 3*time.Second || !policiesChecked(e, c, objs); {
		select {
		case <-e.Ctx.Done():
			e.T.Fatalf("the installed objects never stopped changing: %v", prev)
		case <-time.After(500 * time.Millisecond):
		}
		cur := versions(e, c, objs)
		stable += 500 * time.Millisecond
		if !maps.Equal(prev, cur) {
			prev, stable = cur, 0
		}
	}
	return prev
}

// policiesChecked reports whether each ValidatingAdmissionPolicy of objs has its type
// check for its generation.
func policiesChecked(e *fixture.Env, c client.Client, objs []*unstructured.Unstructured) bool {
	e.T.Helper()
	for _, o := range objs {
		if o.GetKind() != "ValidatingAdmissionPolicy" {
			continue
		}
		got := get(e, c, o)
		if got == nil {
			return false
		}
		observed, _, _ := unstructured.NestedInt64(got.Object, "status", "observedGeneration")
		if observed != got.GetGeneration() {
			return false
		}
	}
	return true
}

// managedBy lists an object's field managers as manager/operation.
func managedBy(o *unstructured.Unstructured) map[string]bool {
	out := map[string]bool{}
	for _, f := range o.GetManagedFields() {
		out[f.Manager+"/"+string(f.Operation)] = true
	}
	return out
}

func find(t *testing.T, objs []*unstructured.Unstructured, kind string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind {
			return o
		}
	}
	t.Fatalf("no %s among the objects", kind)
	return nil
}

// reversed is the uninstall order of objs: backwards, the CRDs (first in objs) last.
func reversed(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	var rest, crds []*unstructured.Unstructured
	for i := len(objs) - 1; i >= 0; i-- {
		if objs[i].GetKind() == "CustomResourceDefinition" {
			crds = append(crds, objs[i])
		} else {
			rest = append(rest, objs[i])
		}
	}
	return append(rest, crds...)
}

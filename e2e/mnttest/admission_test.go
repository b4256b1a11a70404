package mnttest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/cluster"
	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// policyName names the ValidatingAdmissionPolicy of config/admission and its binding.
const policyName = "kubectl-maintenance-requester-rights"

// manifests decodes every object of the YAML files of config/<dir> (typed, client-go's
// scheme).
func manifests(t *testing.T, dir string) []runtime.Object {
	t.Helper()
	root, err := cluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, "config", dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("config/%s: no YAML files (%v)", dir, err)
	}
	var out []runtime.Object
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue // kustomize's file, not an object (install skips it too)
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
		for {
			doc, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if len(bytes.TrimSpace(doc)) == 0 {
				continue
			}
			obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(doc, nil, nil)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			out = append(out, obj)
		}
	}
	return out
}

// installPolicy applies config/admission (the policy and its binding) as the admin,
// checks that every expression type-checks, and removes both when t ends so that the
// package's other tests run without them. It returns once the API server enforces the
// policy: a server-side dry run by probe (a user who may create Maintenances and nothing
// else) is refused.
func installPolicy(t *testing.T, e *fixture.Env, probe client.Client) {
	t.Helper()
	api := e.C.AdmissionregistrationV1()
	for _, obj := range manifests(t, "admission") {
		switch o := obj.(type) {
		case *admissionregistrationv1.ValidatingAdmissionPolicy:
			if _, err := api.ValidatingAdmissionPolicies().Create(e.Ctx, o, metav1.CreateOptions{}); err != nil {
				t.Fatalf("create the policy: %v", err)
			}
			t.Cleanup(func() {
				_ = api.ValidatingAdmissionPolicies().Delete(context.Background(), o.Name, metav1.DeleteOptions{})
			})
		case *admissionregistrationv1.ValidatingAdmissionPolicyBinding:
			if _, err := api.ValidatingAdmissionPolicyBindings().Create(e.Ctx, o, metav1.CreateOptions{}); err != nil {
				t.Fatalf("create the binding: %v", err)
			}
			t.Cleanup(func() {
				_ = api.ValidatingAdmissionPolicyBindings().Delete(context.Background(), o.Name, metav1.DeleteOptions{})
			})
		default:
			t.Fatalf("config/admission: unexpected %T", obj)
		}
	}
	// The type checker (kube-controller-manager) writes its findings in the status.
	poll(t, e, "the policy's type check", func() bool {
		p, err := api.ValidatingAdmissionPolicies().Get(e.Ctx, policyName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Status.ObservedGeneration != p.Generation || p.Status.TypeChecking == nil {
			return false
		}
		for _, w := range p.Status.TypeChecking.ExpressionWarnings {
			t.Errorf("policy %s: %s: %s", policyName, w.FieldRef, w.Warning)
		}
		return true
	})
	poll(t, e, "the policy enforced", func() bool {
		err := probe.Create(e.Ctx, drainOf(e, "probe", nil), client.DryRunAll)
		return apierrors.IsForbidden(err) && strings.Contains(err.Error(), policyName)
	})
}

// poll calls ok every 200 ms until it says so, failing the test after 60 s.
func poll(t *testing.T, e *fixture.Env, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		select {
		case <-e.Ctx.Done():
			t.Fatalf("gave up waiting for %s: %v", what, e.Ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// userClient is a client for Maintenances acting as the user of config.
func userClient(t *testing.T, u fixture.User) client.Client {
	t.Helper()
	s := runtime.NewScheme()
	if err := mntv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(u.Config, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// drainOf is a Drain Maintenance of a node that does not exist (nothing to run), named
// <ns>-<name>, with annotations.
func drainOf(e *fixture.Env, name string, annotations map[string]string) *mntv1.Maintenance {
	return &mntv1.Maintenance{
		ObjectMeta: metav1.ObjectMeta{Name: e.NS + "-" + name, Annotations: annotations},
		Spec:       mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: []string{e.NS + "-nowhere"}},
	}
}

// Rules of the tests' users.
var (
	maintenancesCreate = rbacv1.PolicyRule{APIGroups: []string{mntv1.GroupVersion.Group}, Resources: []string{"maintenances"},
		Verbs: []string{"create", "get", "list", "watch"}}
	maintenancesUpdate = rbacv1.PolicyRule{APIGroups: []string{mntv1.GroupVersion.Group}, Resources: []string{"maintenances"},
		Verbs: []string{"update", "patch"}}
	nodesPatch = rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list", "patch"}}
	podsEvict  = rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods/eviction"}, Verbs: []string{"create"}}
)

// refusal is the API server's whole message for a Maintenance the policy refuses.
func refusal(name, msg string) string {
	return `maintenances.maintenance.kubectl-maintenance.io "` + name + `" is forbidden: ValidatingAdmissionPolicy '` +
		policyName + `' with binding '` + policyName + `' denied request: ` + msg
}

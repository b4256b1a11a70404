package mnttest

import (
	"context"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-maintenance/kubectl-maintenance/access"
	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance"
	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// requirePolicy names config/admission/optional/require-requester.yaml's policy and binding.
const requirePolicy = "kubectl-maintenance-require-requester"

// installRequirePolicy applies config/admission/optional as the admin, its binding
// narrowed to the objects labelled test=<ns> (the policy is cluster-wide: the package's
// other tests create objects without the annotation), checks that its expressions
// type-check, and returns once it is enforced.
func installRequirePolicy(t *testing.T, e *fixture.Env, probe client.Client) {
	t.Helper()
	api := e.C.AdmissionregistrationV1()
	for _, obj := range manifests(t, "admission/optional") {
		switch o := obj.(type) {
		case *admissionregistrationv1.ValidatingAdmissionPolicy:
			if _, err := api.ValidatingAdmissionPolicies().Create(e.Ctx, o, metav1.CreateOptions{}); err != nil {
				t.Fatalf("create the policy: %v", err)
			}
			t.Cleanup(func() {
				_ = api.ValidatingAdmissionPolicies().Delete(context.Background(), o.Name, metav1.DeleteOptions{})
			})
		case *admissionregistrationv1.ValidatingAdmissionPolicyBinding:
			o.Spec.MatchResources = &admissionregistrationv1.MatchResources{ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"test": e.NS}}}
			if _, err := api.ValidatingAdmissionPolicyBindings().Create(e.Ctx, o, metav1.CreateOptions{}); err != nil {
				t.Fatalf("create the binding: %v", err)
			}
			t.Cleanup(func() {
				_ = api.ValidatingAdmissionPolicyBindings().Delete(context.Background(), o.Name, metav1.DeleteOptions{})
			})
		default:
			t.Fatalf("config/admission/optional: unexpected %T", obj)
		}
	}
	poll(t, e, "the policy's type check", func() bool {
		p, err := api.ValidatingAdmissionPolicies().Get(e.Ctx, requirePolicy, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Status.ObservedGeneration != p.Generation || p.Status.TypeChecking == nil {
			return false
		}
		for _, w := range p.Status.TypeChecking.ExpressionWarnings {
			t.Errorf("policy %s: %s: %s", requirePolicy, w.FieldRef, w.Warning)
		}
		return true
	})
	poll(t, e, "the policy enforced", func() bool {
		m := drainOf(e, "probe", nil)
		m.Labels = map[string]string{"test": e.NS}
		err := probe.Create(e.Ctx, m, client.DryRunAll)
		return apierrors.IsForbidden(err) && strings.Contains(err.Error(), requirePolicy)
	})
}

// Issue 39, test 7: with the optional policy that requires the requester, a create
// without the requested-by annotation is refused with a message naming the annotation,
// the user's name and the command that sets it; with it, the node's record names the user.
func TestRequirePolicyRefusesObjectsWithoutTheRequester(t *testing.T) {
	e := newEnv(t, "a", "spare")
	maint := e.User(t, "maintainer", []rbacv1.PolicyRule{maintenancesCreate, maintenancesUpdate, nodesPatch, podsEvict})
	maintC := userClient(t, maint)
	installRequirePolicy(t, e, maintC)
	mc := mclient(t)
	labels := map[string]string{"test": e.NS}

	without := &mntv1.Maintenance{ObjectMeta: metav1.ObjectMeta{Name: e.NS + "-anonymous", Labels: labels},
		Spec: mntv1.MaintenanceSpec{Action: mntv1.ActionCordon, Nodes: []string{e.Nodes[0]}}}
	err := maintC.Create(e.Ctx, without)
	want := `maintenances.maintenance.kubectl-maintenance.io "` + without.Name + `" is forbidden: ValidatingAdmissionPolicy '` + requirePolicy +
		`' with binding '` + requirePolicy + `' denied request: a Maintenance must name who requests it: add the annotation ` +
		`maintenance.kubectl-maintenance.io/requested-by: "` + maint.Name + `" to its metadata, or create it with ` +
		"`kubectl maintenance drain|cordon|uncordon|pool move ... --server-side`, which sets it"
	if !apierrors.IsForbidden(err) || err.Error() != want {
		_ = mc.Delete(context.Background(), without)
		t.Fatalf("create without requested-by: %v\nwant Forbidden: %s", err, want)
	}
	t.Logf("refused: %v", err)

	e.AddNodes(0)
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", 2, e.Here(fixture.PodOptions{})); err != nil {
		t.Fatal(err)
	}
	e.Ready("web", 2)
	e.AddNodes(1)
	e.Guard()
	startController(e)
	with := &mntv1.Maintenance{ObjectMeta: metav1.ObjectMeta{Name: e.NS + "-named", Labels: labels,
		Annotations: map[string]string{maintenance.AnnotationRequestedBy: maint.Name}},
		Spec: mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: []string{e.Nodes[0]}}}
	if err := maintC.Create(e.Ctx, with); err != nil {
		t.Fatalf("create with requested-by: %v", err)
	}
	t.Cleanup(func() { _ = mc.Delete(context.Background(), with) })
	m, _ := waitFor(e, mc, with.Name, "the end", func(m *mntv1.Maintenance) bool { return m.Status.Phase.Done() })
	if m.Status.Phase != mntv1.PhaseSucceeded {
		t.Fatalf("phase %s (%s), want Succeeded", m.Status.Phase, m.Status.Message)
	}
	wantUser := maint.Name + " (via " + access.WhoAmI(e.Ctx, e.C, "") + ")"
	if got := e.Node(e.Nodes[0]).Annotations[noderecord.AnnotationUser]; got != wantUser {
		t.Errorf("node annotation %s = %q, want %q", noderecord.AnnotationUser, got, wantUser)
	}
}

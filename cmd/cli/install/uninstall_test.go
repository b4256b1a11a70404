package install

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
	poolv1 "github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
)

func testScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	utilruntime.Must(mntv1.AddToScheme(s))
	utilruntime.Must(poolv1.AddToScheme(s))
	return s
}

func maintenance(name string, phase mntv1.Phase) *mntv1.Maintenance {
	return &mntv1.Maintenance{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: mntv1.MaintenanceStatus{Phase: phase}}
}

func TestUninstall(t *testing.T) {
	objs, err := Objects(Options{Controller: true})
	if err != nil {
		t.Fatal(err)
	}
	installed := []client.Object{
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: ctl, Namespace: DefaultNamespace}},
		&apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "maintenances.maintenance.kubectl-maintenance.io"}},
		&apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "nodepools.maintenance.kubectl-maintenance.io"}},
	}
	everything := []string{
		"validatingadmissionpolicybinding.admissionregistration.k8s.io/kubectl-maintenance-requester-rights",
		"validatingadmissionpolicy.admissionregistration.k8s.io/kubectl-maintenance-requester-rights",
		"deployment.apps/" + ctl, "poddisruptionbudget.policy/" + ctl, "clusterrolebinding.rbac.authorization.k8s.io/" + ctl,
		"clusterrole.rbac.authorization.k8s.io/kubectl-maintenance-admin", "clusterrole.rbac.authorization.k8s.io/kubectl-maintenance-edit",
		"clusterrole.rbac.authorization.k8s.io/kubectl-maintenance-view",
		"clusterrole.rbac.authorization.k8s.io/" + ctl, "serviceaccount/" + ctl,
		"customresourcedefinition.apiextensions.k8s.io/maintenances.maintenance.kubectl-maintenance.io",
		"customresourcedefinition.apiextensions.k8s.io/nodepools.maintenance.kubectl-maintenance.io",
	}
	tests := map[string]struct {
		existing []client.Object
		force    bool
		refusal  string // the InUseError's message, "" when it goes on
		deleted  []string
	}{
		"a Running Maintenance refuses and nothing is deleted": {
			existing: []client.Object{maintenance("m1", mntv1.PhaseRunning), maintenance("m0", mntv1.PhaseSucceeded)},
			refusal:  "refusing to uninstall: deleting the CRDs would delete maintenance/m1 (Running)",
		},
		"a Maintenance no controller picked up yet refuses as Pending, a NodePool refuses too": {
			existing: []client.Object{maintenance("m2", ""), &poolv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "blue"}}},
			refusal:  "deleting the CRDs would delete maintenance/m2 (Pending), nodepool/blue",
		},
		"finished Maintenances are records: the CRDs go with them": {
			existing: []client.Object{maintenance("m3", mntv1.PhaseSucceeded), maintenance("m4", mntv1.PhaseBlocked)},
			deleted:  everything,
		},
		"--force goes on: the Deployment first, the CRDs last": {
			existing: []client.Object{maintenance("m5", mntv1.PhasePaused)},
			force:    true,
			deleted:  everything,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var deletes []string
			c := fake.NewClientBuilder().WithScheme(testScheme()).WithObjects(append(slices.Clone(installed), tc.existing...)...).
				WithInterceptorFuncs(interceptor.Funcs{Delete: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.DeleteOption) error {
					deletes = append(deletes, o.GetName())
					return c.Delete(ctx, o, opts...)
				}}).Build()
			done, err := Uninstall(context.Background(), c, objs, UninstallOptions{Force: tc.force})
			var inUse *InUseError
			if tc.refusal != "" {
				if !errors.As(err, &inUse) || !strings.Contains(err.Error(), tc.refusal) || !inUse.Blocked() {
					t.Fatalf("error %v, want an InUseError saying %q", err, tc.refusal)
				}
				if len(deletes) > 0 {
					t.Errorf("refused but deleted %v", deletes)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range done {
				got = append(got, r.Ref)
				wantVerb := AlreadyDeleted
				if strings.HasPrefix(r.Ref, "deployment.apps/") || strings.HasPrefix(r.Ref, "customresourcedefinition") {
					wantVerb = Deleted // the three objects the cluster had
				}
				if r.Verb != wantVerb {
					t.Errorf("%s %s, want %s", r.Ref, r.Verb, wantVerb)
				}
			}
			if !slices.Equal(got, tc.deleted) {
				t.Errorf("deleted %v, want %v", got, tc.deleted)
			}
		})
	}
}

func TestInUseErrorNamesFiveAndCountsTheRest(t *testing.T) {
	e := &InUseError{Active: []string{"a", "b", "c", "d"}, Pools: []string{"p", "q", "r"}}
	want := "refusing to uninstall: deleting the CRDs would delete a, b, c, d, p, and 2 more"
	if e.Error() != want {
		t.Errorf("%q, want %q", e.Error(), want)
	}
}

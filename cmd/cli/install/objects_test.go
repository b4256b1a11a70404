package install

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// kinds lists objs as Kind/name.
func kinds(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetKind()+"/"+o.GetName())
	}
	return out
}

const ctl = "kubectl-maintenance-controller"

var crds = []string{
	"CustomResourceDefinition/nodepools.maintenance.kubectl-maintenance.io",
	"CustomResourceDefinition/maintenances.maintenance.kubectl-maintenance.io",
}

func TestObjects(t *testing.T) {
	controller := append(slices.Clone(crds), "ServiceAccount/"+ctl, "ClusterRole/"+ctl,
		"ClusterRole/kubectl-maintenance-view", "ClusterRole/kubectl-maintenance-edit", "ClusterRole/kubectl-maintenance-admin",
		"ClusterRoleBinding/"+ctl, "PodDisruptionBudget/"+ctl, "Deployment/"+ctl,
		"ValidatingAdmissionPolicy/kubectl-maintenance-requester-rights", "ValidatingAdmissionPolicyBinding/kubectl-maintenance-requester-rights")
	tests := map[string]struct {
		opts      Options
		want      []string
		namespace string
		image     string
	}{
		"without the controller only the CRDs": {Options{}, crds, "", ""},
		"the controller in kube-system with the manifest's image": {Options{Controller: true}, controller,
			"kube-system", "ghcr.io/kubectl-maintenance/kubectl-maintenance:dev"},
		"another namespace and image": {Options{Controller: true, Namespace: "ops", Image: "registry.example/km:v1"}, controller,
			"ops", "registry.example/km:v1"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			objs, err := Objects(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := kinds(objs); !slices.Equal(got, tc.want) {
				t.Fatalf("objects %v, want %v", got, tc.want)
			}
			for _, o := range objs {
				switch o.GetKind() {
				case "CustomResourceDefinition", "ClusterRole", "ClusterRoleBinding", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding":
					if o.GetNamespace() != "" {
						t.Errorf("%s has namespace %q", Ref(o), o.GetNamespace())
					}
				default:
					if o.GetNamespace() != tc.namespace {
						t.Errorf("%s in namespace %q, want %q", Ref(o), o.GetNamespace(), tc.namespace)
					}
				}
				if o.GetKind() == "ClusterRoleBinding" {
					subjects, _, _ := unstructured.NestedSlice(o.Object, "subjects")
					if ns := subjects[0].(map[string]any)["namespace"]; ns != tc.namespace {
						t.Errorf("the binding's ServiceAccount in %v, want %s", ns, tc.namespace)
					}
				}
				if o.GetKind() == "Deployment" {
					c := container(t, o)
					if c["image"] != tc.image {
						t.Errorf("image %v, want %s", c["image"], tc.image)
					}
					if args := strings.Join(strs(c["args"]), " "); !strings.Contains(args, leaderElectionFlag+tc.namespace) {
						t.Errorf("args %q: the Lease is not in %s", args, tc.namespace)
					}
				}
			}
		})
	}
}

func TestObjectsRefusesAnImageWithoutTheController(t *testing.T) {
	if _, err := Objects(Options{Image: "x"}); err == nil {
		t.Fatal("an image without the controller was accepted")
	}
}

func TestRewritePointsReferencesAtTheNamespace(t *testing.T) {
	hook := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
		"metadata": map[string]any{"name": "w"},
		"webhooks": []any{
			map[string]any{"name": "ours", "clientConfig": map[string]any{"service": map[string]any{"name": "s", "namespace": "kube-system"}}},
			map[string]any{"name": "theirs", "clientConfig": map[string]any{"service": map[string]any{"name": "s", "namespace": "other"}}},
			map[string]any{"name": "url", "clientConfig": map[string]any{"url": "https://x"}},
		},
	}}
	if err := rewrite(hook, "ops", map[string]bool{"kube-system": true}, ""); err != nil {
		t.Fatal(err)
	}
	var got []string
	hooks, _, _ := unstructured.NestedSlice(hook.Object, "webhooks")
	for _, h := range hooks {
		ns, _, _ := unstructured.NestedString(h.(map[string]any), "clientConfig", "service", "namespace")
		got = append(got, ns)
	}
	if want := []string{"ops", "other", ""}; !slices.Equal(got, want) {
		t.Errorf("webhook service namespaces %v, want %v", got, want)
	}
}

func TestApplyOrderPutsAdmissionLastAndUnknownKindsBeforeIt(t *testing.T) {
	order := []string{"ValidatingWebhookConfiguration", "Frobnicator", "Deployment", "ValidatingAdmissionPolicyBinding",
		"ValidatingAdmissionPolicy", "ClusterRole", "CustomResourceDefinition", "ServiceAccount"}
	slices.SortStableFunc(order, func(a, b string) int { return applyRank(a) - applyRank(b) })
	want := []string{"CustomResourceDefinition", "ServiceAccount", "ClusterRole", "Deployment", "Frobnicator",
		"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "ValidatingWebhookConfiguration"}
	if !slices.Equal(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
}

func TestDecodeSkipsEmptyDocumentsAndNamesTheBadOne(t *testing.T) {
	objs, err := decode("f.yaml", []byte("# only a comment\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n"))
	if err != nil || len(objs) != 1 {
		t.Fatalf("got %d objects, %v; want 1", len(objs), err)
	}
	_, err = decode("f.yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\n"))
	if err == nil || !strings.Contains(err.Error(), "f.yaml, document 2") {
		t.Errorf("error %v, want one naming f.yaml, document 2", err)
	}
}

func container(t *testing.T, o *unstructured.Unstructured) map[string]any {
	t.Helper()
	cs, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
	if len(cs) != 1 {
		t.Fatalf("%d containers, want 1", len(cs))
	}
	return cs[0].(map[string]any)
}

func strs(v any) []string {
	var out []string
	l, _ := v.([]any)
	for _, s := range l {
		out = append(out, str(s))
	}
	return out
}

// An apply's bookkeeping (resourceVersion, managedFields) is no change; anything else is.
func TestSameContent(t *testing.T) {
	obj := func(rv, manager, image string) *unstructured.Unstructured {
		o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "d", "resourceVersion": rv, "managedFields": []any{map[string]any{"manager": manager}}},
			"spec":     map[string]any{"image": image}}}
		return o
	}
	tests := map[string]struct {
		a, b *unstructured.Unstructured
		want bool
	}{
		"only the bookkeeping differs": {obj("1", "a", "x"), obj("2", "b", "x"), true},
		"the spec differs":             {obj("1", "a", "x"), obj("1", "a", "y"), false},
	}
	for name, tc := range tests {
		if got := sameContent(tc.a, tc.b); got != tc.want {
			t.Errorf("%s: %v, want %v", name, got, tc.want)
		}
	}
}

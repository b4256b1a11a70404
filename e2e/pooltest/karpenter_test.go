package pooltest

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
)

// karpenterNodePools is the resource of the stand-in Karpenter NodePool CRD.
var karpenterNodePools = schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodepools"}

// installKarpenterStandIn installs a stand-in of Karpenter's NodePool CRD (karpenter.sh/v1,
// cluster-scoped, the same plural and kind as ours, category karpenter) and removes it at
// the test's end.
func installKarpenterStandIn(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	ax, err := apiextensionsclient.NewForConfig(shared.Config)
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "nodepools.karpenter.sh"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "karpenter.sh", Scope: apiextensionsv1.ClusterScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "nodepools", Singular: "nodepool", Kind: "NodePool",
				ListKind: "NodePoolList", Categories: []string{"karpenter"}},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptrTrue()}}}},
		},
	}
	if _, err := ax.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = ax.ApiextensionsV1().CustomResourceDefinitions().Delete(context.Background(), crd.Name, metav1.DeleteOptions{})
	})
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		c, err := ax.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, cond := range c.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("the stand-in Karpenter CRD is not established: %v", err)
	}
}

func ptrTrue() *bool { b := true; return &b }

// TestBesideKarpentersNodePool: with Karpenter's NodePool CRD installed and Karpenter pools
// of the same names as ours, pool list, pool apply and pool move act on ours alone;
// Karpenter's objects are untouched; our CRD's short name and category are served.
func TestBesideKarpentersNodePool(t *testing.T) {
	e := newEnv(t, "a", "b")
	installKarpenterStandIn(t)
	dyn, err := dynamic.NewForConfig(shared.Config)
	if err != nil {
		t.Fatal(err)
	}
	blue, green := e.NS+"-blue", e.NS+"-green"
	karp := map[string]string{} // name -> resourceVersion
	for _, name := range []string{blue, green, e.NS + "-karpenter-only"} {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
			"metadata": map[string]any{"name": name}, "spec": map[string]any{"template": map[string]any{"spec": map[string]any{}}}}}
		u, err := dyn.Resource(karpenterNodePools).Create(e.Ctx, u, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		karp[name] = u.GetResourceVersion()
		t.Cleanup(func() {
			_ = dyn.Resource(karpenterNodePools).Delete(context.Background(), name, metav1.DeleteOptions{})
		})
	}

	// pool apply creates ours (moveSetup applies blue and green); the move acts on ours.
	blue, green = moveSetup(e, 2, 1, 1)
	r := e.Run("pool", "list")
	if r.Code != 0 {
		t.Fatalf("pool list exit %d", r.Code)
	}
	fixture.MustContain(t, "pool list", r.Stdout, blue, green)
	if strings.Contains(r.Stdout, e.NS+"-karpenter-only") {
		t.Errorf("pool list shows Karpenter's NodePool:\n%s", r.Stdout)
	}
	r = e.Run("pool", "get", "nodepool.karpenter.sh/"+blue)
	if r.Code != 2 {
		t.Errorf("pool get of Karpenter's NodePool exit %d, want 2", r.Code)
	}
	r = e.Run("pool", "get", "-o", "name", blue)
	if r.Code != 0 || strings.TrimSpace(r.Stdout) != "nodepool.maintenance.kubectl-maintenance.io/"+blue {
		t.Fatalf("pool get -o name exit %d: %q", r.Code, r.Stdout)
	}
	g := e.Guard()
	r = e.Run("pool", "move", "node/"+e.Nodes[0], "--to", "nodepool.maintenance.kubectl-maintenance.io/"+green)
	if r.Code != 0 {
		t.Fatalf("pool move exit %d, want 0", r.Code)
	}
	checkMoved(e, e.Nodes[0], blue, green)
	if g.Deleted != 2 {
		t.Errorf("guard saw %d evictions, want 2", g.Deleted)
	}
	for name, rv := range karp {
		u, err := dyn.Resource(karpenterNodePools).Get(e.Ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if u.GetResourceVersion() != rv {
			t.Errorf("Karpenter's NodePool %s was changed (resourceVersion %s -> %s)", name, rv, u.GetResourceVersion())
		}
	}

	// kubectl get mntpool / kubectl get maintenance: discovery serves our short name and
	// category, and Karpenter's NodePool is in neither.
	list, err := e.C.Discovery().ServerResourcesForGroupVersion(v1alpha1.GroupVersion.String())
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, res := range list.APIResources {
		if res.Name == "nodepools" {
			found = true
			if !slices.Contains(res.ShortNames, "mntpool") || !slices.Contains(res.Categories, "maintenance") {
				t.Errorf("our nodepools: short names %v, categories %v; want mntpool and maintenance", res.ShortNames, res.Categories)
			}
		}
	}
	if !found {
		t.Errorf("nodepools not served in %s", v1alpha1.GroupVersion)
	}
}

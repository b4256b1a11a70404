package maintenance

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crfake "sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// The finalizer is added and removed with a merge patch of metadata alone (the list and
// the resourceVersion it was read at), never an update: the spec is not sent, so its
// drain and policy blocks are not written as {} where the object has none.
func TestFinalizerPatchCarriesMetadataOnly(t *testing.T) {
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		before []string
		change func(client.Object)
		want   []string
	}{
		"added":   {nil, func(o client.Object) { controllerutil.AddFinalizer(o, Finalizer) }, []string{Finalizer}},
		"removed": {[]string{"other", Finalizer}, func(o client.Object) { controllerutil.RemoveFinalizer(o, Finalizer) }, []string{"other"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			obj := &v1alpha1.Maintenance{ObjectMeta: metav1.ObjectMeta{Name: "m1", Finalizers: tc.before},
				Spec: v1alpha1.MaintenanceSpec{Action: v1alpha1.ActionCordon, Nodes: []string{"n1"}}}
			var sent []byte
			updates := 0
			c := crfake.NewClientBuilder().WithScheme(s).WithObjects(obj).WithInterceptorFuncs(interceptor.Funcs{
				Patch: func(ctx context.Context, c client.WithWatch, o client.Object, p client.Patch, opts ...client.PatchOption) error {
					sent, _ = p.Data(o)
					return c.Patch(ctx, o, p, opts...)
				},
				Update: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.UpdateOption) error {
					updates++
					return c.Update(ctx, o, opts...)
				}}).Build()
			m := &v1alpha1.Maintenance{}
			if err := c.Get(context.Background(), client.ObjectKey{Name: "m1"}, m); err != nil {
				t.Fatal(err)
			}
			rv := m.ResourceVersion
			if err := patchFinalizers(context.Background(), c, m, tc.change); err != nil {
				t.Fatal(err)
			}
			var body map[string]map[string]any
			if err := json.Unmarshal(sent, &body); err != nil {
				t.Fatalf("patch %s: %v", sent, err)
			}
			if len(body) != 1 || body["metadata"] == nil || len(body["metadata"]) != 2 || body["metadata"]["resourceVersion"] != rv {
				t.Errorf("patch %s, want metadata.finalizers and metadata.resourceVersion alone", sent)
			}
			if updates != 0 {
				t.Errorf("%d update(s), want none", updates)
			}
			if !reflect.DeepEqual(m.Finalizers, tc.want) {
				t.Errorf("finalizers %v, want %v", m.Finalizers, tc.want)
			}
		})
	}
}

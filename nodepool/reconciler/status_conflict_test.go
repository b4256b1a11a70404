package reconciler

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
)

// Two pool syncs at once (or a sync and the controller): the status write that loses the
// race is written again on the fresh pool, not returned as an error, unless the pool's
// spec moved on meanwhile (the newer generation's sync writes its status).
func TestStatusWriteSurvivesAConcurrentWriter(t *testing.T) {
	for _, tc := range []struct {
		name        string
		specChanged bool
		wantNodes   int32
	}{
		{name: "same spec: written again", wantNodes: 2},
		{name: "spec moved on: left to its own sync", specChanged: true, wantNodes: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := runtime.NewScheme()
			utilruntime.Must(clientgoscheme.AddToScheme(s))
			utilruntime.Must(v1alpha1.AddToScheme(s))
			pool := &v1alpha1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "blue", Generation: 1}}
			conflicts := 0
			c := fake.NewClientBuilder().WithScheme(s).WithObjects(pool).WithStatusSubresource(pool).
				WithInterceptorFuncs(interceptor.Funcs{SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
					if conflicts == 0 {
						conflicts++
						// The other writer's update lands first.
						other := &v1alpha1.NodePool{}
						if err := c.Get(ctx, client.ObjectKeyFromObject(obj), other); err != nil {
							return err
						}
						if tc.specChanged {
							three := int32(3)
							other.Spec.MaxUnavailable = &three
							other.Generation++
							if err := c.Update(ctx, other); err != nil {
								return err
							}
						}
						return apierrors.NewConflict(schema.GroupResource{Group: v1alpha1.GroupVersion.Group, Resource: "nodepools"}, obj.GetName(), nil)
					}
					return c.SubResource(sub).Update(ctx, obj, opts...)
				}}).Build()
			read := &v1alpha1.NodePool{}
			if err := c.Get(context.Background(), client.ObjectKey{Name: "blue"}, read); err != nil {
				t.Fatal(err)
			}
			r := &Reconciler{Client: c}
			if err := r.writeStatus(context.Background(), read, &poolState{members: 2}); err != nil {
				t.Fatalf("writeStatus after a conflict: %v", err)
			}
			got := &v1alpha1.NodePool{}
			if err := c.Get(context.Background(), client.ObjectKey{Name: "blue"}, got); err != nil {
				t.Fatal(err)
			}
			if got.Status.Nodes != tc.wantNodes || conflicts != 1 {
				t.Errorf("status.nodes %d after %d conflict(s), want %d after 1", got.Status.Nodes, conflicts, tc.wantNodes)
			}
		})
	}
}

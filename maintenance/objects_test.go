package maintenance

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crfake "sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// Get, SetPaused and Cancel: a name that does not exist is the user's input to fix
// (one line, exit 2 in the CLI); --all pauses only the objects not finished.
func TestObjectsNameWhatIsMissing(t *testing.T) {
	s := runtime.NewScheme()
	utilruntime.Must(v1alpha1.AddToScheme(s))
	running := &v1alpha1.Maintenance{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Status: v1alpha1.MaintenanceStatus{Phase: v1alpha1.PhaseRunning}}
	done := &v1alpha1.Maintenance{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Status: v1alpha1.MaintenanceStatus{Phase: v1alpha1.PhaseSucceeded}}
	c := crfake.NewClientBuilder().WithScheme(s).WithObjects(running, done).Build()
	ctx := context.Background()

	list, err := Get(ctx, c, []string{"b", "a"})
	if err != nil || len(list.Items) != 2 || list.Items[0].Name != "b" {
		t.Errorf("Get b a: %v, %v; want both in order", list, err)
	}
	for name, err := range map[string]error{
		"Get":       func() error { _, err := Get(ctx, c, []string{"a", "nosuch"}); return err }(),
		"SetPaused": SetPaused(ctx, c, []string{"nosuch"}, false, true, func(string) {}),
		"Cancel":    Cancel(ctx, c, "nosuch"),
	} {
		var ue *drain.UsageError
		if !errors.As(err, &ue) || !drain.IsUsage(err) || err.Error() != `maintenance "nosuch" not found` {
			t.Errorf("%s of a missing object: %v, want a usage error naming it", name, err)
		}
	}
	var paused []string
	if err := SetPaused(ctx, c, nil, true, true, func(n string) { paused = append(paused, n) }); err != nil || !slices.Equal(paused, []string{"a"}) {
		t.Errorf("pause --all: %v, %v; want a alone (b is finished)", paused, err)
	}
}

// Create: an object the API server refuses stays IsInvalid (the CLI's exit 2), its message
// saying who refused it.
func TestCreateSaysWhoRefused(t *testing.T) {
	s := runtime.NewScheme()
	utilruntime.Must(v1alpha1.AddToScheme(s))
	invalid := apierrors.NewInvalid(v1alpha1.GroupVersion.WithKind("Maintenance").GroupKind(), "x", nil)
	c := crfake.NewClientBuilder().WithScheme(s).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error { return invalid },
	}).Build()
	_, err := Create(context.Background(), c, "x", v1alpha1.MaintenanceSpec{Action: v1alpha1.ActionDrain}, "")
	if !apierrors.IsInvalid(err) || !strings.HasPrefix(err.Error(), "the API server refused the Maintenance: ") {
		t.Errorf("Create refused: %v, want IsInvalid naming the API server", err)
	}
	ok := crfake.NewClientBuilder().WithScheme(s).Build()
	if m, err := Create(context.Background(), ok, "x", v1alpha1.MaintenanceSpec{Action: v1alpha1.ActionDrain}, "alice"); err != nil || m.Name != "x" || m.Annotations[AnnotationRequestedBy] != "alice" {
		t.Errorf("Create x by alice: %v, %v; want it named x, requested by alice", m, err)
	}
	if m, err := Create(context.Background(), ok, "y", v1alpha1.MaintenanceSpec{Action: v1alpha1.ActionDrain}, ""); err != nil || len(m.Annotations) != 0 {
		t.Errorf("Create y by an unknown user: %v, %v; want no requested-by annotation", m, err)
	}
}

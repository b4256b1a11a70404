package maintenance

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crfake "sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// A follower rides out reads that fail in a way that may pass (the API server down or
// restarting): it says so once, reads again with backoff, says once that it answers
// again, and returns the object's outcome. An error a retry cannot fix ends it at once.
func TestFollowerRidesOutAnOutage(t *testing.T) {
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	gr := v1alpha1.GroupVersion.WithResource("maintenances").GroupResource()
	refused := &url.Error{Op: "Get", URL: "https://127.0.0.1:6443/apis", Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}
	tests := map[string]struct {
		fail      error
		failures  int
		wantErr   bool
		wantSaid  int // Unreachable and Reachable calls each
		wantPhase v1alpha1.Phase
	}{
		"connection refused for five reads": {fail: refused, failures: 5, wantSaid: 1, wantPhase: v1alpha1.PhaseSucceeded},
		"503 while the server starts":       {fail: apierrors.NewServiceUnavailable("starting"), failures: 2, wantSaid: 1, wantPhase: v1alpha1.PhaseSucceeded},
		"a timeout":                         {fail: apierrors.NewTimeoutError("slow", 1), failures: 1, wantSaid: 1, wantPhase: v1alpha1.PhaseSucceeded},
		"forbidden ends it":                 {fail: apierrors.NewForbidden(gr, "m1", errors.New("no")), failures: 1, wantErr: true},
		"unauthorized ends it":              {fail: apierrors.NewUnauthorized("who"), failures: 1, wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			obj := &v1alpha1.Maintenance{ObjectMeta: metav1.ObjectMeta{Name: "m1"}, Status: v1alpha1.MaintenanceStatus{Phase: v1alpha1.PhaseRunning}}
			reads := 0
			c := crfake.NewClientBuilder().WithScheme(s).WithObjects(obj).WithInterceptorFuncs(interceptor.Funcs{
				Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, o client.Object, opts ...client.GetOption) error {
					reads++
					switch {
					case reads == 1:
						return c.Get(ctx, key, o, opts...) // Running
					case reads <= 1+tc.failures:
						return fmt.Errorf("get: %w", tc.fail)
					}
					if err := c.Get(ctx, key, o, opts...); err != nil {
						return err
					}
					o.(*v1alpha1.Maintenance).Status.Phase = v1alpha1.PhaseSucceeded
					return nil
				}}).Build()
			down, back := 0, 0
			f := &Follower{Client: c, every: time.Millisecond,
				Unreachable: func(error) { down++ }, Reachable: func(time.Duration) { back++ }}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			m, err := f.Follow(ctx, "m1")
			if (err != nil) != tc.wantErr {
				t.Fatalf("Follow error %v, want error: %v", err, tc.wantErr)
			}
			if !tc.wantErr && m.Status.Phase != tc.wantPhase {
				t.Errorf("phase %s, want %s", m.Status.Phase, tc.wantPhase)
			}
			if down != tc.wantSaid || back != tc.wantSaid {
				t.Errorf("said unreachable %d and reachable %d times, want %d each", down, back, tc.wantSaid)
			}
		})
	}
}

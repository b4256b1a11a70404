package source

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-maintenance/kubectl-maintenance/internal/kubefake"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui/data"
)

// waitSnapshot reads snapshots until ok accepts one, for at most limit.
func waitSnapshot(t *testing.T, s *Source, limit time.Duration, ok func(data.Snapshot) bool) data.Snapshot {
	t.Helper()
	deadline := time.After(limit)
	var last data.Snapshot
	for {
		select {
		case snap := <-s.Snapshots():
			last = snap
			if ok(snap) {
				return snap
			}
		case <-deadline:
			t.Fatalf("no matching snapshot within %s; the last: %+v", limit, last)
		}
	}
}

func run(t *testing.T, s *Source) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("Run did not return after its context ended")
		}
	})
}

func TestSourceListsThenReportsSynced(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}, Spec: corev1.PodSpec{NodeName: "n1"},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	s, err := New(Config{Kube: kubefake.New(node, pod), ProbeEvery: 50 * time.Millisecond, SnapshotEvery: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	run(t, s)
	snap := waitSnapshot(t, s, 10*time.Second, func(s data.Snapshot) bool { return s.Synced && len(s.Nodes) == 1 })
	if snap.Problem != "" || snap.Nodes[0].Pods != 1 {
		t.Errorf("snapshot = %+v, want n1 with 1 pod and no problem", snap)
	}
}

func TestSourceSaysWhatIsWrongInOneLine(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"a user who may not list nodes", apierrors.NewForbidden(schema.GroupResource{Resource: "nodes"}, "",
			errors.New(`User "viewer" cannot list resource "nodes" in API group "" at the cluster scope`)),
			`not allowed to list/watch nodes (RBAC): nodes is forbidden: User "viewer" cannot list resource "nodes"`},
		{"an unreachable server", &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")},
			"cannot reach the API server at https://127.0.0.1:1 (connect: connection refused); retrying"},
		{"a server that does not answer", context.DeadlineExceeded, "the API server at https://127.0.0.1:1 did not answer within 10s; retrying"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cs := kubefake.New()
			cs.PrependReactor("list", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, tc.err })
			s, err := New(Config{Kube: cs, Server: "https://127.0.0.1:1", ProbeEvery: 50 * time.Millisecond, SnapshotEvery: 10 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			run(t, s)
			snap := waitSnapshot(t, s, 10*time.Second, func(s data.Snapshot) bool { return s.Problem != "" })
			if !strings.Contains(snap.Problem, tc.want) || strings.Contains(snap.Problem, "\n") || snap.Synced {
				t.Errorf("problem = %q (synced %v), want one line with %q", snap.Problem, snap.Synced, tc.want)
			}
		})
	}
}

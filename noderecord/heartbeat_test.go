package noderecord

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/internal/kubefake"
)

func TestRenewHeartbeatWritesOnlyWhileTheRecordIsTheRuns(t *testing.T) {
	ours := Run{ID: "ours", Host: "h", PID: 1}
	theirs := Run{ID: "theirs", Host: "h", PID: 2}
	before := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	now := before.Add(HeartbeatInterval)
	tests := []struct {
		name        string
		state       string
		annotations map[string]string
		renewed     bool
	}{
		{"the run drains the node", StateDraining, map[string]string{AnnotationRun: ours.encode(), AnnotationHeartbeat: before.Format(time.RFC3339)}, true},
		{"another run took it", StateDraining, map[string]string{AnnotationRun: theirs.encode(), AnnotationHeartbeat: before.Format(time.RFC3339)}, false},
		{"the run let it go (drained)", StateDrained, map[string]string{AnnotationRun: ours.encode()}, false},
		{"the run let it go (failed)", StateFailed, map[string]string{AnnotationRun: ours.encode()}, false},
		{"the record was removed", "", nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Annotations: tc.annotations}}
			if tc.state != "" {
				n.Labels = map[string]string{LabelState: tc.state}
			}
			c := kubefake.New(n)
			err := RenewHeartbeat(context.Background(), c.CoreV1(), "n1", ours, now)
			if (err == nil) != tc.renewed {
				t.Fatalf("RenewHeartbeat: err %v, want renewed %v", err, tc.renewed)
			}
			n, _ = c.CoreV1().Nodes().Get(context.Background(), "n1", metav1.GetOptions{})
			hb, has := n.Annotations[AnnotationHeartbeat]
			want, wantHas := tc.annotations[AnnotationHeartbeat]
			if tc.renewed {
				want, wantHas = now.Format(time.RFC3339), true
			}
			if hb != want || has != wantHas {
				t.Errorf("heartbeat %q (present %v), want %q (present %v)", hb, has, want, wantHas)
			}
			if n.Annotations[AnnotationRun] != tc.annotations[AnnotationRun] {
				t.Errorf("run annotation changed to %q", n.Annotations[AnnotationRun])
			}
		})
	}
}

func TestAnnotationPathEscapes(t *testing.T) {
	if got, want := annotationPath("kubectl-maintenance.io/run~x"), "/metadata/annotations/kubectl-maintenance.io~1run~0x"; got != want {
		t.Errorf("annotationPath = %q, want %q", got, want)
	}
}

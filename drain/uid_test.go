package drain

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
)

// Issue 44, test 3: no eviction is sent with a UID other than the one the pod had when it
// was planned. A pod waits on its budget; meanwhile it is replaced by a pod of the same
// name (a StatefulSet's) on another node. When the budget makes room, the replaced pod is
// done (it left the node), not evicted: no request names the replacement's UID, and an
// eviction of the name with the old UID, had one been sent, would carry its precondition.
func TestNoEvictionOfAReplacementWithTheSameName(t *testing.T) {
	for _, tc := range []struct {
		name    string
		replace bool // replace p1 by a pod of the same name on n2 while it waits
		want    []types.UID
	}{
		{name: "the planned pod is evicted with its UID", want: []types.UID{"u1"}},
		{name: "a replacement of the same name is not evicted", replace: true, want: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			budget := testPDB(0)
			budget.ResourceVersion = "1"
			g := newRig(t, Config{}, testNode("n1"), testNode("n2"), podOn("p1", "n1", "u1"), budget)
			var mu sync.Mutex
			var sent []types.UID
			g.answer = func(_ int, ev *policyv1.Eviction) error {
				mu.Lock()
				defer mu.Unlock()
				var uid types.UID
				if ev.DeleteOptions != nil && ev.DeleteOptions.Preconditions != nil && ev.DeleteOptions.Preconditions.UID != nil {
					uid = *ev.DeleteOptions.Preconditions.UID
				}
				sent = append(sent, uid)
				return g.client.Tracker().Delete(corev1.SchemeGroupVersion.WithResource("pods"), ev.Namespace, ev.Name)
			}
			g.start("n1")
			r := <-g.run
			g.next(event.EventEvictionBlocked, 0) // parked on the budget, nothing sent
			if tc.replace {
				pods := g.client.CoreV1().Pods(budget.Namespace)
				if err := pods.Delete(context.Background(), "p1", metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
				if _, err := pods.Create(context.Background(), podOn("p1", "n2", "u2"), metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			room := budget.DeepCopy()
			room.ResourceVersion = "2"
			room.Status.DisruptionsAllowed = 1
			updatePDB(t, g, room)
			g.quiesce(r, "2")
			res := g.finishStepping(time.Second)
			if res.err != nil {
				t.Fatalf("Run = %v", res.err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(sent) != len(tc.want) {
				t.Fatalf("evictions sent with UIDs %q, want %q", sent, tc.want)
			}
			for i := range sent {
				if sent[i] != tc.want[i] {
					t.Errorf("eviction %d carried UID %q, want %q", i, sent[i], tc.want[i])
				}
			}
			if res.sum.NodesDrained != 1 {
				t.Errorf("summary %+v, want n1 drained", res.sum)
			}
		})
	}
}

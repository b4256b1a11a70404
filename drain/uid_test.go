package drain

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	k8stesting "k8s.io/client-go/testing"

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
		want    int  // evictions sent (each with u1)
	}{
		{name: "the planned pod is evicted with its UID", want: 1},
		// Its informer may see it go before or after the budget's room: at most one
		// request, with u1, which the server refuses (409) since p1 is now u2.
		{name: "a replacement of the same name is not evicted", replace: true, want: -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			budget := testPDB(0)
			budget.ResourceVersion = "1"
			g := newRig(t, Config{}, testNode("n1"), testNode("n2"), podOn("p1", "n1", "u1"), budget)
			honourNodeSelector(g)
			honourNodeSelectorInWatches(g) // the replacement on n2 never reaches n1's informer
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
				pods := corev1.SchemeGroupVersion.WithResource("pods")
				cur, err := g.client.Tracker().Get(pods, ev.Namespace, ev.Name)
				if err != nil {
					return err
				}
				if uid != "" && cur.(*corev1.Pod).UID != uid { // as the API server: the UID precondition
					return apierrors.NewConflict(pods.GroupResource(), ev.Name, errors.New("the UID in the precondition does not match"))
				}
				return g.client.Tracker().Delete(pods, ev.Namespace, ev.Name)
			}
			g.start("n1")
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
			updatePDB(t, g, room) // wakes the pod; with it replaced, the node may be drained already
			res := g.finishStepping(time.Second)
			if res.err != nil {
				t.Fatalf("Run = %v", res.err)
			}
			mu.Lock()
			defer mu.Unlock()
			for i, uid := range sent {
				if uid != "u1" {
					t.Errorf("eviction %d carried UID %q, want u1 (the planned pod's)", i, uid)
				}
			}
			if tc.want >= 0 && len(sent) != tc.want {
				t.Errorf("%d evictions sent, want %d", len(sent), tc.want)
			}
			if tc.replace {
				if len(sent) > 1 {
					t.Errorf("%d evictions sent, want at most 1", len(sent))
				}
				if _, err := g.client.CoreV1().Pods(budget.Namespace).Get(context.Background(), "p1", metav1.GetOptions{}); err != nil {
					t.Errorf("the replacement is gone: %v", err)
				}
			}
			if res.sum.NodesDrained != 1 {
				t.Errorf("summary %+v, want n1 drained", res.sum)
			}
		})
	}
}

// Issue 44: a node's pods recreated under their names (a StatefulSet's) are sent first,
// while the disruption controller's queue is short; the others after, in their order.
func TestPodsThatKeepTheirNamesGoFirst(t *testing.T) {
	sts := func(name string, uid types.UID) *corev1.Pod {
		p := podOn(name, "n1", uid)
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "db", UID: "sts", Controller: new(true)}}
		return p
	}
	g := newRig(t, Config{}, testNode("n1"), podOn("a-web", "n1", "u1"), podOn("b-web", "n1", "u2"), sts("z-db-0", "u3"), testPDB(5))
	var mu sync.Mutex
	var order []string
	g.answer = func(_ int, ev *policyv1.Eviction) error {
		mu.Lock()
		order = append(order, ev.Name)
		mu.Unlock()
		return g.client.Tracker().Delete(corev1.SchemeGroupVersion.WithResource("pods"), ev.Namespace, ev.Name)
	}
	g.start("n1")
	if res := g.finishStepping(time.Second); res.err != nil {
		t.Fatalf("Run = %v", res.err)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"z-db-0", "a-web", "b-web"}; !slices.Equal(order, want) {
		t.Errorf("evicted in the order %q, want %q", order, want)
	}
}

// honourNodeSelectorInWatches makes the fake clientset's pod watches apply the
// spec.nodeName field selector, as the API server does (the fake's watches apply none).
func honourNodeSelectorInWatches(g *rig) {
	g.client.PrependWatchReactor("pods", func(a k8stesting.Action) (bool, watch.Interface, error) {
		fs := a.(k8stesting.WatchAction).GetWatchRestrictions().Fields
		if fs == nil || fs.Empty() {
			return false, nil, nil
		}
		w, err := g.client.Tracker().Watch(corev1.SchemeGroupVersion.WithResource("pods"), a.GetNamespace())
		if err != nil {
			return true, nil, err
		}
		return true, watch.Filter(w, func(ev watch.Event) (watch.Event, bool) {
			p, ok := ev.Object.(*corev1.Pod)
			return ev, !ok || fs.Matches(fields.Set{"spec.nodeName": p.Spec.NodeName})
		}), nil
	})
}

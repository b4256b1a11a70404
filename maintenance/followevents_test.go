package maintenance

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crfake "sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// A followed Maintenance's node changes become the events a local run emits: one per
// state the status can tell, a node.cordoned no read saw before the state past it, one
// pod.eviction_blocked per new blocker, nothing for a state without an event.
func TestNodeChangeEventsAreTheLocalRunsEvents(t *testing.T) {
	since := metav1.NewTime(time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC))
	type ev struct {
		Type          event.Type
		Node, Pod     string
		PDB, Message  string
		Cause, Remedy string
	}
	tests := map[string]struct {
		ch   NodeChange
		want []ev
	}{
		"a node cordoned": {
			NodeChange{StateChanged: true, Was: NodePending, Node: v1alpha1.NodeStatus{Name: "n1", State: NodeCordoned}},
			[]ev{{Type: event.EventNodeCordoned, Node: "n1"}}},
		"a node first seen draining was cordoned first": {
			NodeChange{StateChanged: true, Node: v1alpha1.NodeStatus{Name: "n1", State: NodeDraining, PodsLeft: 3}},
			[]ev{{Type: event.EventNodeCordoned, Node: "n1"}}},
		"draining after cordoned says nothing": {
			NodeChange{StateChanged: true, Was: NodeCordoned, Node: v1alpha1.NodeStatus{Name: "n1", State: NodeDraining}},
			nil},
		"drained after draining": {
			NodeChange{StateChanged: true, Was: NodeDraining, Node: v1alpha1.NodeStatus{Name: "n1", State: NodeDrained}},
			[]ev{{Type: event.EventNodeDrained, Node: "n1"}}},
		"drained between two reads: cordoned, then drained": {
			NodeChange{StateChanged: true, Was: NodePending, Node: v1alpha1.NodeStatus{Name: "n1", State: NodeDrained}},
			[]ev{{Type: event.EventNodeCordoned, Node: "n1"}, {Type: event.EventNodeDrained, Node: "n1"}}},
		"moved names the target pool": {
			NodeChange{StateChanged: true, Was: NodeDraining, To: "green", Node: v1alpha1.NodeStatus{Name: "n1", State: NodeMoved}},
			[]ev{{Type: event.EventNodeMoved, Node: "n1", Message: "green"}}},
		"uncordoned": {
			NodeChange{StateChanged: true, Node: v1alpha1.NodeStatus{Name: "n1", State: NodeUncordoned}},
			[]ev{{Type: event.EventNodeUncordoned, Node: "n1"}}},
		"failed carries its message": {
			NodeChange{StateChanged: true, Was: NodeDraining, Node: v1alpha1.NodeStatus{Name: "n1", State: NodeFailed, Message: "boom"}},
			[]ev{{Type: event.EventNodeFailed, Node: "n1", Message: "boom"}}},
		"given up names its budgets": {
			NodeChange{StateChanged: true, Was: NodeDraining, Node: v1alpha1.NodeStatus{Name: "n1", State: NodeBlocked, Message: "gave up",
				Blockers: []v1alpha1.Blocker{{Pod: "ns/a", PDB: "ns/db"}, {Pod: "ns/b", PDB: "ns/db,ns/x"}}}},
			[]ev{{Type: event.EventNodeBlocked, Node: "n1", PDB: "ns/db,ns/x", Message: "gave up"}}},
		"a node given up with its wait seen in the same read: the wait first, as a local run": {
			NodeChange{StateChanged: true, Was: NodePending, Node: v1alpha1.NodeStatus{Name: "n1", State: NodeBlocked, Message: "gave up",
				Blockers: []v1alpha1.Blocker{{Pod: "ns/a", PDB: "ns/db"}}}, Blockers: []v1alpha1.Blocker{{Pod: "ns/a", PDB: "ns/db", Message: "waits"}}},
			[]ev{{Type: event.EventEvictionBlocked, Node: "n1", Pod: "ns/a", PDB: "ns/db", Message: "waits"}, {Type: event.EventNodeBlocked, Node: "n1", PDB: "ns/db", Message: "gave up"}}},
		"cordoned with a wait seen in the same read: the node first": {
			NodeChange{StateChanged: true, Was: NodePending, Node: v1alpha1.NodeStatus{Name: "n1", State: NodeCordoned}, Blockers: []v1alpha1.Blocker{{Pod: "ns/a", Message: "waits"}}},
			[]ev{{Type: event.EventNodeCordoned, Node: "n1"}, {Type: event.EventEvictionBlocked, Node: "n1", Pod: "ns/a", Message: "waits"}}},
		"not started": {
			NodeChange{StateChanged: true, Node: v1alpha1.NodeStatus{Name: "n1", State: NodeNotStarted, Message: "not started"}},
			[]ev{{Type: event.EventNodeNotStarted, Node: "n1", Message: "not started"}}},
		"pending says nothing": {
			NodeChange{StateChanged: true, Node: v1alpha1.NodeStatus{Name: "n1", State: NodePending}},
			nil},
		"a new blocker alone is a blocked wait": {
			NodeChange{Was: NodeDraining, Node: v1alpha1.NodeStatus{Name: "n1", State: NodeDraining},
				Blockers: []v1alpha1.Blocker{{Pod: "ns/a", PDB: "ns/db", Message: "pdb ns/db allows 0", Cause: "never allows", Remedy: "relax it"}}},
			[]ev{{Type: event.EventEvictionBlocked, Node: "n1", Pod: "ns/a", PDB: "ns/db", Message: "pdb ns/db allows 0", Cause: "never allows", Remedy: "relax it"}}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			tc.ch.Node.Since = &since
			var got []ev
			for _, e := range tc.ch.Events() {
				got = append(got, ev{e.Type, e.Node, e.Pod, e.PDB, e.Message, e.Cause, e.Remedy})
				if e.Type != event.EventEvictionBlocked && !e.Time.Equal(since.Time) {
					t.Errorf("%s at %v, want the node's since %v", e.Type, e.Time, since.Time)
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("events\n %+v\nwant\n %+v", got, tc.want)
			}
		})
	}
}

// A name that never existed is not found (a usage error, exit 2), not "deleted"; an
// object gone after a read was deleted (cancelled), and the last read comes back with
// the error for the summary.
func TestFollowTellsNotFoundFromDeleted(t *testing.T) {
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	t.Run("never existed", func(t *testing.T) {
		f := &Follower{Client: crfake.NewClientBuilder().WithScheme(s).Build()}
		m, err := f.Follow(context.Background(), "nosuch")
		if m != nil || err == nil || err.Error() != `maintenance "nosuch" not found` || !drain.IsUsage(err) {
			t.Errorf("Follow = %v, %v; want nil and the usage error `maintenance \"nosuch\" not found`", m, err)
		}
	})
	t.Run("deleted while followed", func(t *testing.T) {
		obj := &v1alpha1.Maintenance{ObjectMeta: metav1.ObjectMeta{Name: "m1"}, Status: v1alpha1.MaintenanceStatus{Phase: v1alpha1.PhaseRunning}}
		reads := 0
		c := crfake.NewClientBuilder().WithScheme(s).WithObjects(obj).WithInterceptorFuncs(interceptor.Funcs{
			Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, o client.Object, opts ...client.GetOption) error {
				if reads++; reads > 1 {
					return apierrors.NewNotFound(v1alpha1.GroupVersion.WithResource("maintenances").GroupResource(), key.Name)
				}
				return c.Get(ctx, key, o, opts...)
			}}).Build()
		m, err := (&Follower{Client: c}).Follow(context.Background(), "m1")
		if err == nil || !strings.Contains(err.Error(), "maintenance/m1 was deleted") || drain.IsUsage(err) {
			t.Errorf("error %v, want maintenance/m1 was deleted (not a usage error)", err)
		}
		if m == nil || m.Name != "m1" {
			t.Errorf("last read %v, want m1", m)
		}
	})
}

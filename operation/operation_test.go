package operation

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stypes "k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
	crfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/internal/kubefake"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
)

func node(name string, unschedulable bool, labels map[string]string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: corev1.NodeSpec{Unschedulable: unschedulable},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
}

func pod(name, nodeName string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: k8stypes.UID("uid-" + name),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", UID: "rs", Controller: ptr.To(true)}}},
		Spec:   corev1.PodSpec{NodeName: nodeName, Containers: []corev1.Container{{Name: "c", Image: "i"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
}

// cluster is a fake clientset whose evictions delete the pod, as the API server does
// when the budgets allow, and a NodePool client with pools blue and green.
func cluster(t *testing.T, objs ...runtime.Object) *Operator {
	t.Helper()
	cs := kubefake.New(objs...)
	reviews(cs, nil, nil) // every permission granted
	cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "eviction" {
			return false, nil, nil
		}
		ev := a.(k8stesting.CreateAction).GetObject().(*policyv1.Eviction)
		return true, nil, cs.Tracker().Delete(corev1.SchemeGroupVersion.WithResource("pods"), ev.Namespace, ev.Name)
	})
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(v1alpha1.AddToScheme(s))
	pools := crfake.NewClientBuilder().WithScheme(s).WithObjects(
		&v1alpha1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "blue"}, Spec: v1alpha1.NodePoolSpec{MaxUnavailable: ptr.To[int32](1)}},
		&v1alpha1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "green"}, Spec: v1alpha1.NodePoolSpec{MaxUnavailable: ptr.To[int32](1)}},
	).Build()
	return &Operator{Kube: cs, Pools: pools}
}

// run runs req to its end and returns its events.
func run(t *testing.T, op *Operator, ctx context.Context, req Request) ([]event.Event, Summary, error) {
	t.Helper()
	events := make(chan event.Event, 1000)
	type result struct {
		sum Summary
		err error
	}
	done := make(chan result, 1)
	go func() {
		sum, err := op.Run(ctx, req, events)
		close(events) // panics if Run sent anything after it returned
		done <- result{sum, err}
	}()
	var evs []event.Event
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				res := <-done
				return evs, res.sum, res.err
			}
			evs = append(evs, ev)
		case <-timeout:
			t.Fatalf("%s never ended; events so far: %v", req.Action, eventTypes(evs))
		}
	}
}

// eventTypes renders the events' types in order (pod.eviction_accepted left out: the fake
// deletes an evicted pod at once, and the engine says evicted without it when its watch
// sees the pod gone first).
func eventTypes(evs []event.Event) string {
	var out []string
	for _, ev := range evs {
		if ev.Type == event.EventEvictionAccepted {
			continue
		}
		s := string(ev.Type)
		if ev.Reason != "" && ev.Type != event.EventEvictionBlocked {
			s += "(" + ev.Reason + ")"
		}
		if ev.Already {
			s += "(already)"
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

func TestEachActionEmitsItsEventsInOrder(t *testing.T) {
	blue := map[string]string{nodepool.RoleLabel("blue"): ""}
	tests := []struct {
		name  string
		objs  []runtime.Object
		req   Request
		want  string
		check func(t *testing.T, op *Operator)
	}{
		{name: "a cordon emits node.cordoned and never node.drained",
			objs: []runtime.Object{node("n1", false, nil), pod("p1", "n1")},
			req:  Request{Action: Cordon, Nodes: []string{"n1"}},
			want: "node.cordoned",
			check: func(t *testing.T, op *Operator) {
				if !get(t, op, "n1").Spec.Unschedulable {
					t.Error("n1 is schedulable after the cordon")
				}
				if len(pods(t, op)) != 1 {
					t.Error("the cordon evicted a pod")
				}
			}},
		{name: "a cordon of a cordoned node says already",
			objs: []runtime.Object{node("n1", true, nil)},
			req:  Request{Action: Cordon, Nodes: []string{"n1"}},
			want: "node.cordoned(already)"},
		{name: "a client dry run of a cordon changes nothing",
			objs: []runtime.Object{node("n1", false, nil)},
			req:  Request{Action: Cordon, Nodes: []string{"n1"}, Drain: drain.Settings{DryRun: drain.DryRunClient}},
			want: "node.cordoned",
			check: func(t *testing.T, op *Operator) {
				if get(t, op, "n1").Spec.Unschedulable {
					t.Error("a dry run cordoned n1")
				}
			}},
		{name: "an uncordon of someone else's cordon leaves the node cordoned",
			objs: []runtime.Object{node("n1", true, nil)},
			req:  Request{Action: Uncordon, Nodes: []string{"n1"}},
			want: "node.uncordoned(LeftCordoned)",
			check: func(t *testing.T, op *Operator) {
				if !get(t, op, "n1").Spec.Unschedulable {
					t.Error("n1 was uncordoned although the cordon was someone else's")
				}
			}},
		{name: "an uncordon with force makes any node schedulable",
			objs: []runtime.Object{node("n1", true, nil)},
			req:  Request{Action: Uncordon, Nodes: []string{"n1"}, Force: true},
			want: "node.uncordoned",
			check: func(t *testing.T, op *Operator) {
				if get(t, op, "n1").Spec.Unschedulable {
					t.Error("n1 is still cordoned")
				}
			}},
		{name: "an uncordon of a schedulable node says already",
			objs: []runtime.Object{node("n1", false, nil)},
			req:  Request{Action: Uncordon, Nodes: []string{"n1"}},
			want: "node.uncordoned(AlreadySchedulable)"},
		{name: "a drain plans, cordons, evicts and says drained",
			objs: []runtime.Object{node("n1", false, nil), pod("p1", "n1")},
			req:  Request{Action: Drain, Nodes: []string{"n1"}},
			want: "plan node.cordoned pod.eviction_started pod.evicted node.drained",
			check: func(t *testing.T, op *Operator) {
				if len(pods(t, op)) != 0 {
					t.Error("a pod is left after the drain")
				}
			}},
		{name: "a pool's drain rolls: one plan, each node cordoned as it starts",
			objs: []runtime.Object{node("b1", false, blue), node("b2", false, blue)},
			req:  Request{Action: Drain, Pool: "blue"},
			want: "plan node.cordoned node.drained node.cordoned node.drained"},
		{name: "a move drains, relabels and uncordons",
			objs: []runtime.Object{node("b1", false, blue), pod("p1", "b1")},
			req:  Request{Action: Move, Nodes: []string{"b1"}, To: "green"},
			want: "plan node.cordoned pod.eviction_started pod.evicted node.drained node.moved node.uncordoned",
			check: func(t *testing.T, op *Operator) {
				n := get(t, op, "b1")
				if _, ok := n.Labels[nodepool.RoleLabel("green")]; !ok || n.Spec.Unschedulable {
					t.Errorf("b1 after the move: labels %v, unschedulable %v", n.Labels, n.Spec.Unschedulable)
				}
			}},
		{name: "a move of a node in the target already does nothing",
			objs: []runtime.Object{node("g1", false, map[string]string{nodepool.RoleLabel("green"): ""})},
			req:  Request{Action: Move, Nodes: []string{"g1"}, To: "green"},
			want: "node.moved(AlreadyInPool)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			op := cluster(t, tc.objs...)
			evs, _, err := run(t, op, context.Background(), tc.req)
			var ne *NodesError
			if err != nil && !errors.As(err, &ne) {
				t.Fatalf("Run: %v (events %s)", err, eventTypes(evs))
			}
			if got := eventTypes(evs); got != tc.want {
				t.Errorf("events\n got %s\nwant %s", got, tc.want)
			}
			if tc.req.Action == Cordon && slices.ContainsFunc(evs, func(ev event.Event) bool { return ev.Type == event.EventNodeDrained }) {
				t.Error("a cordon emitted node.drained")
			}
			if tc.check != nil {
				tc.check(t, op)
			}
		})
	}
}

// An uncordon undoes this tool's own cordon (read from managedFields), and a second
// uncordon says already.
func TestUncordonUndoesOurCordon(t *testing.T) {
	op := cluster(t, node("n1", false, nil))
	ctx := context.Background()
	for _, step := range []struct {
		req  Request
		want string
	}{
		{Request{Action: Cordon, Nodes: []string{"n1"}}, "node.cordoned"},
		{Request{Action: Uncordon, Nodes: []string{"n1"}}, "node.uncordoned"},
		{Request{Action: Uncordon, Nodes: []string{"n1"}}, "node.uncordoned(AlreadySchedulable)"},
	} {
		evs, _, err := run(t, op, ctx, step.req)
		if err != nil || eventTypes(evs) != step.want {
			t.Fatalf("%s: %s, %v; want %s", step.req.Action, eventTypes(evs), err, step.want)
		}
	}
}

func TestBadRequestsChangeNothing(t *testing.T) {
	tests := []struct {
		name string
		req  Request
		want string
	}{
		{"no nodes", Request{Action: Cordon}, "no nodes given"},
		{"a name that is no node, even beside one that is", Request{Action: Cordon, Nodes: []string{"gone", "n1"}}, `node "gone" not found`},
		{"a selector matching nothing", Request{Action: Drain, Selector: "x=y"}, `no nodes match selector "x=y"`},
		{"an unknown pool", Request{Action: Drain, Pool: "red"}, `pool "red" not found`},
		{"a move without a target", Request{Action: Move, Nodes: []string{"n1"}}, "needs a target pool"},
		{"an unknown action", Request{Action: "reboot", Nodes: []string{"n1"}}, `unknown action "reboot"`},
		{"a bad drain setting", Request{Action: Drain, Nodes: []string{"n1"}, Drain: drain.Settings{GracePeriodSeconds: -5}}, "gracePeriodSeconds must be -1"},
		// The checks that stood apart are the settings' own, said in their words: a cordon's
		// dry run (asserted by check: a cordon goes to no engine) and a drain's pod selector
		// (asserted by the engine's door; the plan parses it no more).
		{"a cordon's unknown dry run", Request{Action: Cordon, Nodes: []string{"n1"}, Drain: drain.Settings{DryRun: "later"}},
			`dryRun must be "none", "client" or "server", got "later"`},
		{"an uncordon's unknown dry run", Request{Action: Uncordon, Nodes: []string{"n1"}, Drain: drain.Settings{DryRun: "later"}},
			`dryRun must be "none", "client" or "server", got "later"`},
		{"a drain's unknown dry run", Request{Action: Drain, Nodes: []string{"n1"}, Drain: drain.Settings{DryRun: "later"}},
			`dryRun must be "none", "client" or "server", got "later"`},
		{"a drain's pod selector that is no selector", Request{Action: Drain, Nodes: []string{"n1"}, Drain: drain.Settings{PodSelector: "a=b=c=,"}},
			"podSelector must be a label selector"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			op := cluster(t, node("n1", false, nil))
			evs, _, err := run(t, op, context.Background(), tc.req)
			if err == nil || !drain.IsUsage(err) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want a usage error containing %q", err, tc.want)
			}
			if len(evs) != 0 || get(t, op, "n1").Spec.Unschedulable {
				t.Errorf("bad input did something: events %s", eventTypes(evs))
			}
		})
	}
}

func TestPlanChangesNothing(t *testing.T) {
	op := cluster(t, node("n1", true, nil), node("b1", false, map[string]string{nodepool.RoleLabel("blue"): ""}), pod("p1", "b1"))
	ctx := context.Background()
	p, err := op.Plan(ctx, Request{Action: Uncordon, Nodes: []string{"n1"}})
	if err != nil || len(p.Changes) != 1 || p.Changes[0].Uncordon != drain.LeftCordoned {
		t.Fatalf("uncordon plan = %+v, %v; want n1 left cordoned", p, err)
	}
	p, err = op.Plan(ctx, Request{Action: Drain, Pool: "blue"})
	if err != nil || p.Drain == nil || len(p.Drain.Nodes) != 1 || len(p.Drain.Nodes[0].Steps) != 1 {
		t.Fatalf("drain plan = %+v, %v; want b1 with one pod", p, err)
	}
	p, err = op.Plan(ctx, Request{Action: Move, Nodes: []string{"b1"}, To: "green"})
	if err != nil || p.Move == nil || len(p.Move.Moves) != 1 || p.Move.Target.Name != "green" {
		t.Fatalf("move plan = %+v, %v", p, err)
	}
	if get(t, op, "b1").Spec.Unschedulable || !get(t, op, "n1").Spec.Unschedulable || len(pods(t, op)) != 1 {
		t.Error("planning changed the cluster")
	}
}

func TestCancelledBeforeItStartsChangesNothing(t *testing.T) {
	for _, action := range []Action{Cordon, Uncordon, Drain} {
		t.Run(string(action), func(t *testing.T) {
			op := cluster(t, node("n1", false, nil), pod("p1", "n1"))
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			evs, _, err := run(t, op, ctx, Request{Action: action, Nodes: []string{"n1"}})
			if err == nil {
				t.Error("a cancelled run returned no error")
			}
			for _, ev := range evs {
				if ev.Type == event.EventNodeCordoned || ev.Type == event.EventNodeUncordoned || ev.Type == event.EventNodeDrained {
					t.Errorf("a cancelled run emitted %s", ev.Type)
				}
			}
			if get(t, op, "n1").Spec.Unschedulable || len(pods(t, op)) != 1 {
				t.Error("a cancelled run changed the cluster")
			}
		})
	}
}

func get(t *testing.T, op *Operator, name string) *corev1.Node {
	t.Helper()
	n, err := op.Kube.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func pods(t *testing.T, op *Operator) []corev1.Pod {
	t.Helper()
	l, err := op.Kube.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// Two operations run at once; cancelling one (a drain the API server keeps refusing)
// stops it, leaves its node cordoned and its pod in place, and the other finishes. (The
// fake clientset ignores field selectors, so the other node holds no pod.)
func TestCancelOneOperationWhileAnotherRuns(t *testing.T) {
	op := cluster(t, node("n1", false, nil), node("n2", false, nil), pod("a1", "n1"))
	cs := op.Kube.(*fake.Clientset)
	refused := make(chan struct{}, 100)
	cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		ev, ok := a.(k8stesting.CreateAction).GetObject().(*policyv1.Eviction)
		if a.GetSubresource() != "eviction" || !ok || ev.Name != "a1" {
			return false, nil, nil
		}
		refused <- struct{}{}
		return true, nil, apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 1)
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type outcome struct {
		evs []event.Event
		err error
	}
	blocked := make(chan outcome, 1)
	go func() {
		evs, _, err := run(t, op, ctx, Request{Action: Drain, Nodes: []string{"n1"}})
		blocked <- outcome{evs, err}
	}()
	<-refused // the first drain is running and waiting
	for _, action := range []Action{Cordon, Uncordon} {
		evs, _, err := run(t, op, context.Background(), Request{Action: action, Nodes: []string{"n2"}})
		if err != nil || len(evs) != 1 {
			t.Fatalf("the %s of n2 while n1 drains: %s, %v", action, eventTypes(evs), err)
		}
	}
	cancel()
	res := <-blocked
	if res.err == nil {
		t.Error("the cancelled drain returned no error")
	}
	if slices.ContainsFunc(res.evs, func(ev event.Event) bool { return ev.Type == event.EventNodeDrained }) {
		t.Errorf("the cancelled drain said drained: %s", eventTypes(res.evs))
	}
	if !get(t, op, "n1").Spec.Unschedulable {
		t.Error("the cancelled drain's node is not cordoned (a re-run finishes it)")
	}
	left := pods(t, op)
	if len(left) != 1 || left[0].Name != "a1" {
		t.Errorf("pods left: %v, want a1 only", left)
	}
}

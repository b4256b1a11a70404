package drain

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-maintenance/kubectl-maintenance/drainrule"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

func TestLowestGroup(t *testing.T) {
	for name, tc := range map[string]struct {
		pending []group
		want    group
		ok      bool
	}{
		"none pending":                           {pending: nil, ok: false},
		"ascending order":                        {pending: []group{{order: 10}, {order: -5}, {order: 0}}, want: group{order: -5}, ok: true},
		"critical pods after every ordinary one": {pending: []group{{critical: true, order: -9}, {order: 10}}, want: group{order: 10}, ok: true},
		"critical pods by order among them":      {pending: []group{{critical: true, order: 3}, {critical: true, order: -1}}, want: group{critical: true, order: -1}, ok: true},
		"one group":                              {pending: []group{{order: 0}, {order: 0}}, want: group{order: 0}, ok: true},
	} {
		t.Run(name, func(t *testing.T) {
			got, ok := lowest(tc.pending)
			if ok != tc.ok || (ok && got != tc.want) {
				t.Fatalf("lowest = %v %v, want %v %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func labelled(p *corev1.Pod, app string) *corev1.Pod {
	p.Labels = map[string]string{"app": app}
	return p
}

// The order state machine over a run: each group's evictions start only once every pod
// of the groups before it is gone; a pod held back says which group it waits for; the
// wait-completed pod a rule names is never evicted and the node finishes once it
// completes.
func TestOrderGroupsEvictOneGroupAfterAnother(t *testing.T) {
	rules, err := drainrule.ParseFlag("app=first:-5,app=last:10,app=batch:wait-completed")
	if err != nil {
		t.Fatal(err)
	}
	batch := labelled(podOn("batch", "n1", "u-batch"), "batch")
	g := newRig(t, Config{Settings: Settings{DrainOrder: rules}}, testNode("n1"),
		labelled(podOn("f1", "n1", "u-f1"), "first"), labelled(podOn("f2", "n1", "u-f2"), "first"),
		labelled(podOn("m1", "n1", "u-m1"), "web"), labelled(podOn("l1", "n1", "u-l1"), "last"), batch)
	onlyNodePods(g.client)
	var mu sync.Mutex
	var order []string
	g.answer = func(_ int, ev *policyv1.Eviction) error {
		mu.Lock()
		order = append(order, ev.Name)
		mu.Unlock()
		return g.client.Tracker().Delete(schema.GroupVersionResource{Version: "v1", Resource: "pods"}, ev.Namespace, ev.Name)
	}
	g.start("n1")
	plan := g.next(event.EventPlan, 0)
	var groups []string
	for _, o := range plan.Plan.Nodes[0].Order {
		groups = append(groups, o.Pod+" "+o.Group)
	}
	if want := "ns/f1 order -5|ns/f2 order -5|ns/m1 order 0|ns/l1 order 10|ns/batch wait-completed"; strings.Join(groups, "|") != want {
		t.Errorf("plan order = %q, want %q", strings.Join(groups, "|"), want)
	}
	said := map[string]string{}
	for len(said) < 2 {
		ev := g.next(event.EventEvictionBlocked, 0)
		if ev.Reason == ReasonOrderGroup {
			said[ev.Pod] = ev.Message
		}
	}
	if m := said["ns/l1"]; !strings.HasPrefix(m, "waits for order group -5 to finish: 2 pod(s) left") {
		t.Errorf("l1's wait = %q", m)
	}
	blockedWith(g, ReasonWaitCompleted, 0)
	done := batch.DeepCopy()
	done.Status.Phase = corev1.PodSucceeded
	if _, err := g.client.CoreV1().Pods("ns").UpdateStatus(context.Background(), done, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	g.next(event.EventNodeDrained, 0)
	if res := g.finish(); res.err != nil || res.sum.PodsEvicted != 4 {
		t.Fatalf("Run = %+v, %v; want 4 pods evicted", res.sum, res.err)
	}
	mu.Lock()
	defer mu.Unlock()
	rank := map[string]int{"f1": 0, "f2": 0, "m1": 1, "l1": 2}
	for i := 1; i < len(order); i++ {
		if rank[order[i]] < rank[order[i-1]] {
			t.Fatalf("evictions %v: a later group before an earlier one", order)
		}
	}
	if len(order) != 4 {
		t.Fatalf("evictions %v, want f1, f2, m1, l1 (never batch)", order)
	}
}

// A do-not-disrupt duration protects the pod until that long after its start: the node
// waits for it, the wait says until when, and the pod is evicted once the time is past.
func TestDoNotDisruptDurationEndsThenThePodGoes(t *testing.T) {
	dnd := withAnnotation(podOn("dnd", "n1", "u-dnd"), AnnotationDoNotDisrupt, "30s")
	g := newRig(t, Config{}, testNode("n1"), dnd)
	start := g.clock.Now().Add(-10 * time.Second)
	dnd.Status.StartTime = &metav1.Time{Time: start}
	if _, err := g.client.CoreV1().Pods("ns").UpdateStatus(context.Background(), dnd, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	onlyNodePods(g.client)
	g.start("n1")
	plan := g.next(event.EventPlan, 0)
	until := start.Add(30 * time.Second).UTC().Format(time.RFC3339)
	if o := plan.Plan.Nodes[0].Order; len(o) != 1 || o[0].Group != "do-not-disrupt" || !o[0].Until.Equal(start.Add(30*time.Second)) {
		t.Errorf("plan order = %+v, want dnd until %s", o, until)
	}
	held := blockedWith(g, ReasonDoNotDisrupt, 0)
	if !strings.Contains(held.Cause, "until "+until) {
		t.Errorf("wait cause %q does not say until %s", held.Cause, until)
	}
	if g.evictions.Load() != 0 {
		t.Fatal("evicted before its do-not-disrupt ended")
	}
	g.next(event.EventNodeDrained, 2*time.Second)
	if g.clock.Now().Before(start.Add(30 * time.Second)) {
		t.Errorf("drained at %s, before the duration ended", g.clock.Now())
	}
	if res := g.finish(); res.err != nil || res.sum.PodsEvicted != 1 {
		t.Fatalf("Run = %+v, %v", res.sum, res.err)
	}
}

func TestOrderWaitCountsGroupByGroup(t *testing.T) {
	pod := func(name string, grace int64) pdb.Step {
		p := testPod(name, "n1")
		p.Spec.TerminationGracePeriodSeconds = &grace
		return pdb.Step{Pod: p, Wave: 1}
	}
	steps := []pdb.Step{pod("a", 30), pod("b", 10), pod("c", 5), pod("d", 20)}
	order := func(pairs ...any) []event.PodOrder {
		var out []event.PodOrder
		for i := 0; i < len(pairs); i += 2 {
			out = append(out, event.PodOrder{Pod: "ns/" + pairs[i].(string), Order: int32(pairs[i+1].(int))})
		}
		return out
	}
	for name, tc := range map[string]struct {
		nodes []event.NodePlan
		grace int
		want  time.Duration
	}{
		"no order groups": {nodes: []event.NodePlan{{Steps: steps}}, grace: -1, want: 0},
		"each group waits for the longest grace of the one before": {nodes: []event.NodePlan{{Steps: steps,
			Order: order("a", -5, "d", -5, "b", 0, "c", 10)}}, grace: -1, want: 40 * time.Second},
		"--grace-period stands for every pod": {nodes: []event.NodePlan{{Steps: steps,
			Order: order("a", -5, "b", 0, "c", 10)}}, grace: 3, want: 6 * time.Second},
		"nodes side by side: the longest": {nodes: []event.NodePlan{
			{Steps: steps, Order: order("a", -5, "b", 0)},
			{Steps: steps, Order: order("c", -5, "d", 0, "b", 1)}}, grace: -1, want: 30 * time.Second},
	} {
		t.Run(name, func(t *testing.T) {
			if got := orderWait(&event.Plan{Nodes: tc.nodes}, tc.grace); got != tc.want {
				t.Fatalf("orderWait = %s, want %s", got, tc.want)
			}
		})
	}
}

// A do-not-disrupt duration that ends while the node's other pods are still going: the
// pod is evicted when the node would otherwise finish, not left behind.
func TestDoNotDisruptDurationEndedBeforeTheNodeFinished(t *testing.T) {
	dnd := withAnnotation(podOn("dnd", "n1", "u-dnd"), AnnotationDoNotDisrupt, "30s")
	g := newRig(t, Config{}, testNode("n1"), podOn("slow", "n1", "u-slow"), dnd)
	dnd.Status.StartTime = &metav1.Time{Time: g.clock.Now().Add(-10 * time.Second)}
	if _, err := g.client.CoreV1().Pods("ns").UpdateStatus(context.Background(), dnd, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	onlyNodePods(g.client)
	asked, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	g.answer = func(_ int, ev *policyv1.Eviction) error {
		if ev.Name == "slow" {
			once.Do(func() { close(asked) })
			<-release // the slow pod's eviction is answered once the duration has ended
		}
		return g.client.Tracker().Delete(schema.GroupVersionResource{Version: "v1", Resource: "pods"}, ev.Namespace, ev.Name)
	}
	g.start("n1")
	<-asked
	g.clock.Step(25 * time.Second) // past the end of dnd's 30 s (it started 10 s ago)
	close(release)
	g.next(event.EventNodeDrained, 0)
	if res := g.finish(); res.err != nil || res.sum.PodsEvicted != 2 {
		t.Fatalf("Run = %+v, %v; want both pods evicted (dnd's duration had ended)", res.sum, res.err)
	}
}

// Critical pods stay behind every ordinary pod of their node, whatever the order groups
// of the ordinary ones (and among themselves go by group).
func TestCriticalPodsGoAfterEveryOrdinaryGroup(t *testing.T) {
	rules, err := drainrule.ParseFlag("app=late:10,app=crit-first:-5")
	if err != nil {
		t.Fatal(err)
	}
	crit := func(name, app string) *corev1.Pod {
		p := labelled(podOn(name, "n1", types.UID("u-"+name)), app)
		p.Spec.PriorityClassName = pdb.SystemNodeCritical
		return p
	}
	g := newRig(t, Config{Settings: Settings{DrainOrder: rules}}, testNode("n1"), labelled(podOn("web", "n1", "u-web"), "web"),
		labelled(podOn("late", "n1", "u-late"), "late"), crit("c0", "crit"), crit("c1", "crit-first"))
	onlyNodePods(g.client)
	var mu sync.Mutex
	var order []string
	g.answer = func(_ int, ev *policyv1.Eviction) error {
		mu.Lock()
		order = append(order, ev.Name)
		mu.Unlock()
		return g.client.Tracker().Delete(schema.GroupVersionResource{Version: "v1", Resource: "pods"}, ev.Namespace, ev.Name)
	}
	g.start("n1")
	g.next(event.EventNodeDrained, 0)
	if res := g.finish(); res.err != nil || res.sum.PodsEvicted != 4 {
		t.Fatalf("Run = %+v, %v", res.sum, res.err)
	}
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(order, ","); got != "web,late,c1,c0" {
		t.Fatalf("evictions %s, want web,late,c1,c0", got)
	}
}

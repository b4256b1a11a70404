package drain

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/internal/kubefake"
)

// fleetObjects is a fleet in memory: nodes f-0000..., podsPerNode pods on each, spread
// over apps of 40 replicas in 10 namespaces, one budget per app (maxUnavailable 1).
func fleetObjects(nodes, podsPerNode int) ([]runtime.Object, []string) {
	objs, names := testNodes("f-%04d", nodes)
	apps := max(1, nodes*podsPerNode/40)
	for a := range apps {
		ns, app := fmt.Sprintf("fleet-%d", a%10), fmt.Sprintf("app-%03d", a)
		objs = append(objs, &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Name: app, Namespace: ns, Generation: 1},
			Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromInt32(1)),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}},
			Status: policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, DisruptionsAllowed: 1, CurrentHealthy: 40, DesiredHealthy: 39, ExpectedPods: 40},
		})
	}
	for i := range nodes * podsPerNode {
		a := i % apps
		p := testPod(fmt.Sprintf("app-%03d-%05d", a, i), names[i%nodes])
		p.Namespace, p.Labels = fmt.Sprintf("fleet-%d", a%10), map[string]string{"app": fmt.Sprintf("app-%03d", a)}
		p.UID = types.UID(p.Name)
		objs = append(objs, p)
	}
	return objs, names
}

// BenchmarkPlanFleet plans a drain of 100 and of 1,000 nodes of a 1,000-node, 10,000-pod
// fleet (250 budgets, and a DaemonSet's pod on every node) over a fake clientset: the time
// of the plan itself (kubectl's filters, the simulation) without the network, and the API
// requests it makes (kubectl's filters alone would GET the DaemonSet once per node).
func BenchmarkPlanFleet(b *testing.B) {
	objs, names := fleetObjects(1000, 10)
	objs = append(objs, &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "fleet-0", Name: "agent"}})
	for _, n := range names {
		p := daemonPod("agent-"+n, n, "agent")
		p.Namespace, p.UID = "fleet-0", types.UID("agent-"+n)
		objs = append(objs, p)
	}
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			client := kubefake.New(objs...)
			eng, err := NewEngine(Config{Client: client, Events: make(chan event.Event, 1), Settings: Settings{IgnoreDaemonSets: true}})
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				client.ClearActions()
				if _, err := eng.Plan(context.Background(), names[:n]); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(client.Actions())), "requests/plan")
		})
	}
}

// BenchmarkWakeAmongManyParkedPods applies one status change to a budget with 10 pods
// parked on it while 0 or 10,000 other pods are parked on 250 other budgets: the cost of
// a wake is that of the pods on the budget that changed, not of every parked pod.
func BenchmarkWakeAmongManyParkedPods(b *testing.B) {
	for _, others := range []int{0, 10000} {
		b.Run(fmt.Sprintf("other-parked=%d", others), func(b *testing.B) {
			r := parkedRun(b, 10, others)
			budget := testPDB(0)
			budget.ResourceVersion = "2"
			key := budget.Namespace + "/" + budget.Name
			for b.Loop() {
				_ = r.budgets.book.pdbs.Update(budget)
				r.pdbChanged(budget)
			}
			if len(r.budgets.book.parked[key]) != 10 {
				b.Fatalf("%d pods parked on %s, want 10 (nothing allowed)", len(r.budgets.book.parked[key]), key)
			}
		})
	}
}

// parkedRun is a run with n pods parked on the test budget ns/web and others pods parked
// on 250 other budgets in other namespaces.
func parkedRun(b *testing.B, n, others int) *run {
	events := make(chan event.Event, 1)
	eng, err := NewEngine(Config{Client: kubefake.New(), Events: events, Clock: testingclock.NewFakeClock(time.Unix(1_000_000, 0))})
	if err != nil {
		b.Fatal(err)
	}
	eng.out = newOutbox(events)
	b.Cleanup(eng.out.close)
	r := newRun(eng, &preflight{plan: &event.Plan{}})
	r.ctx = context.Background()
	r.budgets.book.pdbs = cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	park := func(key string, count int, prefix string) {
		if r.budgets.book.parked[key] == nil {
			r.budgets.book.parked[key] = map[string]*podState{}
		}
		for i := range count {
			p := testPod(fmt.Sprintf("%s-%05d", prefix, i), "n1")
			st := &podState{pod: p, key: key + "/" + p.Name, node: "n1", wave: 1, parkedOn: []string{key}}
			r.pods[st.key] = st
			r.budgets.book.parked[key][st.key] = st
		}
	}
	web := testPDB(0)
	_ = r.budgets.book.pdbs.Add(web)
	park("ns/web", n, "web")
	for i := range others {
		bud := testPDB(0)
		bud.Namespace, bud.Name = fmt.Sprintf("other-%d", i%10), fmt.Sprintf("b-%03d", i%250)
		key := bud.Namespace + "/" + bud.Name
		if r.budgets.book.parked[key] == nil {
			_ = r.budgets.book.pdbs.Add(bud)
		}
		park(key, 1, fmt.Sprintf("o-%05d", i))
	}
	return r
}

// BenchmarkDrainManyNodesAtOnce drains 5 and 30 nodes of 3 pods each at once over a
// fake clientset (evictions accepted, no budget; the fake's watch holds at most 100
// events, hence the small fleet) and reports the API requests per evicted pod and the
// watch connections opened: one per node and one for the budgets below sharedPodsAt
// nodes at once, one for the pods and one for the budgets from there on.
func BenchmarkDrainManyNodesAtOnce(b *testing.B) {
	for _, nodes := range []int{5, 30} {
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				objs, names := fleetObjects(nodes, 3)
				kept := objs[:0]
				for _, o := range objs {
					if _, isPDB := o.(*policyv1.PodDisruptionBudget); !isPDB {
						kept = append(kept, o)
					}
				}
				client := kubefake.New(kept...)
				client.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
					if a.GetSubresource() != "eviction" {
						return false, nil, nil
					}
					ev := a.(k8stesting.CreateAction).GetObject().(*policyv1.Eviction)
					return true, nil, client.Tracker().Delete(corev1.SchemeGroupVersion.WithResource("pods"), ev.Namespace, ev.Name)
				})
				onlyNodePods(client) // below sharedPodsAt nodes, each node lists its own pods
				events := make(chan event.Event, 100)
				go func() {
					for range events {
					}
				}()
				eng, err := NewEngine(Config{Client: client, Events: events, Settings: Settings{MaxParallelNodes: nodes}})
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				sum, err := eng.Run(context.Background(), names)
				b.StopTimer()
				close(events)
				if err != nil || sum.PodsEvicted != 3*nodes {
					b.Fatalf("evicted %d pods: %v", sum.PodsEvicted, err)
				}
				req := actionsBy(client)
				total := 0
				for _, n := range req {
					total += n
				}
				b.ReportMetric(float64(total)/float64(3*nodes), "requests/pod")
				b.ReportMetric(float64(req["watch pods"]+req["watch poddisruptionbudgets"]), "watches")
				b.StartTimer()
			}
		})
	}
}

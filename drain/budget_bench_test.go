package drain

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/internal/kubefake"
)

// BenchmarkBudgetStatusChanges parks 2,000 pods on one budget and applies 100 status
// changes to it, as the disruption controller writes them during a drain: every other
// change frees one disruption (a replacement became Ready), the ones in between record
// the pod just evicted in status.disruptedPods. Each woken pod is handled at once (the
// eviction, accepted by a fake clientset, or its parking again). It reports the wakes per
// status change: the pods handled because the budget changed.
func BenchmarkBudgetStatusChanges(b *testing.B) {
	const pods, changes = 2000, 100
	for b.Loop() {
		b.StopTimer()
		r, budget := benchRun(b, pods)
		b.StartTimer()
		wakes := 0
		for i := range changes {
			p := budget.DeepCopy()
			p.ResourceVersion = strconv.Itoa(i + 2)
			p.Status.CurrentHealthy = 2000 - int32(i%2)
			p.Status.DisruptionsAllowed = int32((i + 1) % 2)
			p.Status.DisruptedPods = map[string]metav1.Time{}
			for _, st := range r.pods {
				if st.phase != waiting {
					p.Status.DisruptedPods[st.pod.Name] = metav1.Now()
				}
			}
			_ = r.budgets.book.pdbs.Update(p)
			r.pdbChanged(p)
			for r.queue.Len() > 0 {
				r.processNext()
				wakes++
			}
		}
		b.ReportMetric(float64(wakes)/changes, "wakes/change")
		r.queue.ShutDown()
	}
}

func benchRun(b *testing.B, n int) (*run, *policyv1.PodDisruptionBudget) {
	budget := testPDB(0)
	budget.ResourceVersion = "1"
	budget.Status.CurrentHealthy, budget.Status.DesiredHealthy, budget.Status.ExpectedPods = 2000, 2000, 2001
	events := make(chan event.Event, 1024)
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	go func() {
		for {
			select {
			case <-events:
			case <-ctx.Done():
				return
			}
		}
	}()
	client := kubefake.New()
	client.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		return a.GetSubresource() == "eviction", nil, nil
	})
	eng, err := NewEngine(Config{Client: client, Events: events, Clock: testingclock.NewFakeClock(time.Unix(1_000_000, 0))})
	if err != nil {
		b.Fatal(err)
	}
	eng.out = newOutbox(events)
	b.Cleanup(eng.out.close)
	r := newRun(eng, &preflight{plan: &event.Plan{Nodes: []event.NodePlan{{Name: "n1"}}}})
	r.ctx = ctx
	r.budgets.book.pdbs = cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	_ = r.budgets.book.pdbs.Add(budget)
	r.nodes["n1"] = &nodeState{name: "n1", remaining: n, started: true, finishedCh: make(chan struct{})}
	key := budget.Namespace + "/" + budget.Name
	r.budgets.book.parked[key] = map[string]*podState{}
	for i := range n {
		p := testPod(fmt.Sprintf("p-%05d", i), "n1")
		p.UID = types.UID(fmt.Sprintf("uid-%d", i))
		st := &podState{pod: p, key: p.Namespace + "/" + p.Name, node: "n1", wave: 1,
			parkedOn: []string{key}, block: blockKey{budgets: key, class: "Exhausted"}}
		r.pods[st.key] = st
		r.budgets.book.parked[key][st.key] = st
	}
	return r, budget
}

package drain

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/internal/kubefake"
)

// BenchmarkFirstEviction starts a drain of 100 nodes at once over a fake clientset and
// stops at its first eviction request: the engine's own time to its first eviction (plan,
// cordons, informers; no network, so the figure is the CPU's share of the 3 s target) and
// the API requests sent before it, the figure that, at the client's rate limit, decides
// the rest. "100 of 1000" is the fleet profile's F1: every other pod of the cluster is in
// the plan's list too and seeds the shared informer (11,000 pods; appending them one by
// one took 0.85 s on the fleet). The fake clientset serialises requests, so the cordons'
// concurrency shows in the requests, not here in the time.
func BenchmarkFirstEviction(b *testing.B) {
	for _, bc := range []struct {
		name               string
		nodes, podsPerNode int
	}{{"100 of 100 nodes, 1000 pods", 100, 10}, {"100 of 1000 nodes, 11000 pods", 1000, 11}} {
		b.Run(bc.name, func(b *testing.B) {
			objs, names := fleetObjects(bc.nodes, bc.podsPerNode)
			benchFirstEviction(b, objs, names[:100])
		})
	}
}

func benchFirstEviction(b *testing.B, objs []runtime.Object, names []string) {
	var total time.Duration
	requests := 0
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		client := kubefake.New(objs...)
		events := make(chan event.Event, 10000)
		eng, err := NewEngine(Config{Client: client, Events: events, Settings: Settings{MaxParallelNodes: 100}, ClientBurst: 100})
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		b.StartTimer()
		began := time.Now()
		go func() {
			defer close(done)
			_, _ = eng.Run(ctx, names)
		}()
		for ev := range events {
			if ev.Type == event.EventEvictionStarted {
				break
			}
		}
		total += time.Since(began)
		b.StopTimer()
		requests += len(client.Actions())
		cancel()
		go func() {
			for range events {
			}
		}()
		<-done
		close(events)
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/first-eviction")
	b.ReportMetric(float64(requests)/float64(b.N), "requests/first-eviction")
}

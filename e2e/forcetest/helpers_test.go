package forcetest

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

// deletion is a pod seen with a deletionTimestamp for the first time.
type deletion struct {
	Name    string
	UID     string
	Node    string
	Evicted bool      // through the Eviction API (the DisruptionTarget condition)
	SeenAt  time.Time // when the watch first showed it deleted
}

// deletions records every pod of the namespace whose deletion starts while the test runs.
type deletions struct {
	mu   sync.Mutex
	seen map[string]deletion // by UID
}

// watchDeletions starts recording; it stops at the test's end.
func watchDeletions(t *testing.T, e *fixture.Env) *deletions {
	t.Helper()
	d := &deletions{seen: map[string]deletion{}}
	ctx, cancel := context.WithCancel(e.Ctx)
	pods := e.C.CoreV1().Pods(e.NS)
	ch, err := fixture.Rewatch(ctx, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return pods.List(ctx, o) }, pods.Watch)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ev := range ch {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok || p.DeletionTimestamp == nil {
				continue
			}
			now := time.Now()
			d.mu.Lock()
			prev, was := d.seen[string(p.UID)]
			if !was {
				prev = deletion{Name: p.Name, UID: string(p.UID), Node: p.Spec.NodeName, SeenAt: now}
			}
			prev.Evicted = prev.Evicted || fixture.EvictedByAPI(p)
			d.seen[string(p.UID)] = prev
			d.mu.Unlock()
		}
	}()
	t.Cleanup(func() { cancel(); wg.Wait() })
	return d
}

// all returns the deletions seen so far.
func (d *deletions) all() []deletion {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]deletion, 0, len(d.seen))
	for _, v := range d.seen {
		out = append(out, v)
	}
	return out
}

// timeOf is an event's ts.
func timeOf(t *testing.T, ev map[string]any) time.Time {
	t.Helper()
	ts, err := time.Parse(time.RFC3339Nano, ev["ts"].(string))
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// podsOf lists the namespace's pods of app.
func podsOf(t *testing.T, e *fixture.Env, app string) []corev1.Pod {
	t.Helper()
	list, err := e.C.CoreV1().Pods(e.NS).List(e.Ctx, metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

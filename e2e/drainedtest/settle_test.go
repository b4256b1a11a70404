package drainedtest

import (
	"context"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

// Test 2 of issue 40. An empty node is drained; 1 s after its cordon the test binds a
// pod to it (spec.nodeName, as a scheduler working from a cache that had not seen the
// cordon would): the pod is evicted, and the node is drained only after it is gone, not
// before the settle (5 s) since the cordon.
func TestALateBoundPodIsEvictedBeforeTheNodeIsDrained(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a")
	e.AddNodes()
	a := e.Nodes[0]
	ctx, cancel := context.WithCancel(e.Ctx)
	defer cancel()
	var mu sync.Mutex
	var cordonedAt, boundAt time.Time
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil && !e.Node(a).Spec.Unschedulable {
			time.Sleep(20 * time.Millisecond)
		}
		mu.Lock()
		cordonedAt = time.Now()
		mu.Unlock()
		select {
		case <-time.After(time.Second):
		case <-ctx.Done():
			return
		}
		if _, err := fixture.BarePod(ctx, e.C, e.NS, "late", fixture.PodOptions{NodeName: a}); err != nil {
			t.Error(err)
		}
		mu.Lock()
		boundAt = time.Now()
		mu.Unlock()
	}()
	r := e.Run("drain", a, "--force", "--timeout", "2m", "-o", "json")
	wg.Wait()
	if r.Code != 0 {
		t.Fatalf("drain: exit %d", r.Code)
	}
	evs := fixture.NDJSON(t, r.Stdout)
	key := e.NS + "/late"
	evicted := fixture.FirstEvent(evs, "pod.evicted", key)
	if evicted == nil {
		t.Fatalf("pod %s, bound 1 s after the cordon, was not evicted", key)
	}
	drained := timeOf(t, fixture.FirstEvent(evs, "node.drained", ""))
	if drained.Before(timeOf(t, evicted)) {
		t.Errorf("node drained at %s, before the late pod was gone (%s)", drained, timeOf(t, evicted))
	}
	if _, err := e.C.CoreV1().Pods(e.NS).Get(e.Ctx, "late", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("pod %s after the drain: %v, want gone", key, err)
	}
	t.Logf("figures: cordoned at %s, pod bound %s later, evicted (gone) %s after the cordon, node drained %s after the cordon (run %s)",
		cordonedAt.Format(time.RFC3339Nano), boundAt.Sub(cordonedAt).Round(time.Millisecond), timeOf(t, evicted).Sub(cordonedAt).Round(time.Millisecond),
		drained.Sub(cordonedAt).Round(time.Millisecond), r.Elapsed.Round(time.Millisecond))

	t.Run("an empty node is drained after the settle and no later", func(t *testing.T) {
		e := newEnv(t, "b")
		e.AddNodes()
		r := e.Run("drain", e.Nodes[0], "--timeout", "1m", "-o", "json")
		if r.Code != 0 {
			t.Fatalf("drain: exit %d", r.Code)
		}
		evs := fixture.NDJSON(t, r.Stdout)
		took := timeOf(t, fixture.FirstEvent(evs, "node.drained", "")).Sub(timeOf(t, fixture.FirstEvent(evs, "node.cordoned", "")))
		// No later than the settle, its last look and a busy machine's scheduling allow.
		if took < 5*time.Second || took > 8*time.Second {
			t.Errorf("empty node drained %s after its cordon, want the 5 s settle and no more than 3 s beyond it", took)
		}
		t.Logf("figures: the empty node was drained %s after its cordon (run %s)", took.Round(time.Millisecond), r.Elapsed.Round(time.Millisecond))
	})
}

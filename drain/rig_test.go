package drain

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/internal/kubefake"
)

// rig runs one engine over a fake clientset and records what it does. Every wait is on an
// event or a hook, never on a timer of the test's own.
type rig struct {
	t         *testing.T
	client    *fake.Clientset
	clock     *testingclock.FakeClock
	eng       *Engine
	events    chan event.Event
	evictions atomic.Int32
	answer    func(n int, ev *policyv1.Eviction) error // nil: accept and delete the pod
	pdbSeen   chan string                              // resourceVersions the PDB handler handled
	handled   chan string                              // queue keys the worker handled
	run       chan *run
	cancel    context.CancelFunc
	done      chan result
}

type result struct {
	sum Summary
	err error
}

func newRig(t *testing.T, cfg Config, objs ...runtime.Object) *rig {
	g := &rig{t: t, client: kubefake.New(objs...), clock: testingclock.NewFakeClock(time.Unix(1_000_000, 0)),
		events: make(chan event.Event, 1000), pdbSeen: make(chan string, 100), handled: make(chan string, 1000),
		run: make(chan *run, 1), done: make(chan result, 1)}
	g.client.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "eviction" {
			return false, nil, nil
		}
		ev := a.(k8stesting.CreateAction).GetObject().(*policyv1.Eviction)
		n := int(g.evictions.Add(1))
		if g.answer != nil {
			return true, nil, g.answer(n, ev)
		}
		return true, nil, g.client.Tracker().Delete(corev1.SchemeGroupVersion.WithResource("pods"), ev.Namespace, ev.Name)
	})
	cfg.Client, cfg.Events, cfg.Clock = g.client, g.events, g.clock
	if cfg.Workers == 0 {
		cfg.Workers = 1 // one worker: the queue is FIFO, so a marker proves what came before is done
	}
	eng, err := NewEngine(cfg)
	if err != nil {
		t.Fatal(err)
	}
	eng.hooks = testHooks{
		started:    func(r *run) { g.run <- r },
		handled:    func(key string) { g.handled <- key },
		pdbHandled: func(_, rv string) { g.pdbSeen <- rv },
	}
	g.eng = eng
	return g
}

func (g *rig) start(nodes ...string) {
	ctx, cancel := context.WithCancel(context.Background())
	g.cancel = cancel
	g.t.Cleanup(cancel)
	go func() {
		sum, err := g.eng.Run(ctx, nodes)
		close(g.events) // panics if the engine sent anything after Run returned
		g.done <- result{sum, err}
	}()
}

// next returns the next event of type typ, skipping others; step, if set, advances the
// fake clock while waiting (for timers the engine set).
func (g *rig) next(typ event.Type, step time.Duration) event.Event {
	g.t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case ev, ok := <-g.events:
			if !ok {
				g.t.Fatalf("the run ended waiting for %s", typ)
			}
			if ev.Type == typ {
				return ev
			}
			continue
		case <-deadline:
			g.t.Fatalf("no %s event", typ)
		case <-time.After(20 * time.Millisecond):
		}
		if step > 0 {
			g.clock.Step(step)
		}
	}
}

// warning waits for the warning with the given reason.
func (g *rig) warning(reason string, step time.Duration) event.Event {
	g.t.Helper()
	for {
		if ev := g.next(event.EventWarning, step); ev.Reason == reason {
			return ev
		}
	}
}

// quiesce waits until the PDB handler has handled rv and the worker has handled
// everything queued before a marker.
func (g *rig) quiesce(r *run, rv string) {
	g.t.Helper()
	for seen := ""; seen != rv; {
		select {
		case seen = <-g.pdbSeen:
		case <-time.After(20 * time.Second):
			g.t.Fatalf("the PDB handler never saw resourceVersion %s", rv)
		}
	}
	r.queue.Add("marker")
	for key := ""; key != "marker"; {
		select {
		case key = <-g.handled:
		case <-time.After(20 * time.Second):
			g.t.Fatal("the worker never reached the marker")
		}
	}
}

// finish drains the events until Run returns, and returns its result.
func (g *rig) finish() result {
	g.t.Helper()
	for range g.events {
	}
	select {
	case res := <-g.done:
		return res
	case <-time.After(20 * time.Second):
		g.t.Fatal("Run did not return")
		return result{}
	}
}

func podOn(name, node string, uid types.UID) *corev1.Pod {
	p := testPod(name, node)
	p.UID = uid
	return p
}

func updatePDB(t *testing.T, g *rig, p *policyv1.PodDisruptionBudget) {
	t.Helper()
	if _, err := g.client.PolicyV1().PodDisruptionBudgets(p.Namespace).UpdateStatus(context.Background(), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// finishStepping advances the fake clock until Run returns.
func (g *rig) finishStepping(step time.Duration) result {
	g.t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case _, ok := <-g.events:
			if !ok {
				return <-g.done
			}
		case <-time.After(10 * time.Millisecond):
			g.clock.Step(step)
		case <-deadline:
			g.t.Fatal("Run did not return")
		}
	}
}

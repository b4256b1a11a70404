package drain

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

var _ Admitter = (*admitLog)(nil)

// admitLog is an Admitter that records, at each call, the node asked for, how many of
// the run's nodes were in progress and which nodes were cordoned; it refuses the nodes in
// deny with a lasting error (Forbidden).
type admitLog struct {
	client kubernetes.Interface
	deny   map[string]bool

	mu    sync.Mutex
	calls []string
}

func (a *admitLog) Room(ctx context.Context, adm Admission) (string, error) {
	nodes, err := a.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err
	}
	var cordoned []string
	for _, n := range nodes.Items {
		if n.Spec.Unschedulable {
			cordoned = append(cordoned, n.Name)
		}
	}
	slices.Sort(cordoned)
	a.mu.Lock()
	a.calls = append(a.calls, adm.Node+" running="+strconv.Itoa(len(adm.Running))+" cordoned="+strings.Join(cordoned, ","))
	a.mu.Unlock()
	if a.deny[adm.Node] {
		return "", apierrors.NewForbidden(schema.GroupResource{Resource: "nodes"}, "", errors.New("denied by the test"))
	}
	return "", nil
}

func (a *admitLog) Wait(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }

func (a *admitLog) Unavailable(string) bool { return false }

// A rolling drain cordons each node only as it starts, after the admitter let it; a node
// the admitter refuses fails alone and is never cordoned.
func TestRollingDrainCordonsEachNodeAsItStarts(t *testing.T) {
	tests := []struct {
		name  string
		deny  map[string]bool
		calls []string
		fail  bool
	}{
		{name: "one at a time, in order",
			calls: []string{"n1 running=0 cordoned=", "n2 running=0 cordoned=n1", "n3 running=0 cordoned=n1,n2"}},
		{name: "a refused node fails alone", deny: map[string]bool{"n2": true}, fail: true,
			calls: []string{"n1 running=0 cordoned=", "n2 running=0 cordoned=n1", "n3 running=0 cordoned=n1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			adm := &admitLog{deny: tt.deny}
			g := newRig(t, Config{Settings: Settings{MaxParallelNodes: 1}, Rolling: adm}, testNode("n1"), testNode("n2"), testNode("n3"))
			adm.client = g.client
			g.start("n1", "n2", "n3")
			res := <-g.done
			if (res.err != nil) != tt.fail {
				t.Fatalf("run: %v, want failure %v", res.err, tt.fail)
			}
			if !slices.Equal(adm.calls, tt.calls) {
				t.Errorf("admissions\n got %q\nwant %q", adm.calls, tt.calls)
			}
			for _, n := range []string{"n1", "n2", "n3"} {
				got, err := g.client.CoreV1().Nodes().Get(context.Background(), n, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if want := !tt.deny[n]; got.Spec.Unschedulable != want {
					t.Errorf("node %s unschedulable %v, want %v", n, got.Spec.Unschedulable, want)
				}
			}
			var failed []string
			for ev := range g.events {
				if ev.Type == event.EventNodeFailed {
					failed = append(failed, ev.Node+": "+ev.Message)
				}
			}
			if tt.fail && (len(failed) != 1 || !strings.HasPrefix(failed[0], "n2: ") || !strings.Contains(failed[0], "denied by the test")) {
				t.Errorf("node.failed events %q, want one for n2 saying why", failed)
			}
		})
	}
}

// A rolling drain starts first the node its budgets let go now: n1's and n3's pods wait
// on a budget that allows nothing, so n2 (plan order after n1) starts first and drains,
// and only then does n1 start (and wait); interrupted, both n1 and n3 are pending.
func TestRollingDrainStartsTheFreeNodeFirst(t *testing.T) {
	adm := &admitLog{}
	g := newRig(t, Config{Settings: Settings{MaxParallelNodes: 1}, Rolling: adm}, testNode("n1"), testNode("n2"), testNode("n3"), testNode("spare"),
		podOn("p1", "n1", "u1"), podOn("p3", "n3", "u3"), testPDB(0))
	onlyNodePods(g.client) // else n2's pod list would hold n1's pod
	adm.client = g.client
	g.start("n1", "n2", "n3")
	<-g.run
	g.next(event.EventEvictionBlocked, 0) // n1 started and waits on the budget
	g.cancel()
	res := <-g.done
	var ie *InterruptedError
	if !errors.As(res.err, &ie) {
		t.Fatalf("run: %v, want interrupted", res.err)
	}
	want := []string{"n2 running=0 cordoned=", "n1 running=0 cordoned=n2"}
	if !slices.Equal(adm.calls, want) {
		t.Errorf("admissions\n got %q\nwant %q", adm.calls, want)
	}
	// Pending: n1 (started, waiting) and n3 (held too, never started), in plan order.
	if want := []string{"n1", "n3"}; !slices.Equal(res.sum.PendingNodes, want) || res.sum.NodesPending != 2 {
		t.Errorf("pending %v (%d), want %v", res.sum.PendingNodes, res.sum.NodesPending, want)
	}
}

// Policy.Soak: a drained node of a rolling drain keeps its slot for the soak before the
// next node starts; the last node does not soak (the run ends when it is drained).
func TestRollingDrainSoaksADrainedNode(t *testing.T) {
	adm := &admitLog{}
	cfg := Config{Settings: Settings{MaxParallelNodes: 1, Policy: Policy{Soak: 10 * time.Minute}}, Rolling: adm}
	g := newRig(t, cfg, testNode("n1"), testNode("n2"))
	adm.client = g.client
	g.start("n1", "n2")
	admitted := func() int {
		adm.mu.Lock()
		defer adm.mu.Unlock()
		return len(adm.calls)
	}
	deadline := time.Now().Add(5 * time.Second)
	for admitted() < 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // n1 drains (it has no pods) and soaks
	if n := admitted(); n != 1 {
		t.Fatalf("%d admission(s) before the soak ended, want 1 (n1): %q", n, adm.calls)
	}
	select {
	case res := <-g.done:
		t.Fatalf("the run ended during the soak: %v", res.err)
	default:
	}
	g.clock.Step(10 * time.Minute)
	res := <-g.done
	if res.err != nil {
		t.Fatalf("run: %v", res.err)
	}
	if want := []string{"n1 running=0 cordoned=", "n2 running=0 cordoned=n1"}; !slices.Equal(adm.calls, want) {
		t.Errorf("admissions\n got %q\nwant %q", adm.calls, want)
	}
}

// A node an earlier run drained (a leader killed during its soak) soaks for what is left
// of its soak, counted from its record's since, not for a whole soak again.
func TestRollingDrainSoaksWhatIsLeft(t *testing.T) {
	adm := &admitLog{}
	cfg := Config{Settings: Settings{MaxParallelNodes: 1, Policy: Policy{Soak: 10 * time.Minute}}, Rolling: adm}
	n1 := testNode("n1")
	g := newRig(t, cfg, n1, testNode("n2"))
	drainedAt := g.clock.Now().Add(-8 * time.Minute)
	n1 = n1.DeepCopy()
	n1.Spec.Unschedulable = true
	n1.Labels = map[string]string{noderecord.LabelState: noderecord.StateDrained}
	n1.Annotations = map[string]string{noderecord.AnnotationDrain: noderecord.StateDrained, noderecord.AnnotationSince: drainedAt.UTC().Format(time.RFC3339)}
	if err := g.client.Tracker().Update(corev1.SchemeGroupVersion.WithResource("nodes"), n1, ""); err != nil {
		t.Fatal(err)
	}
	adm.client = g.client
	g.start("n1", "n2")
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		adm.mu.Lock()
		n := len(adm.calls)
		adm.mu.Unlock()
		if n >= 1 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // n1 is found drained and soaks
	g.clock.Step(2*time.Minute + time.Second)
	select {
	case res := <-g.done:
		if res.err != nil {
			t.Fatalf("run: %v", res.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("the run still waits 2 minutes after the 8 left of n1's soak: it soaked n1 again from the start")
	}
}

// A rolling drain cordons as it goes and waits for no admission batch: it calls
// Config.AfterCordon once, at its start, with a context already done, so that the runs
// admitted with it (the controller's batch) do not wait on it.
func TestRollingDrainTellsItsBatchAtOnce(t *testing.T) {
	adm := &admitLog{}
	var calls, doneCtx int
	after := func(ctx context.Context) {
		calls++
		if ctx.Err() != nil {
			doneCtx++
		}
	}
	g := newRig(t, Config{Settings: Settings{MaxParallelNodes: 1}, Rolling: adm, AfterCordon: after}, testNode("n1"))
	adm.client = g.client
	g.start("n1")
	<-g.run
	res := <-g.done
	if res.err != nil {
		t.Fatalf("run: %v", res.err)
	}
	if calls != 1 || doneCtx != 1 {
		t.Errorf("AfterCordon called %d time(s), %d with a done context; want 1 and 1", calls, doneCtx)
	}
}

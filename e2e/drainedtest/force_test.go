package drainedtest

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

// deletion is what the watch saw of a pod's deletion: when its deletionTimestamp first
// showed, and every grace period it was deleted with, in order.
type deletion struct {
	seenAt time.Time
	graces []int64
}

// deletions records the pods of the namespace whose deletion starts while the test runs.
type deletions struct {
	mu   sync.Mutex
	seen map[string]*deletion // by pod name
}

func watchDeletions(t *testing.T, e *fixture.Env) *deletions {
	t.Helper()
	d := &deletions{seen: map[string]*deletion{}}
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
			d.mu.Lock()
			del := d.seen[p.Name]
			if del == nil {
				del = &deletion{seenAt: time.Now()}
				d.seen[p.Name] = del
			}
			if g := ptr.Deref(p.DeletionGracePeriodSeconds, -1); len(del.graces) == 0 || del.graces[len(del.graces)-1] != g {
				del.graces = append(del.graces, g)
			}
			d.mu.Unlock()
		}
	}()
	t.Cleanup(func() { cancel(); wg.Wait() })
	return d
}

func (d *deletions) of(name string) (deletion, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	del, ok := d.seen[name]
	if !ok {
		return deletion{}, false
	}
	return deletion{seenAt: del.seenAt, graces: append([]int64(nil), del.graces...)}, true
}

// neverAllows runs app, one pod pinned to node, under a budget that never allows a
// disruption (minAvailable 1 of 1).
func neverAllows(t *testing.T, e *fixture.Env, app, node string, o fixture.PodOptions, grace int64) *corev1.Pod {
	t.Helper()
	o.NodeSelector = map[string]string{"kubernetes.io/hostname": node}
	tpl := fixture.PodTemplate(app, o)
	tpl.Spec.TerminationGracePeriodSeconds = ptr.To(grace)
	pod := &corev1.Pod{ObjectMeta: tpl.ObjectMeta, Spec: tpl.Spec}
	pod.Name, pod.Namespace = app, e.NS
	pod.Spec.NodeName = node
	// A bare pod (drained with --force): its budget counts it like a controller's.
	if _, err := e.C.CoreV1().Pods(e.NS).Create(e.Ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.Ready(app, 1)
	e.PDB(app, fixture.PDBSpec{App: app, MinAvailable: fixture.Int(1)}, 0)
	return pod
}

// Test 3 of issue 40 (its third case, a pod already terminating, is the subtest). Node a: a system-node-critical pod and an ordinary one (grace 0),
// each under a budget that never allows. With --on-blocked=force --force-after 8s both
// are deleted within 8 s + 2 s of the first wait (the critical pod is not held behind
// the ordinary pod's tier), and the pod of grace 0 is deleted with a grace of at least
// 1 s, never 0.
func TestForceDeletesEveryTierAtTheDeadlineWithARealGrace(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a", "b")
	e.AddNodes()
	a := e.Nodes[0]
	neverAllows(t, e, "ledger", a, fixture.PodOptions{}, 0)
	neverAllows(t, e, "crit", a, fixture.PodOptions{PriorityClassName: "system-node-critical"}, 30)
	del := watchDeletions(t, e)
	r := e.Run("drain", a, "--force", "--on-blocked=force", "--force-after", "8s", "--timeout", "2m", "-o", "json")
	if r.Code != 5 {
		t.Fatalf("drain exit %d, want 5 (finished by force)", r.Code)
	}
	evs := fixture.NDJSON(t, r.Stdout)
	blocked := timeOf(t, fixture.FirstEvent(evs, "pod.eviction_blocked", ""))
	for _, name := range []string{"ledger", "crit"} {
		d, ok := del.of(name)
		if !ok {
			t.Fatalf("pod %s was not deleted", name)
		}
		if after := d.seenAt.Sub(blocked); after > 10*time.Second || after < 8*time.Second {
			t.Errorf("pod %s deleted %s after the first wait, want within [8s, 10s]", name, after.Round(time.Millisecond))
		}
		if len(d.graces) == 0 || d.graces[0] < 1 {
			t.Errorf("pod %s deleted with grace %v, want at least 1 s", name, d.graces)
		}
		t.Logf("figures: pod %s deleted %s after the first wait, grace %v", name, d.seenAt.Sub(blocked).Round(time.Millisecond), d.graces)
		if fixture.FirstEvent(evs, "pod.forced", e.NS+"/"+name) == nil {
			t.Errorf("no pod.forced event for %s", name)
		}
	}

	t.Run("a pod terminating with a 600 s grace is deleted again with a short one, and gone before --timeout", func(t *testing.T) {
		b := e.Nodes[1]
		tpl := fixture.PodTemplate("slow", fixture.PodOptions{NodeName: b, DeleteDelay: 10 * time.Minute})
		tpl.Spec.TerminationGracePeriodSeconds = ptr.To[int64](600)
		pod := &corev1.Pod{ObjectMeta: tpl.ObjectMeta, Spec: tpl.Spec}
		pod.Name, pod.Namespace = "slow", e.NS
		if _, err := e.C.CoreV1().Pods(e.NS).Create(e.Ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		e.Ready("slow", 1)
		if err := e.C.CoreV1().Pods(e.NS).Delete(e.Ctx, "slow", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		// kwok removes a pod after its stage delay (10 min here), not at the end of its
		// grace: the test plays the kubelet for this pod and removes it (grace 0, as the
		// kubelet does once its containers stopped) when its deletionTimestamp passes.
		ctx, cancel := context.WithCancel(e.Ctx)
		defer cancel()
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				p, err := e.C.CoreV1().Pods(e.NS).Get(ctx, "slow", metav1.GetOptions{})
				if err != nil {
					return
				}
				if p.DeletionTimestamp != nil && time.Now().After(p.DeletionTimestamp.Time) {
					_ = e.C.CoreV1().Pods(e.NS).Delete(ctx, "slow", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
					return
				}
				time.Sleep(200 * time.Millisecond)
			}
		}()
		r := e.Run("drain", b, "--force", "--on-blocked=force", "--force-after", "8s", "--grace-period", "10", "--timeout", "40s", "-o", "json")
		cancel()
		wg.Wait()
		if r.Code != 5 {
			t.Fatalf("drain exit %d, want 5 (finished by force, before --timeout)", r.Code)
		}
		d, _ := del.of("slow")
		if len(d.graces) < 2 || d.graces[0] != 600 || d.graces[len(d.graces)-1] > 10 {
			t.Errorf("slow's deletions had graces %v, want 600 then --grace-period's 10 (or less)", d.graces)
		}
		mustContain(t, "stdout", r.Stdout, "still terminating 8s after --force-after")
		t.Logf("figures: the run ended after %s (--timeout 40s); slow's graces %v", r.Elapsed.Round(time.Millisecond), d.graces)
	})
}

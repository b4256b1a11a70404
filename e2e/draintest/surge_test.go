package draintest

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	"github.com/kubectl-maintenance/kubectl-maintenance/surge"
)

// readyWatch watches the pods of app and records, at every change, how many are Ready
// and not terminating: the least it saw, and every pod name.
type readyWatch struct {
	mu     sync.Mutex
	least  int
	seen   map[string]bool
	zeroAt string
}

func watchReady(t *testing.T, e *fixture.Env, app string) *readyWatch {
	t.Helper()
	w := &readyWatch{least: 1 << 30, seen: map[string]bool{}}
	ctx, cancel := context.WithCancel(e.Ctx)
	pods := e.C.CoreV1().Pods(e.NS)
	ch, err := fixture.Rewatch(ctx, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		o.LabelSelector = "app=" + app
		return pods.List(ctx, o)
	}, func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		o.LabelSelector = "app=" + app
		return pods.Watch(ctx, o)
	})
	if err != nil {
		t.Fatal(err)
	}
	// Rewatch delivers only what happens after it is called: start from a list.
	state := map[string]bool{}
	list, err := pods.List(e.Ctx, metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		p := &list.Items[i]
		state[p.Name] = p.DeletionTimestamp == nil && fixture.PodReady(p)
		w.seen[p.Name] = true
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range ch {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			state[p.Name] = ev.Type != watch.Deleted && p.DeletionTimestamp == nil && fixture.PodReady(p)
			n := 0
			for _, r := range state {
				if r {
					n++
				}
			}
			w.mu.Lock()
			w.seen[p.Name] = true
			if n < w.least {
				w.least = n
				if n == 0 {
					w.zeroAt = fmt.Sprintf("%s %s", ev.Type, p.Name)
				}
			}
			w.mu.Unlock()
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return w
}

func (w *readyWatch) result() (least int, pods []string, zeroAt string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for p := range w.seen {
		pods = append(pods, p)
	}
	sort.Strings(pods)
	return w.least, pods, w.zeroAt
}

// oneReplica makes a one-replica Deployment name Ready on the env's first node (its pods
// Ready after readyDelay), under a budget spec.
func oneReplica(t *testing.T, e *fixture.Env, name string, readyDelay time.Duration, spec fixture.PDBSpec) {
	t.Helper()
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, name, 1, e.Here(fixture.PodOptions{ReadyDelay: readyDelay})); err != nil {
		t.Fatal(err)
	}
	e.Ready(name, 1)
	spec.App = name
	e.PDB(name, spec, 0)
}

// deploymentState is "replicas=N annotation=... label=...", to compare before and after.
func deploymentState(t *testing.T, e *fixture.Env, name string) string {
	t.Helper()
	d, err := e.C.AppsV1().Deployments(e.NS).Get(e.Ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("replicas=%d annotation=%q label=%q", ptr.Deref(d.Spec.Replicas, 1), d.Annotations[surge.Annotation], d.Labels[surge.LabelSurged])
}

const restoredState = `replicas=1 annotation="" label=""`

// guardSurge is the guard, accepting only the one deletion a surge may cause without the
// Eviction API: the surplus replacement the ReplicaSet creates for the evicted pod in the
// moment before the restore reaches it, and deletes itself at the restore, before that
// pod is ever Ready (see the README's --surge section). Every such pod is logged.
func guardSurge(t *testing.T, e *fixture.Env) *fixture.Guard {
	g := e.Guard()
	g.Tolerate(func(p *corev1.Pod) string {
		if ref := metav1.GetControllerOf(p); ref == nil || ref.Kind != "ReplicaSet" || fixture.PodReady(p) {
			return ""
		}
		return "not Ready when its ReplicaSet deleted it (surplus replacement at the restore)"
	})
	t.Cleanup(func() {
		seen := map[string]bool{}
		for _, s := range g.Tolerated {
			if !seen[s] {
				seen[s] = true
				t.Logf("guard tolerated: %s", s)
			}
		}
	})
	return g
}

// Issue 13 item 5: under minAvailable: 1 on one replica, drain --surge moves the pod with
// a Ready pod at every moment, restores the count and removes the record; the plan says
// so first.
func TestSurgeMovesAOneReplicaDeployment(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a", "b")
	e.AddNodes(0)
	oneReplica(t, e, "web", time.Second, fixture.PDBSpec{MinAvailable: fixture.Int(1)})
	e.AddNodes(1)
	guardSurge(t, e)
	w := watchReady(t, e, "web")

	r := e.Run("plan", e.Nodes[0], "--surge")
	if r.Code != 0 {
		t.Errorf("plan --surge exit %d, want 0\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	mustContain(t, "plan", r.Stdout, "will be surged: deployment "+e.NS+"/web scaled from 1 to 2 replicas")
	r = e.Run("drain", e.Nodes[0], "--surge", "--dry-run=server")
	if r.Code != 0 {
		t.Errorf("drain --surge --dry-run=server exit %d, want 0", r.Code)
	}
	mustContain(t, "server dry run", r.Stdout, "will be surged: deployment "+e.NS+"/web", "(server dry run)", "drained (server dry run)")
	if got := deploymentState(t, e, "web"); got != restoredState || e.Node(e.Nodes[0]).Spec.Unschedulable {
		t.Errorf("after a dry run: %s, node cordoned %v; want %s, not cordoned", got, e.Node(e.Nodes[0]).Spec.Unschedulable, restoredState)
	}

	r, lines := stream(t, e, 0, nil, "drain", e.Nodes[0], "--surge", "--timeout", "2m")
	if r.Code != 0 {
		t.Fatalf("drain --surge exit %d, want 0", r.Code)
	}
	order := []string{"pod.surge_started", "pod.surge_ready", "pod.eviction_started", "deployment.restored"}
	i := 0
	for _, l := range lines {
		if i < len(order) && l["type"] == order[i] {
			if l["deployment"] != nil && l["deployment"] != e.NS+"/web" {
				t.Errorf("%s names deployment %v, want %s/web", l["type"], l["deployment"], e.NS)
			}
			i++
		}
	}
	if i != len(order) {
		t.Errorf("events in order %v: only the first %d seen", order, i)
	}
	at := map[string]time.Time{}
	for _, l := range lines {
		if ts, err := time.Parse(time.RFC3339Nano, fmt.Sprint(l["ts"])); err == nil {
			at[fmt.Sprint(l["type"])] = ts
		}
	}
	t.Logf("FIGURE surge: scale-up to new pod Ready %s, Ready to eviction accepted %s, accepted to count restored %s, whole drain %s",
		at["pod.surge_ready"].Sub(at["pod.surge_started"]).Round(time.Millisecond), at["pod.eviction_accepted"].Sub(at["pod.surge_ready"]).Round(time.Millisecond),
		at["deployment.restored"].Sub(at["pod.eviction_accepted"]).Round(time.Millisecond), r.Elapsed.Round(time.Millisecond))
	if got := deploymentState(t, e, "web"); got != restoredState {
		t.Errorf("after the drain: %s, want %s", got, restoredState)
	}
	if left := e.PodsOn(e.Nodes[0]); len(left) != 0 {
		t.Errorf("%d pods left on the drained node", len(left))
	}
	e.Ready("web", 1)
	least, pods, zeroAt := w.result()
	if least < 1 {
		t.Errorf("a watcher saw no Ready pod of web at %s", zeroAt)
	}
	t.Logf("pods of web seen during the drain: %v", pods)
}

// kill -9 after the scale-up, then a re-run (even without --surge) finishes the surge and
// restores the count; again, once the new pod is Ready, then uncordon restores it.
func TestSurgeKilledThenRerunOrUncordonRestores(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a", "b")
	e.AddNodes(0)
	oneReplica(t, e, "web", 3*time.Second, fixture.PDBSpec{MinAvailable: fixture.Int(1)})
	e.AddNodes(1)
	guardSurge(t, e)
	w := watchReady(t, e, "web")
	args := []string{"drain", e.Nodes[0], "--surge", "--timeout", "2m"}
	surged := `replicas=2 annotation="{\"replicas\":1`

	r, _ := stream(t, e, syscall.SIGKILL, typ("pod.surge_started"), args...)
	if r.Code != 137 {
		t.Errorf("killed after the scale-up: exit %d, want 137", r.Code)
	}
	if got := deploymentState(t, e, "web"); !strings.HasPrefix(got, surged) {
		t.Errorf("after kill -9: %s, want it surged (%s...)", got, surged)
	}
	// The re-run need not repeat --surge: a drain always finishes a surge it finds.
	r, lines := stream(t, e, 0, nil, "drain", e.Nodes[0], "--timeout", "2m")
	if r.Code != 0 {
		t.Fatalf("re-run exit %d, want 0", r.Code)
	}
	if !hasType(lines, "deployment.restored") {
		t.Errorf("the re-run emitted no deployment.restored")
	}
	if got := deploymentState(t, e, "web"); got != restoredState {
		t.Errorf("after the re-run: %s, want %s", got, restoredState)
	}
	if left := e.PodsOn(e.Nodes[0]); len(left) != 0 {
		t.Errorf("%d pods left on the drained node", len(left))
	}

	// Again from node b, killed once the new pod is Ready (on a): uncordon evicts that
	// surplus pod through the Eviction API (restoring alone would make the ReplicaSet
	// delete a Ready pod itself), restores the count, and the pod stays on b.
	e.Ready("web", 1)
	stays := e.PodsOn(e.Nodes[1])
	args[1] = e.Nodes[1]
	if r = e.Run("uncordon", e.Nodes[0]); r.Code != 0 {
		t.Fatalf("uncordon %s exit %d", e.Nodes[0], r.Code)
	}
	r, _ = stream(t, e, syscall.SIGKILL, typ("pod.surge_ready"), args...)
	if r.Code != 137 {
		t.Errorf("killed once the new pod is Ready: exit %d, want 137", r.Code)
	}
	if got := deploymentState(t, e, "web"); !strings.HasPrefix(got, surged) {
		t.Errorf("after kill -9: %s, want it surged (%s...)", got, surged)
	}
	surplus := e.PodsOn(e.Nodes[0])
	if len(stays) != 1 || len(surplus) != 1 {
		t.Fatalf("pods: %d on %s, %d on %s; want 1 and 1", len(stays), e.Nodes[1], len(surplus), e.Nodes[0])
	}
	r = e.Run("uncordon", e.Nodes[1])
	if r.Code != 0 {
		t.Fatalf("uncordon exit %d\n%s", r.Code, r.Stderr)
	}
	mustContain(t, "uncordon", r.Stdout, "pod/"+surplus[0].Name+" evicted (surplus of deployment.apps/web)",
		"deployment.apps/web restored to 1 replicas", "node/"+e.Nodes[1]+" uncordoned")
	if got := deploymentState(t, e, "web"); got != restoredState {
		t.Errorf("after uncordon: %s, want %s", got, restoredState)
	}
	if r = e.Run("uncordon", e.Nodes[1]); r.Code != 0 || strings.Contains(r.Stdout, "restored") {
		t.Errorf("second uncordon: exit %d, %q: want 0 and nothing restored", r.Code, r.Stdout)
	}
	ps := e.Ready("web", 1)
	if ps[0].UID != stays[0].UID {
		t.Errorf("after uncordon the pod of web is %s on %s, want %s kept on %s", ps[0].Name, ps[0].Spec.NodeName, stays[0].Name, e.Nodes[1])
	}
	if least, _, zeroAt := w.result(); least < 1 {
		t.Errorf("a watcher saw no Ready pod of web at %s", zeroAt)
	}
}

// A new pod that can run nowhere else: the drain reaches --timeout (exit 124) naming the
// surge it waits for, leaves the count recorded, and uncordon restores it (the ReplicaSet
// removes the Pending surge pod, which never ran).
func TestSurgeThatCannotGetReadyTimesOutAndUncordonRestores(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a")
	e.AddNodes(0)
	oneReplica(t, e, "web", time.Second, fixture.PDBSpec{MinAvailable: fixture.Int(1)})
	guardSurge(t, e)
	w := watchReady(t, e, "web")

	r := e.Run("drain", e.Nodes[0], "--surge", "--timeout", "5s")
	if r.Code != 124 {
		t.Errorf("drain --surge with nowhere to go: exit %d, want 124", r.Code)
	}
	mustContain(t, "stderr", r.Stderr, "timed out after 5s", "surging deployment "+e.NS+"/web: waiting for its new pod to be Ready",
		"kubectl maintenance uncordon "+e.Nodes[0])
	if got := deploymentState(t, e, "web"); !strings.HasPrefix(got, `replicas=2 annotation="{\"replicas\":1`) {
		t.Errorf("after the timeout: %s, want it still surged (recorded)", got)
	}
	r = e.Run("uncordon", e.Nodes[0])
	if r.Code != 0 {
		t.Fatalf("uncordon exit %d", r.Code)
	}
	mustContain(t, "uncordon", r.Stdout, "deployment.apps/web restored to 1 replicas")
	if got := deploymentState(t, e, "web"); got != restoredState {
		t.Errorf("after uncordon: %s, want %s", got, restoredState)
	}
	if _, err := fixture.WaitPods(e.Ctx, e.C, e.NS, "app=web", func(ps []*corev1.Pod) bool { return len(ps) == 1 && fixture.PodReady(ps[0]) }); err != nil {
		t.Fatal(err)
	}
	if least, _, zeroAt := w.result(); least < 1 {
		t.Errorf("a watcher saw no Ready pod of web at %s", zeroAt)
	}
}

// Refusals under --on-blocked=fail, each one line, exit 3, nothing changed: an autoscaler targets the Deployment;
// the budget is maxUnavailable: 0 (shown first on the real controller: one more replica
// leaves disruptionsAllowed at 0); a StatefulSet's pod (named, never surged).
func TestSurgeRefusalsChangeNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a", "b")
	e.AddNodes(0)
	oneReplica(t, e, "scaled", time.Second, fixture.PDBSpec{MinAvailable: fixture.Int(1)})
	oneReplica(t, e, "strict", time.Second, fixture.PDBSpec{MaxUnavailable: fixture.Int(0)})
	if _, err := fixture.StatefulSet(e.Ctx, e.C, e.NS, "db", 1, e.Here(fixture.PodOptions{})); err != nil {
		t.Fatal(err)
	}
	e.Ready("db", 1)
	e.PDB("db", fixture.PDBSpec{App: "db", MinAvailable: fixture.Int(1)}, 0)
	hpa := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "scaled-hpa", Namespace: e.NS},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "scaled"},
			MinReplicas:    ptr.To[int32](1), MaxReplicas: 1,
		},
	}
	if _, err := e.C.AutoscalingV2().HorizontalPodAutoscalers(e.NS).Create(e.Ctx, hpa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// The disruption controller under maxUnavailable: 0 with one more replica Ready:
	// desiredHealthy follows expectedPods, so disruptionsAllowed stays 0.
	scale(t, e, "strict", 2)
	e.Ready("strict", 2)
	b, err := fixture.WaitPDB(e.Ctx, e.C, e.NS, "strict", func(b *policyv1.PodDisruptionBudget) bool {
		return b.Status.ObservedGeneration == b.Generation && b.Status.ExpectedPods == 2 && b.Status.CurrentHealthy == 2
	})
	if err != nil {
		t.Fatal(err)
	}
	if b.Status.DesiredHealthy != 2 || b.Status.DisruptionsAllowed != 0 {
		t.Errorf("maxUnavailable 0 with 2 Ready of 2: desiredHealthy %d, disruptionsAllowed %d; want 2 and 0",
			b.Status.DesiredHealthy, b.Status.DisruptionsAllowed)
	}
	t.Logf("pdb strict with 2 replicas Ready: expectedPods %d, currentHealthy %d, desiredHealthy %d, disruptionsAllowed %d",
		b.Status.ExpectedPods, b.Status.CurrentHealthy, b.Status.DesiredHealthy, b.Status.DisruptionsAllowed)
	scale(t, e, "strict", 1)
	if _, err := fixture.WaitPods(e.Ctx, e.C, e.NS, "app=strict", func(ps []*corev1.Pod) bool { return len(ps) == 1 }); err != nil {
		t.Fatal(err)
	}
	e.AddNodes(1)
	e.Guard()
	before := map[string]string{}
	for _, d := range []string{"scaled", "strict"} {
		before[d] = deploymentState(t, e, d)
	}

	r := e.Run("plan", e.Nodes[0], "--surge")
	if r.Code != 3 {
		t.Errorf("plan --surge exit %d, want 3", r.Code)
	}
	r = e.Run("drain", e.Nodes[0], "--surge", "--on-blocked=fail", "--timeout", "1m")
	if r.Code != 3 {
		t.Errorf("drain --surge exit %d, want 3", r.Code)
	}
	if n := strings.Count(r.Stderr, "error: "); n != 1 || !strings.HasSuffix(strings.TrimSpace(r.Stderr), "relax the budget (maxUnavailable: 1, or minAvailable: 1)") {
		t.Errorf("stderr has %d error lines, want one, the last:\n%s", n, r.Stderr)
	}
	mustContain(t, "stderr", r.Stderr, "nothing was changed",
		"deployment "+e.NS+"/scaled is scaled by HorizontalPodAutoscaler "+e.NS+"/scaled-hpa",
		"pdb "+e.NS+"/strict has maxUnavailable 0", "relax the budget",
		"StatefulSet "+e.NS+"/db", "never surged")
	for d, was := range before {
		if got := deploymentState(t, e, d); got != was {
			t.Errorf("deployment %s: %s, want it unchanged: %s", d, got, was)
		}
	}
	if e.Node(e.Nodes[0]).Spec.Unschedulable {
		t.Errorf("node %s cordoned by a refused drain", e.Nodes[0])
	}
	if left := e.PodsOn(e.Nodes[0]); len(left) != 3 {
		t.Errorf("%d pods on the node, want the 3 untouched", len(left))
	}
}

func scale(t *testing.T, e *fixture.Env, name string, n int32) {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, n)
	if _, err := e.C.AppsV1().Deployments(e.NS).Patch(e.Ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

func hasType(lines []map[string]any, typ string) bool {
	for _, l := range lines {
		if l["type"] == typ {
			return true
		}
	}
	return false
}

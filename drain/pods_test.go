package drain

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/internal/kubefake"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

// honourNodeSelector makes the fake clientset's pod lists apply the spec.nodeName field
// selector, as the API server does (the fake tracker applies label selectors only).
func honourNodeSelector(g *rig) {
	g.client.PrependReactor("list", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		fs := a.(k8stesting.ListAction).GetListRestrictions().Fields
		if fs == nil || fs.Empty() {
			return false, nil, nil
		}
		obj, err := g.client.Tracker().List(corev1.SchemeGroupVersion.WithResource("pods"), corev1.SchemeGroupVersion.WithKind("Pod"), a.GetNamespace())
		if err != nil {
			return true, nil, err
		}
		list := obj.(*corev1.PodList)
		kept := list.Items[:0]
		for _, p := range list.Items {
			if fs.Matches(fields.Set{"spec.nodeName": p.Spec.NodeName}) {
				kept = append(kept, p)
			}
		}
		list.Items = kept
		return true, list, nil
	})
}

// requests counts the fake clientset's actions by "verb resource".
func requests(g *rig) map[string]int { return actionsBy(g.client) }

func actionsBy(c *fake.Clientset) map[string]int {
	out := map[string]int{}
	for _, a := range c.Actions() {
		out[a.GetVerb()+" "+a.GetResource().Resource]++
	}
	return out
}

// A drain of many nodes at once watches pods through one informer and runs kubectl's
// filters over it: one pod list, the plan's, which the run's informer starts from, and one
// watch, whatever the number of nodes; a drain of few nodes keeps one informer per node.
// Either way every pod of the drained nodes is evicted and no other pod, and no node is
// read before its drain: each cordon is one PATCH carrying the plan's resourceVersion.
func TestPodWatchesDoNotGrowWithTheNodes(t *testing.T) {
	for _, tc := range []struct {
		nodes, parallel int
		wantPodLists    int
		wantPodWatches  int
	}{
		{nodes: 2, parallel: 2, wantPodLists: 2 + 2 + 2, wantPodWatches: 2}, // plan, informer, look per node
		{nodes: 12, parallel: 12, wantPodLists: 1, wantPodWatches: 1},
		{nodes: 30, parallel: 10, wantPodLists: 1, wantPodWatches: 1},
	} {
		t.Run(fmt.Sprintf("%d nodes %d at a time", tc.nodes, tc.parallel), func(t *testing.T) {
			objs := []runtime.Object{testNode("other"), podOn("stays", "other", "u-stays")}
			var names []string
			for i := range tc.nodes {
				n := fmt.Sprintf("n%02d", i)
				names = append(names, n)
				objs = append(objs, testNode(n), podOn(n+"-a", n, types.UID(n+"-a")), podOn(n+"-b", n, types.UID(n+"-b")))
			}
			g := newRig(t, Config{Settings: Settings{MaxParallelNodes: tc.parallel}}, objs...)
			honourNodeSelector(g)
			g.start(names...)
			res := g.finish()
			if res.err != nil || res.sum.NodesDrained != tc.nodes || res.sum.PodsEvicted != 2*tc.nodes {
				t.Fatalf("drained %d nodes, evicted %d pods, err %v; want %d nodes, %d pods", res.sum.NodesDrained, res.sum.PodsEvicted, res.err, tc.nodes, 2*tc.nodes)
			}
			if _, err := g.client.CoreV1().Pods("ns").Get(context.Background(), "stays", metav1.GetOptions{}); err != nil {
				t.Errorf("the pod on the node not drained: %v", err)
			}
			req := requests(g)
			if req["list pods"] != tc.wantPodLists || req["watch pods"] != tc.wantPodWatches {
				t.Errorf("pod lists %d, pod watches %d; want %d and %d (%v)", req["list pods"], req["watch pods"], tc.wantPodLists, tc.wantPodWatches, req)
			}
			// The plan's, and the start of the watch of the nodes that carry a record (leave.go:
			// a node someone takes from the run leaves it at once), label-selected.
			if req["list nodes"] != 2 {
				t.Errorf("node lists %d, want 2 (the plan, the record-labelled nodes' watch)", req["list nodes"])
			}
			for _, a := range g.client.Actions() {
				if l, ok := a.(k8stesting.ListAction); ok && a.GetResource().Resource == "nodes" && a.GetVerb() == "list" &&
					l.GetListRestrictions().Labels.String() != "" && l.GetListRestrictions().Labels.String() != noderecord.LabelState {
					t.Errorf("a node list selected by %q, want the plan's (all) or %q", l.GetListRestrictions().Labels, noderecord.LabelState)
				}
			}
			// The cordons carry the plan's resourceVersion (no GET); the one read per node is
			// the drained record's conditional write (noderecord.Update reads, then patches).
			if req["get nodes"] > tc.nodes {
				t.Errorf("node GETs %d, want at most %d (one per node, for its drained record)", req["get nodes"], tc.nodes)
			}
		})
	}
}

// With the shared informer, a pod that appears on a node being drained (created there,
// or bound there after its creation) goes through kubectl's filters and is evicted. The
// node stays in its drain meanwhile: its own pod waits on a budget that allows nothing.
func TestSharedInformerEvictsAPodThatAppears(t *testing.T) {
	names, objs := sharedNodes(testPDB(0))
	objs = append(objs, podOn("p1", "n00", "u1"))
	g := newRig(t, Config{Settings: Settings{MaxParallelNodes: sharedPodsAt}}, objs...)
	g.start(names...)
	g.next(event.EventEvictionBlocked, 0) // p1 waits on its budget
	for _, late := range []*corev1.Pod{podOn("late", "n00", "u-late"), podOn("bound-later", "", "u-bound")} {
		late.Labels = map[string]string{"app": "other"}
		if _, err := g.client.CoreV1().Pods("ns").Create(context.Background(), late, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	bound := podOn("bound-later", "n00", "u-bound")
	bound.Labels = map[string]string{"app": "other"}
	if _, err := g.client.CoreV1().Pods("ns").Update(context.Background(), bound, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	evicted := map[string]bool{}
	for len(evicted) < 2 {
		evicted[g.next(event.EventPodEvicted, 0).Pod] = true
	}
	if !evicted["ns/late"] || !evicted["ns/bound-later"] {
		t.Errorf("evicted %v, want ns/late and ns/bound-later", evicted)
	}
	g.cancel()
	g.finish()
}

// The node view of the shared informer holds the node's pods only.
func TestNodeView(t *testing.T) {
	ix := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{nodeNameIndex: func(obj any) ([]string, error) {
		return []string{obj.(*corev1.Pod).Spec.NodeName}, nil
	}})
	for _, p := range []*corev1.Pod{testPod("a", "n1"), testPod("b", "n2"), testPod("c", "n1")} {
		_ = ix.Add(p)
	}
	v := nodeView{Indexer: ix, node: "n1"}
	if got := len(v.List()); got != 2 {
		t.Errorf("List: %d pods, want 2", got)
	}
	for _, tc := range []struct {
		key  string
		want bool
	}{{"ns/a", true}, {"ns/b", false}, {"ns/missing", false}} {
		if _, ok, err := v.GetByKey(tc.key); ok != tc.want || err != nil {
			t.Errorf("GetByKey(%s) = %v, %v; want %v", tc.key, ok, err, tc.want)
		}
	}
}

// The shared informer's pods keep what kubectl's filters read: the emptyDir volumes (so a
// pod with local data still needs --delete-emptydir-data), and drop the rest.
func TestTrimPodKeepsLocalStorage(t *testing.T) {
	p := testPod("a", "n1")
	p.Spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{}}}}
	p.Spec.Containers = []corev1.Container{{Name: "app"}}
	p.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "x"}}
	obj, _ := trimPodKeepLocalStorage(p)
	got := obj.(*corev1.Pod)
	if len(got.Spec.Volumes) != 1 || got.Spec.Volumes[0].EmptyDir == nil || got.Spec.Containers != nil || got.ManagedFields != nil {
		t.Errorf("trimmed pod: volumes %v, containers %v, managed fields %v", got.Spec.Volumes, got.Spec.Containers, got.ManagedFields)
	}
	list, errs := (&run{e: &Engine{cfg: Config{Client: kubefake.New()}}, ctx: context.Background()}).podsForDeletion(&nodeState{name: "n1"},
		nodeView{Indexer: indexerOf(got), node: "n1"})
	if len(errs) == 0 || list == nil {
		t.Errorf("kubectl's filters over the shared informer's pod let a pod with local storage go without --delete-emptydir-data")
	}
}

func indexerOf(pods ...*corev1.Pod) cache.Indexer {
	ix := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{nodeNameIndex: func(obj any) ([]string, error) {
		return []string{obj.(*corev1.Pod).Spec.NodeName}, nil
	}})
	for _, p := range pods {
		_ = ix.Add(p)
	}
	return ix
}

// A plan of many nodes lists the pods once and still runs kubectl's filters per node.
func TestPlanOfManyNodesListsPodsOnce(t *testing.T) {
	objs := []runtime.Object{testNode("other"), podOn("elsewhere", "other", "u-else")}
	var names []string
	for i := range 20 {
		n := fmt.Sprintf("n%02d", i)
		names = append(names, n)
		objs = append(objs, testNode(n), podOn(n+"-a", n, types.UID(n+"-a")))
	}
	bare := podOn("bare", "n03", "u-bare")
	bare.OwnerReferences = nil
	bare.Spec.TerminationGracePeriodSeconds = ptr.To[int64](1)
	objs = append(objs, bare)
	g := newRig(t, Config{}, objs...)
	plan, err := g.eng.Plan(context.Background(), names)
	if err != nil {
		t.Fatal(err)
	}
	steps, errsOn := 0, map[string]int{}
	for _, n := range plan.Nodes {
		steps += len(n.Steps)
		errsOn[n.Name] = len(n.Errors)
	}
	if steps != 20 || errsOn["n03"] != 1 || len(plan.Nodes) != 20 {
		t.Errorf("plan: %d nodes, %d steps, errors %v; want 20 nodes, 20 steps, kubectl's unmanaged-pod error on n03", len(plan.Nodes), steps, errsOn)
	}
	if req := requests(g); req["list pods"] != 1 || req["get nodes"] != 0 || req["list nodes"] != 1 {
		t.Errorf("requests %v, want one pod list and one node list", req)
	}
	if _, err := g.eng.Plan(context.Background(), []string{"n01", "nope"}); err == nil {
		t.Error("a plan naming a node that does not exist: no error")
	}
}

// The diagnosis of a waiting budget sees why a replacement is not Ready, whether it reads
// the budget's pods from the shared informer's cache (many nodes at once: no list request
// after the plan's; the cache keeps the containers' waiting states) or lists them (few).
func TestDiagnosisSeesACrashLoopingReplacement(t *testing.T) {
	for _, tc := range []struct {
		name        string
		maxParallel int
		listsAfter  bool
	}{
		{"shared informer", sharedPodsAt, false},
		{"per-node informers", 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			budget := testPDB(0)
			budget.Status.CurrentHealthy, budget.Status.DesiredHealthy, budget.Status.ExpectedPods = 1, 1, 2
			repl := podOn("web-new", "spare", "u-new")
			repl.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
			repl.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", Image: "app:1", RestartCount: 7,
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}}
			names, objs := sharedNodes(budget, repl, testNode("spare"))
			objs = append(objs, podOn("web-old", "n00", "u-old"))
			g := newRig(t, Config{Settings: Settings{MaxParallelNodes: tc.maxParallel}}, objs...)
			onlyNodePods(g.client) // the fake ignores field selectors
			g.start(names...)
			blockedWith(g, string(pdb.Exhausted), 0)
			before := labelLists(g.client)
			named := blockedWith(g, string(pdb.Exhausted), time.Second)
			if !strings.Contains(named.Cause, "ns/web-new is in a crash loop (container app restarted 7 times)") {
				t.Errorf("cause %q does not name the crash-looping replacement", named.Cause)
			}
			if got := labelLists(g.client) > before; got != tc.listsAfter {
				t.Errorf("listed the budget's pods during the run: %v, want %v", got, tc.listsAfter)
			}
			g.cancel()
			g.finish()
		})
	}
}

// labelLists counts the pod lists by label selector the client has sent.
func labelLists(c *fake.Clientset) int {
	n := 0
	for _, a := range c.Actions() {
		if la, ok := a.(k8stesting.ListAction); ok && a.GetResource().Resource == "pods" && !la.GetListRestrictions().Labels.Empty() {
			n++
		}
	}
	return n
}

// sharedNodes are sharedPodsAt nodes n00, n01, ... (enough for the shared pod informer),
// their names, and the objects given before them.
func sharedNodes(objs ...runtime.Object) ([]string, []runtime.Object) {
	var names []string
	for i := range sharedPodsAt {
		n := fmt.Sprintf("n%02d", i)
		names = append(names, n)
		objs = append(objs, testNode(n))
	}
	return names, objs
}

package drain

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	kubectldrain "k8s.io/kubectl/pkg/drain"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
)

func withLabel(p *corev1.Pod, k, v string) *corev1.Pod {
	p.Labels[k] = v
	return p
}

func withAnnotation(p *corev1.Pod, k, v string) *corev1.Pod {
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	p.Annotations[k] = v
	return p
}

func phase(p *corev1.Pod, ph corev1.PodPhase) *corev1.Pod {
	p.Status.Phase = ph
	return p
}

// ruleNow is the rule tests' clock.
var ruleNow = time.Date(2026, 11, 28, 4, 0, 0, 0, time.UTC)

// started makes p a pod that started 10 s before ruleNow.
func started(p *corev1.Pod) *corev1.Pod {
	p.Status.StartTime = &metav1.Time{Time: ruleNow.Add(-10 * time.Second)}
	return p
}

func TestRuleFilter(t *testing.T) {
	cases := []struct {
		name   string
		pod    *corev1.Pod
		ignore bool
		delete bool
		reason string
		sunk   bool
	}{
		{"no rule", testPod("p", "n1"), false, true, kubectldrain.PodDeleteStatusTypeOkay, false},
		{"capi skip", withLabel(testPod("p", "n1"), LabelCAPIDrain, "skip"), false, false, kubectldrain.PodDeleteStatusTypeWarning, false},
		{"capi skip, completed", phase(withLabel(testPod("p", "n1"), LabelCAPIDrain, "skip"), corev1.PodSucceeded), false, false, kubectldrain.PodDeleteStatusTypeWarning, false},
		{"capi wait-completed, running", withLabel(testPod("p", "n1"), LabelCAPIDrain, "wait-completed"), false, false, kubectldrain.PodDeleteStatusTypeWarning, false},
		{"capi wait-completed, completed", phase(withLabel(testPod("p", "n1"), LabelCAPIDrain, "wait-completed"), corev1.PodFailed), false, false, kubectldrain.PodDeleteStatusTypeSkip, false},
		{"capi other value", withLabel(testPod("p", "n1"), LabelCAPIDrain, "whatever"), false, true, kubectldrain.PodDeleteStatusTypeOkay, false},
		{"karpenter do-not-disrupt", withAnnotation(testPod("p", "n1"), AnnotationDoNotDisrupt, "true"), false, false, kubectldrain.PodDeleteStatusTypeSkip, true},
		{"karpenter do-not-disrupt ignored", withAnnotation(testPod("p", "n1"), AnnotationDoNotDisrupt, "true"), true, true, kubectldrain.PodDeleteStatusTypeOkay, false},
		{"karpenter do-not-disrupt false", withAnnotation(testPod("p", "n1"), AnnotationDoNotDisrupt, "false"), false, true, kubectldrain.PodDeleteStatusTypeOkay, false},
		{"karpenter do-not-disrupt, completed", phase(withAnnotation(testPod("p", "n1"), AnnotationDoNotDisrupt, "true"), corev1.PodSucceeded), false, true, kubectldrain.PodDeleteStatusTypeOkay, false},
		// Cluster API reads its label case-insensitively, waitcompleted too.
		{"capi Skip", withLabel(testPod("p", "n1"), LabelCAPIDrain, "Skip"), false, false, kubectldrain.PodDeleteStatusTypeWarning, false},
		{"capi SKIP", withLabel(testPod("p", "n1"), LabelCAPIDrain, "SKIP"), false, false, kubectldrain.PodDeleteStatusTypeWarning, false},
		{"capi WaitCompleted, running", withLabel(testPod("p", "n1"), LabelCAPIDrain, "WaitCompleted"), false, false, kubectldrain.PodDeleteStatusTypeWarning, false},
		{"capi waitcompleted, running", withLabel(testPod("p", "n1"), LabelCAPIDrain, "waitcompleted"), false, false, kubectldrain.PodDeleteStatusTypeWarning, false},
		{"capi Wait-Completed, completed", phase(withLabel(testPod("p", "n1"), LabelCAPIDrain, "Wait-Completed"), corev1.PodSucceeded), false, false, kubectldrain.PodDeleteStatusTypeSkip, false},
		// Karpenter's durations count from the pod's start (10 s before the clock here).
		{"karpenter do-not-disrupt 1h, started 10s ago", started(withAnnotation(testPod("p", "n1"), AnnotationDoNotDisrupt, "1h")), false, false, kubectldrain.PodDeleteStatusTypeSkip, true},
		{"karpenter do-not-disrupt 5s, started 10s ago", started(withAnnotation(testPod("p", "n1"), AnnotationDoNotDisrupt, "5s")), false, true, kubectldrain.PodDeleteStatusTypeOkay, false},
		{"karpenter do-not-disrupt not a duration", started(withAnnotation(testPod("p", "n1"), AnnotationDoNotDisrupt, "soon")), false, true, kubectldrain.PodDeleteStatusTypeOkay, false},
		{"karpenter do-not-disrupt 1h ignored", started(withAnnotation(testPod("p", "n1"), AnnotationDoNotDisrupt, "1h")), true, true, kubectldrain.PodDeleteStatusTypeOkay, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := &Engine{cfg: Config{Settings: Settings{IgnoreDoNotDisrupt: c.ignore}, Clock: clocktesting.NewFakeClock(ruleNow)}}
			sink := &ruleSink{}
			st := e.ruleFilter(sink)(*c.pod)
			if st.Delete != c.delete || st.Reason != c.reason {
				t.Errorf("status = %+v, want delete %v reason %s", st, c.delete, c.reason)
			}
			if got := len(sink.doNotDisrupt) == 1; got != c.sunk {
				t.Errorf("recorded as do-not-disrupt: %v, want %v", got, c.sunk)
			}
		})
	}
}

// onlyNodePods makes the fake clientset honour the spec.nodeName field selector of pod
// lists (kubectl's GetPodsForDeletion), as the API server does.
func onlyNodePods(c *fake.Clientset) {
	c.PrependReactor("list", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		la := a.(k8stesting.ListAction)
		node, ok := la.GetListRestrictions().Fields.RequiresExactMatch("spec.nodeName")
		if !ok {
			return false, nil, nil
		}
		obj, err := c.Tracker().List(corev1.SchemeGroupVersion.WithResource("pods"), corev1.SchemeGroupVersion.WithKind("Pod"), la.GetNamespace())
		if err != nil {
			return true, nil, err
		}
		list := obj.(*corev1.PodList)
		sel := la.GetListRestrictions().Labels
		if sel == nil {
			sel = labels.Everything()
		}
		var keep []corev1.Pod
		for _, p := range list.Items {
			if p.Spec.NodeName == node && sel.Matches(labels.Set(p.Labels)) {
				keep = append(keep, p)
			}
		}
		list.Items = keep
		return true, list, nil
	})
}

func blockedWith(g *rig, reason string, step time.Duration) event.Event {
	g.t.Helper()
	for {
		if ev := g.next(event.EventEvictionBlocked, step); ev.Reason == reason {
			return ev
		}
	}
}

// A wait-completed pod is never evicted; the node is drained once it has completed.
func TestWaitCompletedPodHoldsTheNodeUntilItCompletes(t *testing.T) {
	job := withLabel(podOn("job", "n1", "u-job"), LabelCAPIDrain, CAPIDrainWaitCompleted)
	job.Labels["app"] = "job"
	skip := withLabel(podOn("keep", "n1", "u-keep"), LabelCAPIDrain, CAPIDrainSkip)
	skip.Labels["app"] = "keep"
	g := newRig(t, Config{}, testNode("n1"), podOn("p1", "n1", "u1"), job, skip)
	onlyNodePods(g.client)
	g.start("n1")
	var warned []string
	for {
		ev := g.next(event.EventWarning, 0)
		warned = append(warned, ev.Message)
		if strings.Contains(strings.Join(warned, "\n"), "wait-completed") && strings.Contains(strings.Join(warned, "\n"), "=skip") {
			break
		}
	}
	held := blockedWith(g, ReasonWaitCompleted, 0)
	if held.Pod != "ns/job" || !strings.Contains(held.Cause, "wait-completed") || held.Remedy == "" {
		t.Errorf("held = %+v", held)
	}
	done := job.DeepCopy()
	done.Status.Phase = corev1.PodSucceeded
	if _, err := g.client.CoreV1().Pods("ns").UpdateStatus(context.Background(), done, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	g.next(event.EventNodeDrained, 0)
	res := g.finish()
	if res.err != nil || res.sum.PodsEvicted != 1 {
		t.Fatalf("Run = %+v, %v; want p1 evicted only", res.sum, res.err)
	}
	for _, name := range []string{"job", "keep"} {
		if _, err := g.client.CoreV1().Pods("ns").Get(context.Background(), name, metav1.GetOptions{}); err != nil {
			t.Errorf("pod %s: %v (never evicted)", name, err)
		}
	}
}

// A do-not-disrupt pod blocks its node, is said again every wait interval, and goes once
// its annotation is removed.
func TestDoNotDisruptBlocksTheNodeUntilTheAnnotationGoes(t *testing.T) {
	dnd := withAnnotation(podOn("dnd", "n1", "u-dnd"), AnnotationDoNotDisrupt, "true")
	g := newRig(t, Config{}, testNode("n1"), dnd)
	onlyNodePods(g.client)
	g.start("n1")
	plan := g.next(event.EventPlan, 0)
	if bs := plan.Plan.Blocked(); len(bs) != 1 || bs[0].Pod != "ns/dnd" || !strings.Contains(bs[0].Remedy, "--ignore-do-not-disrupt") {
		t.Fatalf("plan blockers = %+v", bs)
	}
	first := blockedWith(g, ReasonDoNotDisrupt, 0)
	if !strings.Contains(first.Cause, AnnotationDoNotDisrupt) || first.Waited != 0 {
		t.Errorf("first = %+v", first)
	}
	again := blockedWith(g, ReasonDoNotDisrupt, time.Second)
	if again.Waited < DefaultWaitInterval {
		t.Errorf("said again after %s, want at least %s", again.Waited, DefaultWaitInterval)
	}
	if g.evictions.Load() != 0 {
		t.Fatal("a do-not-disrupt pod was evicted")
	}
	free := dnd.DeepCopy()
	delete(free.Annotations, AnnotationDoNotDisrupt)
	if _, err := g.client.CoreV1().Pods("ns").Update(context.Background(), free, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	g.next(event.EventNodeDrained, 0)
	if res := g.finish(); res.err != nil || res.sum.PodsEvicted != 1 {
		t.Fatalf("Run = %+v, %v", res.sum, res.err)
	}
}

// With IgnoreDoNotDisrupt the annotation is not a blocker.
func TestIgnoreDoNotDisrupt(t *testing.T) {
	dnd := withAnnotation(podOn("dnd", "n1", "u-dnd"), AnnotationDoNotDisrupt, "true")
	g := newRig(t, Config{Settings: Settings{IgnoreDoNotDisrupt: true}}, testNode("n1"), dnd)
	onlyNodePods(g.client)
	g.start("n1")
	if plan := g.next(event.EventPlan, 0); len(plan.Plan.Blocked()) != 0 {
		t.Fatalf("plan blockers = %+v", plan.Plan.Blocked())
	}
	g.next(event.EventNodeDrained, 0)
	if res := g.finish(); res.err != nil || res.sum.PodsEvicted != 1 {
		t.Fatalf("Run = %+v, %v", res.sum, res.err)
	}
}

// An extra filter that lets a pod through keeps kubectl's warning for a pod without a
// controller deleted under --force (kubectl keeps only the last filter's status).
func TestKeepWarnings(t *testing.T) {
	okay := func(corev1.Pod) kubectldrain.PodDeleteStatus { return kubectldrain.MakePodDeleteStatusOkay() }
	skip := func(corev1.Pod) kubectldrain.PodDeleteStatus { return kubectldrain.MakePodDeleteStatusSkip() }
	bare := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "bare"}}
	owned := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "owned", OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "rs", Controller: ptr.To(true)}}}}
	done := bare
	done.Status.Phase = corev1.PodSucceeded
	tests := []struct {
		name    string
		filters []kubectldrain.PodFilter
		pod     corev1.Pod
		want    kubectldrain.PodDeleteStatus
	}{
		{"bare pod let through keeps the warning", []kubectldrain.PodFilter{okay, okay}, bare, kubectldrain.MakePodDeleteStatusWithWarning(true, unmanagedWarning)},
		{"owned pod let through", []kubectldrain.PodFilter{okay}, owned, kubectldrain.MakePodDeleteStatusOkay()},
		{"finished bare pod", []kubectldrain.PodFilter{okay}, done, kubectldrain.MakePodDeleteStatusOkay()},
		{"a filter skips", []kubectldrain.PodFilter{okay, skip}, bare, kubectldrain.MakePodDeleteStatusSkip()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := keepWarnings(tc.filters)(tc.pod); got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestSplitWarnings(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string
	}{
		{"none", "", nil},
		{"one kind", "ignoring DaemonSet-managed Pods: ns/a, ns/b", []string{"ignoring DaemonSet-managed Pods: ns/a, ns/b"}},
		// kubectl joins its kinds in map order: either order gives the same lines.
		{"two kinds", "ignoring DaemonSet-managed Pods: ns/a; deleting Pods that declare no controller: ns/b",
			[]string{"deleting Pods that declare no controller: ns/b", "ignoring DaemonSet-managed Pods: ns/a"}},
		{"a message holding \"; \" stays whole", "keep this; and that: ns/c; ignoring DaemonSet-managed Pods: ns/a",
			[]string{"ignoring DaemonSet-managed Pods: ns/a", "keep this; and that: ns/c"}},
		{"two kinds, other order", "deleting Pods that declare no controller: ns/b; ignoring DaemonSet-managed Pods: ns/a",
			[]string{"deleting Pods that declare no controller: ns/b", "ignoring DaemonSet-managed Pods: ns/a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := splitWarnings(tc.in)
			if strings.Join(got, "|") != strings.Join(tc.want, "|") || len(got) != len(tc.want) {
				t.Errorf("splitWarnings(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

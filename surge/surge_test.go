package surge

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/kubectl-maintenance/kubectl-maintenance/internal/kubefake"
)

func budget(minAvailable, maxUnavailable *intstr.IntOrString, current, desired, expected int32) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: minAvailable, MaxUnavailable: maxUnavailable},
		Status:     policyv1.PodDisruptionBudgetStatus{CurrentHealthy: current, DesiredHealthy: desired, ExpectedPods: expected},
	}
}

func num(i int32) *intstr.IntOrString  { v := intstr.FromInt32(i); return &v }
func pct(s string) *intstr.IntOrString { v := intstr.FromString(s); return &v }

func TestHelps(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    *policyv1.PodDisruptionBudget
		want bool
		why  string
	}{
		{"minAvailable 1 on one replica", budget(num(1), nil, 1, 1, 1), true, ""},
		{"minAvailable 50% on one replica", budget(pct("50%"), nil, 1, 1, 1), true, ""},
		{"maxUnavailable 0", budget(nil, num(0), 1, 1, 1), false, "maxUnavailable 0: desiredHealthy is expectedPods - 0"},
		{"maxUnavailable 0%", budget(nil, pct("0%"), 1, 1, 1), false, "maxUnavailable 0%"},
		{"minAvailable 100%", budget(pct("100%"), nil, 1, 1, 1), false, "minAvailable 100%"},
		{"minAvailable 2 on one replica", budget(num(2), nil, 1, 2, 1), false, "would need 2 healthy pods with one more replica and have 2"},
		{"minAvailable 1, the pod not Ready", budget(num(1), nil, 0, 1, 1), false, "would need 1 healthy pods with one more replica and have 1"},
		{"neither", budget(nil, nil, 1, 0, 1), false, "sets neither"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, why := Helps(tc.b)
			if got != tc.want || !strings.Contains(why, tc.why) {
				t.Errorf("Helps = %v, %q; want %v, containing %q", got, why, tc.want, tc.why)
			}
			if !got && !strings.Contains(why, "relax the budget") && !strings.Contains(why, "sets neither") {
				t.Errorf("refusal %q gives no remedy", why)
			}
		})
	}
}

// objects builds a Deployment "web" of replicas, its ReplicaSet and its pod "web-1" on
// node n1, plus extra objects.
func objects(replicas int32, annotations map[string]string, extra ...runtime.Object) (*corev1.Pod, []runtime.Object) {
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "d-uid", Annotations: annotations},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
	}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web-rs", Namespace: "ns", UID: "rs-uid",
		OwnerReferences: []metav1.OwnerReference{{Kind: "Deployment", Name: "web", UID: "d-uid", Controller: ptr.To(true)}}}}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "ns", UID: "pod-uid", Labels: map[string]string{"app": "web"},
			OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "web-rs", UID: "rs-uid", Controller: ptr.To(true)}}},
		Spec: corev1.PodSpec{NodeName: "n1"},
	}
	return pod, append([]runtime.Object{d, rs, pod}, extra...)
}

func hpa(kind, name string) *autoscalingv2.HorizontalPodAutoscaler {
	return &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "auto", Namespace: "ns"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MaxReplicas: 3,
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: kind, Name: name}},
	}
}

func TestCheck(t *testing.T) {
	minOne := budget(num(1), nil, 1, 1, 1)
	for _, tc := range []struct {
		name     string
		replicas int32
		ann      map[string]string
		extra    []runtime.Object
		b        *policyv1.PodDisruptionBudget
		owner    *metav1.OwnerReference // replaces the pod's owner
		refused  string                 // "" = surgeable
		resumed  bool
	}{
		{name: "one replica under minAvailable 1", replicas: 1, b: minOne},
		{name: "an HPA targets it", replicas: 1, b: minOne, extra: []runtime.Object{hpa("Deployment", "web")},
			refused: "deployment ns/web is scaled by HorizontalPodAutoscaler ns/auto"},
		{name: "an HPA targets another deployment", replicas: 1, b: minOne, extra: []runtime.Object{hpa("Deployment", "other")}},
		{name: "maxUnavailable 0", replicas: 1, b: budget(nil, num(0), 1, 1, 1), refused: "maxUnavailable 0"},
		{name: "two replicas", replicas: 2, b: minOne, refused: "has 2 replicas"},
		{name: "a StatefulSet's pod", replicas: 1, b: minOne,
			owner:   &metav1.OwnerReference{Kind: "StatefulSet", Name: "db", Controller: ptr.To(true)},
			refused: "StatefulSet ns/db, and StatefulSets are never surged"},
		{name: "no controller", replicas: 1, b: minOne, owner: &metav1.OwnerReference{}, refused: "has no controller"},
		{name: "resumed: surged for this pod", replicas: 2, b: budget(num(1), nil, 2, 1, 2), resumed: true,
			ann: map[string]string{Annotation: `{"replicas":1,"pod":"web-1","podUID":"pod-uid","node":"n1"}`}},
		{name: "surged for another pod", replicas: 2, b: minOne,
			ann:     map[string]string{Annotation: `{"replicas":1,"pod":"web-0","podUID":"other","node":"n0"}`},
			refused: "already surged for pod ns/web-0 on node n0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod, objs := objects(tc.replicas, tc.ann, tc.extra...)
			if tc.owner != nil {
				pod.OwnerReferences = nil
				if tc.owner.Kind != "" {
					pod.OwnerReferences = []metav1.OwnerReference{*tc.owner}
				}
			}
			c := kubefake.New(objs...)
			got, err := New(c).Check(context.Background(), pod, tc.b)
			var refused *RefusedError
			switch {
			case tc.refused != "":
				if !errors.As(err, &refused) || !strings.Contains(err.Error(), tc.refused) {
					t.Fatalf("Check = %v, want a refusal containing %q", err, tc.refused)
				}
				if strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "pod ns/web-1 cannot be surged: ") {
					t.Errorf("refusal %q is not one line naming the pod", err)
				}
			case err != nil:
				t.Fatalf("Check: %v", err)
			default:
				if got.Key() != "ns/web" || got.Replicas != 1 || got.Node != "n1" || got.PodUID != "pod-uid" || got.Resumed != tc.resumed {
					t.Errorf("Check = %+v", got)
				}
			}
			for _, a := range c.Actions() {
				if a.GetVerb() != "get" && a.GetVerb() != "list" {
					t.Errorf("Check changed something: %s %s", a.GetVerb(), a.GetResource().Resource)
				}
			}
		})
	}
}

func deployment(t *testing.T, c *fake.Clientset) *appsv1.Deployment {
	t.Helper()
	d, err := c.AppsV1().Deployments("ns").Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestStartRestoreAndPending(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		// meanwhile runs between Start and Restore.
		meanwhile func(t *testing.T, c *fake.Clientset)
		want      Restored
		replicas  int32
	}{
		{name: "restored", want: Restored{Replicas: 1, Surged: 2}, replicas: 1},
		{name: "started twice (a re-run)", meanwhile: func(t *testing.T, c *fake.Clientset) {
			pod, _ := objects(1, nil)
			tg, err := New(c).Check(ctx, pod, budget(num(1), nil, 2, 1, 2))
			if err != nil || !tg.Resumed {
				t.Fatalf("Check after Start = %+v, %v; want a resumed target", tg, err)
			}
			if n, err := New(c).Start(ctx, tg, now); err != nil || n != 2 {
				t.Fatalf("second Start = %d, %v; want 2 and no change", n, err)
			}
		}, want: Restored{Replicas: 1, Surged: 2}, replicas: 1},
		{name: "scaled by someone meanwhile", meanwhile: func(t *testing.T, c *fake.Clientset) {
			d := deployment(t, c)
			d.Spec.Replicas = ptr.To[int32](5)
			if _, err := c.AppsV1().Deployments("ns").Update(ctx, d, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}, want: Restored{Replicas: 5, Surged: 5, Changed: true}, replicas: 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod, objs := objects(1, nil)
			c := kubefake.New(objs...)
			s := New(c)
			tg, err := s.Check(ctx, pod, budget(num(1), nil, 1, 1, 1))
			if err != nil {
				t.Fatal(err)
			}
			n, err := s.Start(ctx, tg, now)
			if err != nil || n != 2 {
				t.Fatalf("Start = %d, %v; want 2", n, err)
			}
			d := deployment(t, c)
			if *d.Spec.Replicas != 2 || d.Labels[LabelSurged] != "true" ||
				d.Annotations[Annotation] != `{"replicas":1,"pod":"web-1","podUID":"pod-uid","node":"n1","since":"2026-11-25T09:00:00Z"}` {
				t.Fatalf("after Start: replicas %d, labels %v, annotations %v", *d.Spec.Replicas, d.Labels, d.Annotations)
			}
			if got, err := s.Pending(ctx, []string{"n1"}); err != nil || len(got) != 1 || got[0].Key() != "ns/web" || got[0].Replicas != 1 || got[0].Pod != "ns/web-1" {
				t.Errorf("Pending(n1) = %v, %v; want ns/web", got, err)
			}
			if got, _ := s.Pending(ctx, []string{"n2"}); len(got) != 0 {
				t.Errorf("Pending(n2) = %v, want none", got)
			}
			if tc.meanwhile != nil {
				tc.meanwhile(t, c)
			}
			res, err := s.Restore(ctx, "ns", "web")
			if err != nil || res != tc.want {
				t.Fatalf("Restore = %+v, %v; want %+v", res, err, tc.want)
			}
			d = deployment(t, c)
			_, ann := d.Annotations[Annotation]
			_, lab := d.Labels[LabelSurged]
			if *d.Spec.Replicas != tc.replicas || ann || lab {
				t.Errorf("after Restore: replicas %d (want %d), annotation %v, label %v", *d.Spec.Replicas, tc.replicas, ann, lab)
			}
			if res, err := s.Restore(ctx, "ns", "web"); err != nil || !res.Already {
				t.Errorf("second Restore = %+v, %v; want Already", res, err)
			}
			for _, a := range c.Actions() {
				if a.GetResource().Resource == "pods" && a.GetVerb() != "get" && a.GetVerb() != "list" {
					t.Errorf("a pod was touched: %s", a.GetVerb())
				}
			}
		})
	}
}

func TestSurgeReady(t *testing.T) {
	tg := &Target{PodUID: "old", Node: "n1"}
	ready := []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	now := metav1.Now()
	for _, tc := range []struct {
		name string
		pod  corev1.Pod
		want bool
	}{
		{"Ready elsewhere", corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "new"}, Spec: corev1.PodSpec{NodeName: "n2"}, Status: corev1.PodStatus{Conditions: ready}}, true},
		{"the old pod", corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "old"}, Spec: corev1.PodSpec{NodeName: "n2"}, Status: corev1.PodStatus{Conditions: ready}}, false},
		{"on the drained node", corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "new"}, Spec: corev1.PodSpec{NodeName: "n1"}, Status: corev1.PodStatus{Conditions: ready}}, false},
		{"not scheduled", corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "new"}, Status: corev1.PodStatus{Conditions: ready}}, false},
		{"terminating", corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "new", DeletionTimestamp: &now}, Spec: corev1.PodSpec{NodeName: "n2"}, Status: corev1.PodStatus{Conditions: ready}}, false},
		{"not Ready", corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "new"}, Spec: corev1.PodSpec{NodeName: "n2"}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := surgeReady(&tc.pod, tg); got != tc.want {
				t.Errorf("surgeReady = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestUnwindEvictsOnlyTheReadySurplus(t *testing.T) {
	ctx := context.Background()
	ready := []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	pod := func(name, uid string, minute int, isReady bool) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID(uid), Labels: map[string]string{"app": "web"},
			CreationTimestamp: metav1.NewTime(time.Date(2026, 11, 25, 9, minute, 0, 0, time.UTC)),
			OwnerReferences:   []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "web-rs", UID: "rs-uid", Controller: ptr.To(true)}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning}}
		if isReady {
			p.Status.Conditions = ready
		}
		return p
	}
	rec := map[string]string{Annotation: `{"replicas":1,"pod":"web-1","podUID":"pod-uid","node":"n1"}`}
	for _, tc := range []struct {
		name        string
		pods        []runtime.Object
		refuse      bool
		refuseFirst int // refused this many times, then accepted
		evicted     []string
		want        int32 // replicas after
	}{
		{name: "the moved pod and a Ready surge pod: the surge pod is evicted",
			pods: []runtime.Object{pod("web-2", "s", 2, true)}, evicted: []string{"ns/web-2"}, want: 1},
		{name: "the surge pod not Ready yet: nothing evicted (the ReplicaSet removes it)",
			pods: []runtime.Object{pod("web-2", "s", 2, false)}, want: 1},
		{name: "the moved pod gone, two Ready: the newest is evicted",
			pods: []runtime.Object{pod("web-2", "s", 2, true), pod("web-3", "r", 3, true)}, evicted: []string{"ns/web-3"}, want: 1},
		{name: "the eviction refused throughout the patience: nothing restored",
			pods: []runtime.Object{pod("web-2", "s", 2, true)}, refuse: true, want: 2},
		{name: "refused while the budget's status lags, then accepted: restored",
			pods: []runtime.Object{pod("web-2", "s", 2, true)}, refuseFirst: 3, evicted: []string{"ns/web-2"}, want: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, objs := objects(2, rec)
			if strings.Contains(tc.name, "moved pod gone") {
				objs = objs[:2] // no web-1
			} else {
				objs[2].(*corev1.Pod).Status = corev1.PodStatus{Phase: corev1.PodRunning, Conditions: ready}
				objs[2].(*corev1.Pod).CreationTimestamp = metav1.NewTime(time.Date(2026, 11, 25, 9, 1, 0, 0, time.UTC))
			}
			c := kubefake.New(append(objs, tc.pods...)...)
			var asked []string
			c.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
				if a.GetSubresource() != "eviction" {
					return false, nil, nil
				}
				ev := a.(k8stesting.CreateAction).GetObject().(*policyv1.Eviction)
				asked = append(asked, ev.Namespace+"/"+ev.Name)
				if tc.refuse || len(asked) <= tc.refuseFirst {
					return true, nil, apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
				}
				return true, nil, c.Tracker().Delete(corev1.SchemeGroupVersion.WithResource("pods"), ev.Namespace, ev.Name)
			})
			clk := testingclock.NewFakeClock(time.Date(2026, 11, 25, 9, 5, 0, 0, time.UTC))
			stop := make(chan struct{})
			stepped := make(chan struct{})
			go func() { // a second passes each time the unwind waits
				defer close(stepped)
				for {
					select {
					case <-stop:
						return
					case <-time.After(time.Millisecond):
						if clk.HasWaiters() {
							clk.Step(time.Second)
						}
					}
				}
			}()
			res, evicted, err := New(c).WithClock(clk).Unwind(ctx, "ns", "web")
			close(stop)
			<-stepped
			if tc.refuse != (err != nil) {
				t.Fatalf("Unwind error %v, want an error: %v", err, tc.refuse)
			}
			if strings.Join(evicted, ",") != strings.Join(tc.evicted, ",") {
				t.Errorf("evicted %v, want %v (asked %v)", evicted, tc.evicted, asked)
			}
			d := deployment(t, c)
			if *d.Spec.Replicas != tc.want || (tc.refuse != (d.Annotations[Annotation] != "")) {
				t.Errorf("after Unwind: replicas %d (want %d), annotation %q", *d.Spec.Replicas, tc.want, d.Annotations[Annotation])
			}
			if !tc.refuse && res.Replicas != 1 {
				t.Errorf("Unwind = %+v, want restored to 1", res)
			}
		})
	}
}

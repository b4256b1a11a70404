package operation

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	"github.com/kubectl-maintenance/kubectl-maintenance/access"
	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/internal/kubefake"
)

// errNoWhoAmI is a server without SelfSubjectReview: the user comes from Operator.User.
var errNoWhoAmI = errors.New("the server could not find the requested resource")

// reviews answers the SelfSubjectAccessReviews of cs: allowed unless deny lists
// "verb resource/subresource namespace"; evictNS, when set, collects the namespaces
// asked about evictions. No SelfSubjectReview is served.
func reviews(cs *fake.Clientset, deny []string, evictNS *[]string) {
	cs.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		r := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectAccessReview).DeepCopy()
		ra := r.Spec.ResourceAttributes
		if ra.Subresource == "eviction" && evictNS != nil {
			*evictNS = append(*evictNS, ra.Namespace)
		}
		r.Status.Allowed = !slices.Contains(deny, ra.Verb+" "+ra.Resource+"/"+ra.Subresource+" "+ra.Namespace)
		return true, r, nil
	})
	cs.PrependReactor("create", "selfsubjectreviews", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errNoWhoAmI
	})
}

func TestPreflight(t *testing.T) {
	pod := func(ns, name string, labels map[string]string, mutate func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}, Spec: corev1.PodSpec{NodeName: "n1"}}
		if mutate != nil {
			mutate(p)
		}
		return p
	}
	daemon := func(p *corev1.Pod) {
		p.OwnerReferences = []metav1.OwnerReference{{Kind: "DaemonSet", Name: "ds", Controller: ptr.To(true)}}
	}
	mirror := func(p *corev1.Pod) { p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "x"} }
	objects := []runtime.Object{
		pod("shop", "web-1", map[string]string{"app": "web"}, nil),
		pod("batch", "job-1", map[string]string{"app": "job"}, nil),
		pod("kube-system", "proxy", nil, daemon),
		pod("kube-system", "static", nil, mirror),
	}
	drainReq := func(dry drain.DryRun, podSelector string) Request {
		return Request{Action: Drain, Drain: drain.Settings{DryRun: dry, PodSelector: podSelector}}
	}
	clearHolds := func(dry drain.DryRun) Request {
		r := drainReq(dry, "")
		r.Drain.ClearHolds = true
		return r
	}
	tests := []struct {
		name        string
		req         Request
		deny        []string // "verb resource/subresource namespace" of the denied reviews
		want        string
		wantEvictNS []string
		extraLists  int // pod lists of an opt-in's per-namespace checks
	}{
		{name: "drain asks to evict in the namespaces of evictable pods only", req: drainReq(drain.DryRunNone, ""),
			deny: []string{"create pods/eviction "}, wantEvictNS: []string{"", "batch", "shop"}},
		{name: "evictions allowed in every namespace need no look at the pods", req: drainReq(drain.DryRunNone, ""),
			wantEvictNS: []string{""}},
		{name: "a pod selector narrows the namespaces", req: drainReq(drain.DryRunNone, "app=web"),
			deny: []string{"create pods/eviction "}, wantEvictNS: []string{"", "shop"}},
		{name: "a missing eviction permission is one line naming it", req: drainReq(drain.DryRunNone, ""),
			deny: []string{"create pods/eviction ", "create pods/eviction shop"}, want: `cannot create pods/eviction in namespace "shop" (user "jane")`,
			wantEvictNS: []string{"", "batch", "shop"}},
		{name: "a client dry run asks nothing about writes", req: drainReq(drain.DryRunClient, ""),
			deny: []string{"patch nodes/ "}},
		{name: "cordon needs patch nodes", req: Request{Action: Cordon, Drain: drain.Settings{DryRun: drain.DryRunNone}},
			deny: []string{"patch nodes/ "}, want: `cannot patch nodes (user "jane")`},
		{name: "uncordon needs patch nodes", req: Request{Action: Uncordon, Drain: drain.Settings{DryRun: drain.DryRunNone}},
			deny: []string{"patch nodes/ "}, want: `cannot patch nodes (user "jane")`},
		{name: "--clear-disruption-holds needs to update budgets' status", req: clearHolds(drain.DryRunNone),
			deny: []string{"update poddisruptionbudgets/status ", "update poddisruptionbudgets/status shop"}, extraLists: 1,
			want: `cannot update poddisruptionbudgets.policy/status in namespace "shop" (user "jane")`, wantEvictNS: []string{""}},
		{name: "--clear-disruption-holds in the namespaces of the pods is enough", req: clearHolds(drain.DryRunNone),
			deny: []string{"update poddisruptionbudgets/status "}, extraLists: 1, wantEvictNS: []string{""}},
		{name: "a server dry run clears no hold and asks nothing about it", req: clearHolds(drain.DryRunServer),
			deny: []string{"update poddisruptionbudgets/status "}, wantEvictNS: []string{""}},
		{name: "a pool move needs to read NodePools", req: Request{Action: Move, Drain: drain.Settings{DryRun: drain.DryRunNone}},
			deny: []string{"get nodepools/ "}, want: `cannot get nodepools.maintenance.kubectl-maintenance.io (user "jane")`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cs := kubefake.New(objects...)
			var evictNS []string
			reviews(cs, tc.deny, &evictNS)
			o := &Operator{Kube: cs, User: "jane"}
			err := o.preflight(context.Background(), tc.req, []string{"n1"})
			var denied *access.Denied
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("preflight: %v, want allowed", err)
			case tc.want != "" && (err == nil || err.Error() != tc.want):
				t.Fatalf("preflight: %v, want %q", err, tc.want)
			case err != nil && !errors.As(err, &denied):
				t.Errorf("error %T, want *access.Denied", err)
			}
			lists := 0
			for _, a := range cs.Actions() {
				if a.GetVerb() == "list" && a.GetResource().Resource == "pods" {
					lists++
				}
			}
			if wantLists := max(min(len(tc.wantEvictNS)-1, 1), 0) + tc.extraLists; lists != wantLists {
				t.Errorf("listed pods %d times, want %d", lists, wantLists)
			}
			sort.Strings(evictNS) // the reviews run in parallel
			if strings.Join(evictNS, ",") != strings.Join(tc.wantEvictNS, ",") {
				t.Errorf("eviction checked in %v, want %v", evictNS, tc.wantEvictNS)
			}
		})
	}
}

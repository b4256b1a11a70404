package cli

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
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
)

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
	tests := []struct {
		name        string
		run         func(ctx context.Context, c *Common, cs kubernetes.Interface) error
		deny        []string // "verb resource/subresource namespace" of the denied reviews
		want        string
		wantEvictNS []string
	}{
		{name: "drain asks to evict in the namespaces of evictable pods only",
			run: func(ctx context.Context, c *Common, cs kubernetes.Interface) error {
				return (&DrainOptions{Common: c, DryRun: "none"}).preflight(ctx, cs, []string{"n1"})
			},
			deny: []string{"create pods/eviction "}, wantEvictNS: []string{"", "batch", "shop"}},
		{name: "evictions allowed in every namespace need no look at the pods",
			run: func(ctx context.Context, c *Common, cs kubernetes.Interface) error {
				return (&DrainOptions{Common: c, DryRun: "none"}).preflight(ctx, cs, []string{"n1"})
			},
			wantEvictNS: []string{""}},
		{name: "a pod selector narrows the namespaces",
			run: func(ctx context.Context, c *Common, cs kubernetes.Interface) error {
				return (&DrainOptions{Common: c, DryRun: "none", PodSelector: "app=web"}).preflight(ctx, cs, []string{"n1"})
			},
			deny: []string{"create pods/eviction "}, wantEvictNS: []string{"", "shop"}},
		{name: "a missing eviction permission is one line naming it",
			run: func(ctx context.Context, c *Common, cs kubernetes.Interface) error {
				return (&DrainOptions{Common: c, DryRun: "none"}).preflight(ctx, cs, []string{"n1"})
			},
			deny: []string{"create pods/eviction ", "create pods/eviction shop"}, want: `cannot create pods/eviction in namespace "shop" (user "jane")`,
			wantEvictNS: []string{"", "batch", "shop"}},
		{name: "a client dry run asks nothing about writes",
			run: func(ctx context.Context, c *Common, cs kubernetes.Interface) error {
				return (&DrainOptions{Common: c, DryRun: "client"}).preflight(ctx, cs, []string{"n1"})
			},
			deny: []string{"patch nodes/ "}},
		{name: "cordon needs patch nodes",
			run: func(ctx context.Context, c *Common, cs kubernetes.Interface) error {
				return (&CordonOptions{Common: c, DryRun: "none"}).preflight(ctx, cs)
			},
			deny: []string{"patch nodes/ "}, want: `cannot patch nodes (user "jane")`},
		{name: "a pool move needs to read NodePools",
			run: func(ctx context.Context, c *Common, cs kubernetes.Interface) error {
				o := &PoolMoveOptions{DrainOptions: DrainOptions{Common: c, DryRun: "none"}}
				return o.preflight(ctx, cs, []string{"n1"})
			},
			deny: []string{"get nodepools/ "}, want: `cannot get nodepools.maintenance.kubectl-maintenance.io (user "jane")`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cs := fake.NewClientset(objects...)
			var evictNS []string
			cs.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
				r := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectAccessReview).DeepCopy()
				ra := r.Spec.ResourceAttributes
				if ra.Subresource == "eviction" {
					evictNS = append(evictNS, ra.Namespace)
				}
				r.Status.Allowed = !slices.Contains(tc.deny, ra.Verb+" "+ra.Resource+"/"+ra.Subresource+" "+ra.Namespace)
				return true, r, nil
			})
			cs.PrependReactor("create", "selfsubjectreviews", func(k8stesting.Action) (bool, runtime.Object, error) {
				return true, nil, errNoWhoAmI
			})
			flags := genericclioptions.NewConfigFlags(false)
			flags.Username = ptr.To("jane")
			flags.APIServer = ptr.To("https://127.0.0.1:1")
			c := &Common{ConfigFlags: flags, IOStreams: genericiooptions.NewTestIOStreamsDiscard()}
			err := tc.run(context.Background(), c, cs)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("preflight: %v, want allowed", err)
			case tc.want != "" && (err == nil || err.Error() != tc.want):
				t.Fatalf("preflight: %v, want %q", err, tc.want)
			case err != nil && ExitCode(err) != ExitError:
				t.Errorf("exit code %d, want %d", ExitCode(err), ExitError)
			}
			lists := 0
			for _, a := range cs.Actions() {
				if a.GetVerb() == "list" && a.GetResource().Resource == "pods" {
					lists++
				}
			}
			if wantLists := min(len(tc.wantEvictNS)-1, 1); lists != max(wantLists, 0) {
				t.Errorf("listed pods %d times, want %d", lists, max(wantLists, 0))
			}
			sort.Strings(evictNS) // the reviews run in parallel
			if strings.Join(evictNS, ",") != strings.Join(tc.wantEvictNS, ",") {
				t.Errorf("eviction checked in %v, want %v", evictNS, tc.wantEvictNS)
			}
		})
	}
}

// errNoWhoAmI is a server without SelfSubjectReview: the user comes from the kubeconfig.
var errNoWhoAmI = errors.New("the server could not find the requested resource")

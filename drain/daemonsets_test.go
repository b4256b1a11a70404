package drain

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/internal/kubefake"
)

func daemonPod(name, node, ds string) *corev1.Pod {
	p := testPod(name, node)
	p.Labels = map[string]string{"app": ds}
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: ds, UID: "ds", Controller: ptr.To(true)}}
	return p
}

// kubectl's filters ask whether each DaemonSet pod's DaemonSet exists: one GET per pod.
// The plan answers from one list of the DaemonSets, asks the server only what the list
// does not hold (an orphan: kubectl's error, word for word), and falls back to kubectl's
// GETs when it may not list them; the plan is the same either way.
func TestDaemonSetsAreListedOnce(t *testing.T) {
	const nodes = 12
	for _, c := range []struct {
		name          string
		orphan        bool
		forbidList    bool
		lists, gets   int
		wantErrSubstr string
	}{
		{name: "every DaemonSet listed", lists: 1, gets: 0},
		{name: "an orphaned pod is asked of the server", orphan: true, lists: 1, gets: 1, wantErrSubstr: `daemonsets.apps "gone" not found`},
		{name: "no permission to list: kubectl's GETs", forbidList: true, lists: 1, gets: 2 * nodes},
	} {
		t.Run(c.name, func(t *testing.T) {
			objs := []runtime.Object{
				&appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "agent"}},
				&appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "proxy"}},
			}
			var names []string
			for i := range nodes {
				n := fmt.Sprintf("n%02d", i)
				names = append(names, n)
				objs = append(objs, testNode(n), daemonPod("agent-"+n, n, "agent"), daemonPod("proxy-"+n, n, "proxy"))
			}
			if c.orphan {
				objs = append(objs, daemonPod("gone-n00", "n00", "gone"))
			}
			client := kubefake.New(objs...)
			onlyNodePods(client)
			if c.forbidList {
				client.PrependReactor("list", "daemonsets", func(k8stesting.Action) (bool, runtime.Object, error) {
					return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "daemonsets"}, "", errors.New("no"))
				})
			}
			eng, err := NewEngine(Config{Client: client, Events: make(chan event.Event, 100), Settings: Settings{IgnoreDaemonSets: true}})
			if err != nil {
				t.Fatal(err)
			}
			plan, err := eng.Plan(context.Background(), names)
			if err != nil {
				t.Fatal(err)
			}
			lists, gets := 0, 0
			for _, a := range client.Actions() {
				if a.GetResource().Resource == "daemonsets" {
					switch a.GetVerb() {
					case "list":
						lists++
					case "get":
						gets++
					}
				}
			}
			if lists != c.lists || gets != c.gets {
				t.Errorf("%d lists and %d gets of daemonsets, want %d and %d", lists, gets, c.lists, c.gets)
			}
			for _, np := range plan.Nodes {
				warned := strings.Join(np.Warnings, "\n")
				if !strings.Contains(warned, "ignoring DaemonSet-managed Pods: ns/agent-"+np.Name+", ns/proxy-"+np.Name) {
					t.Errorf("node %s: warnings %q do not ignore its two DaemonSet pods", np.Name, warned)
				}
				errs := strings.Join(np.Errors, "\n")
				switch want := c.wantErrSubstr != "" && np.Name == "n00"; {
				case want && !strings.Contains(errs, c.wantErrSubstr):
					t.Errorf("node %s: errors %q, want one containing %q", np.Name, errs, c.wantErrSubstr)
				case !want && errs != "":
					t.Errorf("node %s: errors %q, want none", np.Name, errs)
				}
			}
		})
	}
}

// The list answers for dsListTTL; a DaemonSet deleted meanwhile is seen as kubectl would
// see it (NotFound) once the list is taken again.
func TestDaemonSetListIsTakenAgainOnceOld(t *testing.T) {
	ctx := context.Background()
	client := kubefake.New(&appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "agent"}})
	clk := testingclock.NewFakeClock(time.Unix(1_000_000, 0))
	ds := newDaemonSets(client, 500, clk)
	get := func() error {
		_, err := ds.client(client).AppsV1().DaemonSets("ns").Get(ctx, "agent", metav1.GetOptions{})
		return err
	}
	calls := func(verb string) int {
		n := 0
		for _, a := range client.Actions() {
			if a.GetResource().Resource == "daemonsets" && a.GetVerb() == verb {
				n++
			}
		}
		return n
	}
	for _, step := range []struct {
		name        string
		do          func()
		lists, gets int
		notFound    bool
	}{
		{name: "first question: one list", lists: 1},
		{name: "again: from the list", lists: 1},
		{name: "deleted, the list still young: from the list", do: func() {
			if err := client.AppsV1().DaemonSets("ns").Delete(ctx, "agent", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}, lists: 1},
		{name: "the list old: listed again, not there, asked: NotFound", do: func() { clk.Step(dsListTTL) }, lists: 2, gets: 1, notFound: true},
	} {
		if step.do != nil {
			step.do()
		}
		err := get()
		if apierrors.IsNotFound(err) != step.notFound || (!step.notFound && err != nil) {
			t.Errorf("%s: Get = %v, want NotFound %v", step.name, err, step.notFound)
		}
		if l, g := calls("list"), calls("get"); l != step.lists || g != step.gets {
			t.Errorf("%s: %d lists and %d gets so far, want %d and %d", step.name, l, g, step.lists, step.gets)
		}
	}
}

package backend

import (
	"context"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/internal/kubefake"
	"github.com/kubectl-maintenance/kubectl-maintenance/operation"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui/confirm"
)

// request is the front end's request as the commands build it for a cordon or an
// uncordon (cmd/cli's dashboardRequest): no dry run, the dialog's settings.
func request(action operation.Action, settings drain.Settings, nodes []string) operation.Request {
	settings.DryRun = drain.DryRunNone
	return operation.Request{Action: action, Nodes: nodes, Drain: settings}
}

func collect(t *testing.T, ch <-chan event.Event) []event.Type {
	t.Helper()
	var out []event.Type
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				return out
			}
			out = append(out, ev.Type)
		case <-timeout:
			t.Fatal("the action's events never ended")
		}
	}
}

func TestDashboardActionsEmitTheirOwnEvents(t *testing.T) {
	cordoned := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n2"}, Spec: corev1.NodeSpec{Unschedulable: true}}
	cs := kubefake.New(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, cordoned)
	allowAll(cs)
	b := New(context.Background(), Config{Kube: cs, Request: request})
	tests := []struct {
		name string
		req  confirm.Request
		want string
	}{
		{"a cordon emits node.cordoned, never node.drained", confirm.Request{Action: confirm.Cordon, Nodes: []string{"n1"}}, "node.cordoned"},
		{"an uncordon emits node.uncordoned, not a warning", confirm.Request{Action: confirm.Uncordon, Nodes: []string{"n2"}}, "node.uncordoned"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ch, cancel, err := b.Start(tc.req)
			if err != nil {
				t.Fatal(err)
			}
			defer cancel()
			var got []string
			for _, ty := range collect(t, ch) {
				got = append(got, string(ty))
			}
			if strings.Join(got, ",") != tc.want {
				t.Errorf("events = %v, want [%s]", got, tc.want)
			}
		})
	}
	b.Wait()
}

func TestDashboardRefusesABusyNodeAndCancelsOneActionOnly(t *testing.T) {
	release := make(chan struct{})
	// The get of n1 waits until its context ends or the test releases it, as a slow API
	// server would: the action on n1 is still running while the others start. (Not a
	// reactor: the fake clientset runs reactors under one lock.)
	cs := &slowClientset{Clientset: kubefake.New(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n2"}}), slow: "n1", release: release}
	allowAll(cs.Clientset)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	b := New(ctx, Config{Kube: cs, Request: request})
	first, cancelFirst, err := b.Start(confirm.Request{Action: confirm.Cordon, Nodes: []string{"n1"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.Start(confirm.Request{Action: confirm.Uncordon, Nodes: []string{"n1", "n2"}}); err == nil || !strings.Contains(err.Error(), "n1 already in a running action") {
		t.Fatalf("a second action on n1: err = %v, want it refused", err)
	}
	second, _, err := b.Start(confirm.Request{Action: confirm.Cordon, Nodes: []string{"n2"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := collect(t, second); len(got) != 1 || got[0] != event.EventNodeCordoned {
		t.Errorf("the action on n2 = %v, want node.cordoned", got)
	}
	cancelFirst()
	close(release)
	for _, ty := range collect(t, first) {
		if ty == event.EventNodeCordoned {
			t.Error("the cancelled cordon of n1 still cordoned it")
		}
	}
	b.Wait()
	if n, _ := cs.Clientset.CoreV1().Nodes().Get(context.Background(), "n1", metav1.GetOptions{}); n.Spec.Unschedulable {
		t.Error("n1 is cordoned after its action was cancelled")
	}
	if _, _, err := b.Start(confirm.Request{Action: confirm.Uncordon, Nodes: []string{"n1"}}); err != nil {
		t.Errorf("n1 is still busy after its action ended: %v", err)
	}
	b.Wait()
}

// allowAll answers every SelfSubjectAccessReview of cs with allowed (the operations
// layer's permission preflight).
func allowAll(cs *fake.Clientset) {
	cs.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		r := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectAccessReview).DeepCopy()
		r.Status.Allowed = true
		return true, r, nil
	})
}

type slowClientset struct {
	*fake.Clientset
	slow    string
	release chan struct{}
}

func (c *slowClientset) CoreV1() corev1client.CoreV1Interface {
	return slowCore{CoreV1Interface: c.Clientset.CoreV1(), c: c}
}

type slowCore struct {
	corev1client.CoreV1Interface
	c *slowClientset
}

func (s slowCore) Nodes() corev1client.NodeInterface {
	return slowNodes{NodeInterface: s.CoreV1Interface.Nodes(), c: s.c}
}

type slowNodes struct {
	corev1client.NodeInterface
	c *slowClientset
}

func (s slowNodes) Get(ctx context.Context, name string, o metav1.GetOptions) (*corev1.Node, error) {
	if name == s.c.slow {
		select {
		case <-s.c.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return s.NodeInterface.Get(ctx, name, o)
}

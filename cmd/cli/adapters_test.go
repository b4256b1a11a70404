package cli

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/kubectl-maintenance/kubectl-maintenance/dashboard/backend"
	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/internal/kubefake"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
	"github.com/kubectl-maintenance/kubectl-maintenance/operation"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui/confirm"
)

// adapterCluster is a fake cluster of node n1 (cordoned when cordoned) with one pod of a
// ReplicaSet, whose evictions delete the pod as the API server does when budgets allow,
// and every permission granted.
func adapterCluster(cordoned bool) *fake.Clientset {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Spec: corev1.NodeSpec{Unschedulable: cordoned},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "shop", UID: k8stypes.UID("uid-web-1"),
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", UID: "rs", Controller: ptr.To(true)}}},
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c", Image: "i"}}}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	cs := kubefake.New(n, p)
	allowAll(cs)
	cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "eviction" {
			return false, nil, nil
		}
		ev := a.(k8stesting.CreateAction).GetObject().(*policyv1.Eviction)
		return true, nil, cs.Tracker().Delete(corev1.SchemeGroupVersion.WithResource("pods"), ev.Namespace, ev.Name)
	})
	return cs
}

// calls renders the requests a run made to the cluster: verb, resource/subresource and
// name, in order (reads of the watch machinery, the best-effort Kubernetes Events and the
// Node conditions, both written asynchronously, left out: their number and place are
// timing).
func calls(cs *fake.Clientset) string {
	var out []string
	for _, a := range cs.Actions() {
		if a.GetVerb() == "watch" || (a.GetVerb() == "list" && a.GetResource().Resource != "nodes") || a.GetResource().Resource == "events" ||
			(a.GetResource().Resource == "nodes" && a.GetSubresource() == "status") {
			continue
		}
		// The run's watch of the nodes that carry a record (drain/leave.go) starts beside
		// the cordons, in no fixed order: left out, as the other watches are.
		if l, ok := a.(k8stesting.ListAction); ok && l.GetListRestrictions().Labels.String() == noderecord.LabelState {
			continue
		}
		name := ""
		if n, ok := a.(interface{ GetName() string }); ok {
			name = n.GetName()
		}
		out = append(out, fmt.Sprintf("%s %s/%s %s", a.GetVerb(), a.GetResource().Resource, a.GetSubresource(), name))
	}
	return strings.Join(out, "; ")
}

// runAdapted runs req on cs and returns the event types in order (pod.eviction_accepted
// left out: whether the engine's watch sees the pod gone first is timing).
func runAdapted(t *testing.T, cs *fake.Clientset, req operation.Request) string {
	t.Helper()
	op := &operation.Operator{Kube: cs, Logger: klog.Background()}
	events := make(chan event.Event, 1000)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := op.Run(ctx, req, events); err != nil {
		t.Fatalf("%s: %v", req.Action, err)
	}
	close(events)
	var out []string
	for ev := range events {
		if ev.Type != event.EventEvictionAccepted {
			out = append(out, string(ev.Type))
		}
	}
	return strings.Join(out, " ")
}

// Issue 20, test 1: the same request through the CLI's adapter (flags to a Request) and
// the dashboard's (a confirmed dialog to a Request) makes the same API calls and the
// same events.
func TestCLIAndDashboardAdaptersAgree(t *testing.T) {
	tests := []struct {
		name     string
		action   confirm.Action
		cordoned bool
	}{
		{"cordon", confirm.Cordon, false},
		{"uncordon", confirm.Uncordon, true},
		{"drain", confirm.Drain, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// The CLI: drain's flags, as a user would give them to match the dialog.
			d := NewDrainOptions(&Common{})
			d.Nodes.Names, d.Settings.IgnoreDaemonSets = []string{"n1"}, true
			cliReq := d.request(operation.Action(tc.action))
			if tc.action != confirm.Drain {
				cliReq = operation.Request{Action: operation.Action(tc.action), Nodes: []string{"n1"}, Drain: drain.Settings{DryRun: "none"}, Command: cliReq.Command}
			}
			// The dashboard: the dialog's defaults.
			b := backend.New(context.Background(), backend.Config{Request: dashboardRequest(&Common{})})
			dashReq := b.Request(confirm.Request{Action: tc.action, Nodes: []string{"n1"}, Options: confirm.DefaultOptions()})

			cliCS, dashCS := adapterCluster(tc.cordoned), adapterCluster(tc.cordoned)
			cliEvents, dashEvents := runAdapted(t, cliCS, cliReq), runAdapted(t, dashCS, dashReq)
			if cliEvents != dashEvents || cliEvents == "" {
				t.Errorf("events differ:\n cli       %s\n dashboard %s", cliEvents, dashEvents)
			}
			if c, d := calls(cliCS), calls(dashCS); c != d {
				t.Errorf("API calls differ:\n cli       %s\n dashboard %s", c, d)
			}
			if !strings.Contains(calls(dashCS), "create selfsubjectaccessreviews/") {
				t.Errorf("the dashboard's %s asked no permission first: %s", tc.name, calls(dashCS))
			}
		})
	}
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

package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	crfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kubectl-maintenance/kubectl-maintenance/dashboard/backend"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/operation"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui/confirm"
)

// Issue 20, test 1, for a move: pool move's flags and the dashboard's move dialog make
// the same request, planned once (the preflight included) and then carried out, with the
// same API calls and the same events.
func TestCLIAndDashboardAdaptersAgreeOnAMove(t *testing.T) {
	setup := func() (*fake.Clientset, *operation.Operator) {
		cs := adapterCluster(false)
		n, err := cs.CoreV1().Nodes().Get(context.Background(), "n1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n.Labels = map[string]string{nodepool.RoleLabel("blue"): ""}
		if err := cs.Tracker().Update(corev1.SchemeGroupVersion.WithResource("nodes"), n, ""); err != nil {
			t.Fatal(err)
		}
		cs.ClearActions()
		pools := crfake.NewClientBuilder().WithScheme(Scheme()).WithObjects(
			&v1alpha1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "blue"}, Spec: v1alpha1.NodePoolSpec{MaxUnavailable: ptr.To[int32](1)}},
			&v1alpha1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "green"}, Spec: v1alpha1.NodePoolSpec{MaxUnavailable: ptr.To[int32](1)}},
		).Build()
		return cs, &operation.Operator{Kube: cs, Pools: pools, Logger: klog.Background()}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// The CLI: pool move's flags, planned then run as PoolMoveOptions.Run does.
	cliCS, cliOp := setup()
	mo := &PoolMoveOptions{DrainOptions: NewDrainOptions(&Common{}), To: "green"}
	mo.Nodes.Names, mo.Settings.IgnoreDaemonSets = []string{"n1"}, true
	cliReq := mo.request(operation.Move)
	cliReq.To = mo.To
	plan, err := cliOp.Plan(ctx, cliReq)
	if err != nil {
		t.Fatalf("the CLI's plan: %v", err)
	}
	cliReq.Moves, cliReq.Resolved = plan.Move, plan.Resolved
	cliEvents := runMoveAdapted(t, ctx, cliOp, cliReq)

	// The dashboard: the move dialog's defaults, through the backend's own planning.
	dashCS, dashOp := setup()
	b := backend.New(ctx, backend.Config{Kube: dashOp.Kube, Pools: dashOp.Pools, Request: dashboardRequest(&Common{})})
	dialog := confirm.Request{Action: confirm.Move, Nodes: []string{"n1"}, Pool: "green", Options: confirm.DefaultOptions()}
	dashReq, err := b.Planned(ctx, dialog)
	if err != nil {
		t.Fatalf("the dashboard's plan: %v", err)
	}
	dashEvents := runMoveAdapted(t, ctx, dashOp, dashReq)

	t.Logf("events: %s", cliEvents)
	if cliEvents != dashEvents || !strings.Contains(cliEvents, "node.moved") {
		t.Errorf("events differ:\n cli       %s\n dashboard %s", cliEvents, dashEvents)
	}
	if c, d := calls(cliCS), calls(dashCS); c != d {
		t.Errorf("API calls differ:\n cli       %s\n dashboard %s", c, d)
	}
}

// runMoveAdapted runs a planned move and returns its event types in order.
func runMoveAdapted(t *testing.T, ctx context.Context, op *operation.Operator, req operation.Request) string {
	t.Helper()
	events := make(chan event.Event, 1000)
	if _, err := op.Run(ctx, req, events); err != nil {
		t.Fatalf("move: %v", err)
	}
	close(events)
	var out string
	for ev := range events {
		if ev.Type != event.EventEvictionAccepted {
			out += string(ev.Type) + " "
		}
	}
	return out
}

// Issue 32: the dashboard plans a move once. The dialog's plan (the move's changes, then
// its drain's pods from the same resolution) is what Start carries out: no node is read
// again between the dialog and the first cordon.
func TestDashboardCarriesTheDialogsMovePlan(t *testing.T) {
	cs := adapterCluster(false)
	pools := crfake.NewClientBuilder().WithScheme(Scheme()).WithObjects(
		&v1alpha1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "green"}, Spec: v1alpha1.NodePoolSpec{MaxUnavailable: ptr.To[int32](1)}},
	).Build()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b := backend.New(ctx, backend.Config{Kube: cs, Pools: pools, Request: dashboardRequest(&Common{})})
	dialog := confirm.Request{Action: confirm.Move, Nodes: []string{"n1"}, Pool: "green", Options: confirm.DefaultOptions()}
	other := dialog
	other.Options.GracePeriodSeconds = 5

	text, err := b.Plan(dialog)
	if err != nil {
		t.Fatalf("the dialog's plan: %v", err)
	}
	if !strings.Contains(text, "node/n1 -> green") {
		t.Errorf("the dialog's plan does not show the move:\n%s", text)
	}
	// One resolution (GET n1) for both plans, and the drain's plan's one LIST of every
	// node (where the pods may go).
	if g, l := nodeReads(cs); g != 1 || l != 1 {
		t.Errorf("the dialog's plan (the move's and its drain's): %d GETs and %d LISTs of nodes, want 1 and 1", g, l)
	}
	cs.ClearActions()
	for _, tc := range []struct {
		name      string
		req       confirm.Request
		wantReads int
	}{
		{"another request than the dialog showed is planned afresh", other, 1},
		{"the request the dialog showed runs its plan", dialog, 0},
		{"the plan is used once", dialog, 1},
	} {
		if tc.name == "the request the dialog showed runs its plan" {
			if _, err := b.Plan(dialog); err != nil {
				t.Fatal(err)
			}
		}
		cs.ClearActions()
		r, err := b.Planned(ctx, tc.req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if r.Moves == nil || r.Resolved == nil {
			t.Errorf("%s: the request carries no plan (Moves %v, Resolved %v)", tc.name, r.Moves != nil, r.Resolved != nil)
		}
		if g, l := nodeReads(cs); g+l != tc.wantReads {
			t.Errorf("%s: %d GETs and %d LISTs of nodes before the run, want %d reads", tc.name, g, l, tc.wantReads)
		}
	}
}

// nodeReads counts the GETs and the LISTs of nodes cs answered.
func nodeReads(cs *fake.Clientset) (gets, lists int) {
	for _, a := range cs.Actions() {
		if a.GetResource().Resource != "nodes" || a.GetSubresource() != "" {
			continue
		}
		switch a.GetVerb() {
		case "get":
			gets++
		case "list":
			lists++
		}
	}
	return gets, lists
}

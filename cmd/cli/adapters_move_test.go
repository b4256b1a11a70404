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
	cliReq.Moves = plan.Move
	cliEvents := runMoveAdapted(t, ctx, cliOp, cliReq)

	// The dashboard: the move dialog's defaults, through the backend's own planning.
	dashCS, dashOp := setup()
	b := &backend{c: &Common{}}
	dashReq, err := b.planned(ctx, dashOp, b.request(confirm.Request{Action: confirm.Move, Nodes: []string{"n1"}, Pool: "green", Options: confirm.DefaultOptions()}))
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

package pooltest

import (
	"context"
	"maps"
	"net"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/ownership"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/reconciler"
)

// controller runs "pool controller" (bin, or the plugin when bin is "") until the test
// ends, serving its metrics on a free loopback port, whose address it returns.
func startController(e *fixture.Env, bin string, extra ...string) string {
	e.T.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		e.T.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	if bin == "" {
		bin = plugin
	}
	ctx, cancel := context.WithCancel(e.Ctx)
	args := append([]string{"--kubeconfig", shared.Kubeconfig, "pool", "controller", "--leader-elect=false",
		"--health-probe-bind-address=0", "--metrics-bind-address=" + addr}, extra...)
	ctl := exec.CommandContext(ctx, bin, args...)
	var logs strings.Builder
	ctl.Stderr = &logs
	if err := ctl.Start(); err != nil {
		e.T.Fatal(err)
	}
	e.T.Cleanup(func() {
		cancel()
		_ = ctl.Wait()
		e.T.Logf("controller log (last 4 KiB):\n%s", tailString(logs.String(), 4096))
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := fixture.Scrape(addr); err == nil {
			return addr
		}
		if time.Now().After(deadline) {
			e.T.Fatalf("the controller's metrics endpoint %s did not answer", addr)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func tailString(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// settledReconciles waits until the controller has reconciled at least once and its
// reconcile count has not moved for a second, and returns the metrics read then.
func settledReconciles(t *testing.T, addr string) map[string]float64 {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	last, since := -1.0, time.Now()
	for {
		m, err := fixture.Scrape(addr)
		if err != nil {
			t.Fatal(err)
		}
		n := sumMetric(m, "controller_runtime_reconcile_total")
		switch {
		case n != last:
			last, since = n, time.Now()
		case n >= 1 && time.Since(since) >= time.Second:
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("the controller's reconciles did not settle in 30 s (%.0f so far)", n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// sumMetric adds up the samples of a metric whose labels contain every given pair.
func sumMetric(m map[string]float64, name string, labels ...string) float64 {
	total := 0.0
	for k, v := range m {
		if !strings.HasPrefix(k, name+"{") && k != name {
			continue
		}
		ok := true
		for _, l := range labels {
			if !strings.Contains(k, l) {
				ok = false
			}
		}
		if ok {
			total += v
		}
	}
	return total
}

func getPool(e *fixture.Env, name string) *v1alpha1.NodePool {
	e.T.Helper()
	pc, err := client.New(shared.Config, client.Options{Scheme: scheme()})
	if err != nil {
		e.T.Fatal(err)
	}
	p := &v1alpha1.NodePool{}
	if err := pc.Get(e.Ctx, types.NamespacedName{Name: name}, p); err != nil {
		e.T.Fatal(err)
	}
	return p
}

// Issue 11, test 5: a hand-edited value of a taint the pool recorded is someone else's:
// the conflict is named once, with both values; no duplicate taint, no 422, no loop.
func TestHandEditedTaintIsAConflictReportedOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a")
	blue := e.NS + "-blue"
	applyPool(e, poolYAML(blue, blue, "ml", ""))
	poolNodes(e, blue, 0)
	applyPool(e, poolYAML(blue, blue, "ml", ""))
	// The hand edit (retried: other controllers write the node too).
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n := e.Node(e.Nodes[0])
		for i := range n.Spec.Taints {
			if n.Spec.Taints[i].Key == "example.com/dedicated" {
				n.Spec.Taints[i].Value = "gpu"
			}
		}
		_, err := e.C.CoreV1().Nodes().Update(e.Ctx, n, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	r := e.Run("pool", "sync", blue)
	if r.Code != 3 {
		t.Errorf("pool sync exit %d, want 3 (a conflict)", r.Code)
	}
	oneLine(t, r.Stderr)
	fixture.MustContain(t, "stderr", r.Stderr, `"ml"`, `"gpu"`, "by hand")
	addr := startController(e, "", "--pools="+blue)
	var degraded *metav1.Condition
	deadline := time.Now().Add(30 * time.Second)
	for degraded == nil || degraded.Status != metav1.ConditionTrue {
		if time.Now().After(deadline) {
			t.Fatalf("the pool never turned Degraded: %+v", degraded)
		}
		time.Sleep(200 * time.Millisecond)
		degraded = meta.FindStatusCondition(getPool(e, blue).Status.Conditions, reconciler.ConditionDegraded)
	}
	if degraded.Reason != "Conflict" || !strings.Contains(degraded.Message, `"ml"`) || !strings.Contains(degraded.Message, `"gpu"`) {
		t.Errorf("Degraded = %s: %s; want Conflict naming both values", degraded.Reason, degraded.Message)
	}
	// The CLI's sync above already wrote Degraded, so the condition does not prove the
	// controller has looked: wait for its start-up reconciles (the pool's, the node's and
	// the RuntimeClass's informers each queue the pool) to be done before counting.
	m0 := settledReconciles(t, addr)
	// Quiet from here on: no node write, no status write, no retry loop.
	node0, poolRV := e.Node(e.Nodes[0]), getPool(e, blue).ResourceVersion
	time.Sleep(5 * time.Second)
	m1, _ := fixture.Scrape(addr)
	reconciles := sumMetric(m1, "controller_runtime_reconcile_total") - sumMetric(m0, "controller_runtime_reconcile_total")
	writes := sumMetric(m1, "rest_client_requests_total", `method="PATCH"`) + sumMetric(m1, "rest_client_requests_total", `method="PUT"`) -
		sumMetric(m0, "rest_client_requests_total", `method="PATCH"`) - sumMetric(m0, "rest_client_requests_total", `method="PUT"`)
	t.Logf("in 5 s after the conflict: %.0f reconciles, %.0f writes", reconciles, writes)
	if reconciles > 1 || writes > 0 {
		t.Errorf("the conflict loops: %.0f reconciles and %.0f writes in 5 s", reconciles, writes)
	}
	if n := e.Node(e.Nodes[0]); !maps.Equal(ownLabels(n), ownLabels(node0)) || n.Annotations[ownership.RecordAnnotation(blue)] != node0.Annotations[ownership.RecordAnnotation(blue)] || !reflect.DeepEqual(ownTaints(n), ownTaints(node0)) {
		t.Errorf("the node was written while the conflict stands: labels %v -> %v, taints %v -> %v", node0.Labels, n.Labels, node0.Spec.Taints, n.Spec.Taints)
	}
	if rv := getPool(e, blue).ResourceVersion; rv != poolRV {
		t.Errorf("the pool's status was written again while nothing changed")
	}
	var dedicated []string
	for _, tn := range e.Node(e.Nodes[0]).Spec.Taints {
		if tn.Key == "example.com/dedicated" {
			dedicated = append(dedicated, tn.Value)
		}
	}
	if len(dedicated) != 1 || dedicated[0] != "gpu" {
		t.Errorf("taints example.com/dedicated = %v, want only the hand's gpu", dedicated)
	}
}

func scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}

package metrics

import (
	"sort"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

func maint(name string, phase v1alpha1.Phase, states ...string) *v1alpha1.Maintenance {
	m := &v1alpha1.Maintenance{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: v1alpha1.MaintenanceStatus{Phase: phase}}
	for i, s := range states {
		m.Status.Nodes = append(m.Status.Nodes, v1alpha1.NodeStatus{Name: name + string(rune('a'+i)), State: s})
	}
	return m
}

func TestCount(t *testing.T) {
	byPhase, nodes := Count([]v1alpha1.Maintenance{
		*maint("new", ""),
		*maint("run", v1alpha1.PhaseRunning, v1alpha1.NodeStateDrained, v1alpha1.NodeStateDraining, v1alpha1.NodeStateDraining),
		*maint("done", v1alpha1.PhaseSucceeded, v1alpha1.NodeStateDrained),
		*maint("odd", "FromTheFuture", "Weird"),
	})
	wantPhase := map[string]int{"Pending": 1, "Running": 1, "Succeeded": 1, otherValue: 1}
	for k, v := range wantPhase {
		if byPhase[k] != v {
			t.Errorf("byPhase[%s] = %d, want %d (%v)", k, byPhase[k], v, byPhase)
		}
	}
	wantNodes := map[[2]string]int{{"Running", "Drained"}: 1, {"Running", "Draining"}: 2, {"Succeeded", "Drained"}: 1, {otherValue, otherValue}: 1}
	if len(nodes) != len(wantNodes) {
		t.Errorf("nodes = %v, want %v", nodes, wantNodes)
	}
	for k, v := range wantNodes {
		if nodes[k] != v {
			t.Errorf("nodes[%v] = %d, want %d", k, nodes[k], v)
		}
	}
}

// TestCatalogIsWhatIsServed: the reference (made from Catalog) names every family the
// package serves, and nothing else.
func TestCatalogIsWhatIsServed(t *testing.T) {
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	reader := fake.NewClientBuilder().WithScheme(s).WithObjects(maint("run", v1alpha1.PhaseRunning, v1alpha1.NodeStateDrained)).Build()
	reg := prometheus.NewRegistry()
	rec := NewRecorder(nil)
	if err := Register(reg, rec, reader); err != nil {
		t.Fatal(err)
	}
	// Histograms and labelled counters show only once observed.
	rec.RunStarted("m")
	rec.Observe("m", ev("node.cordoned", "n1", "", 0, ""))
	rec.Observe("m", ev("pod.eviction_started", "n1", "a/p", 1, ""))
	rec.Observe("m", ev("pod.eviction_accepted", "n1", "a/p", 1, ""))
	rec.Observe("m", ev("node.drained", "n1", "", 0, ""))
	rec.StatusWritten(WriteOK)
	rec.RunEnded("m", "Succeeded")
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var served, documented []string
	for _, mf := range mfs {
		served = append(served, mf.GetName())
	}
	for _, f := range Catalog() {
		documented = append(documented, f.Name)
		if f.Help == "" || f.Query == "" {
			t.Errorf("%s: no help or no example query", f.Name)
		}
	}
	sort.Strings(served)
	sort.Strings(documented)
	if len(served) != len(documented) {
		t.Fatalf("served %v, documented %v", served, documented)
	}
	for i := range served {
		if served[i] != documented[i] {
			t.Errorf("served %v, documented %v", served, documented)
			break
		}
	}
	if n := testutil.CollectAndCount(NewObjects(reader), MaintenanceNodes); n != 1 {
		t.Errorf("%s has %d series for one object with one node, want 1", MaintenanceNodes, n)
	}
}

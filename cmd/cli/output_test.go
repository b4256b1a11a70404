package cli

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/ptr"
	crfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/internal/kubefake"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
)

var update = flag.Bool("update", false, "rewrite the golden files of the printers")

var (
	created = metav1.NewTime(time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC))
	now     = func() time.Time { return created.Add(50 * time.Hour) }
)

// goldenFile compares got with testdata/<test>/<name>.golden (-update rewrites it).
func goldenFile(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", strings.SplitN(t.Name(), "/", 2)[0], strings.NewReplacer("/", "_", "=", "_", "{", "", "}", "", "[", "", "]", "", "*", "", ",", "_", ":", "_", ".", "").Replace(name)+".golden")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s (run go test -update to write it): %v", path, err)
	}
	if string(want) != got {
		t.Errorf("-o %s differs from %s:\n--- got\n%s--- want\n%s", name, path, got, want)
	}
}

// formats are the -o values every printing command is checked with.
var formats = []struct {
	format    string
	noHeaders bool
}{
	{"", false}, {"", true}, {"wide", false}, {"json", false}, {"yaml", false}, {"name", false},
	{"jsonpath={.items[*].metadata.name}", false}, {"custom-columns=NAME:.metadata.name,KIND:.kind", false},
	{"custom-columns=NAME:.metadata.name", true},
}

func formatName(f string, noHeaders bool) string {
	if f == "" {
		f = "table"
	}
	if noHeaders {
		f += "-no-headers"
	}
	return f
}

func testNodes() []corev1.Node {
	ready := corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}},
		NodeInfo:  corev1.NodeSystemInfo{KubeletVersion: "v1.36.3", OSImage: "kwok", ContainerRuntimeVersion: "kwok://v0.8.0"}}
	a := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a", CreationTimestamp: created, ResourceVersion: "7",
		Labels: map[string]string{"node-role.kubernetes.io/blue": ""}}, Status: ready}
	b := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-b", CreationTimestamp: created, ResourceVersion: "8"},
		Spec: corev1.NodeSpec{Unschedulable: true}, Status: ready}
	return []corev1.Node{b, a}
}

func TestNodesOutput(t *testing.T) {
	nodes := testNodes()
	ds := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "ds", Namespace: "kube-system",
		OwnerReferences: []metav1.OwnerReference{{Kind: "DaemonSet", Name: "d", Controller: ptr.To(true)}}},
		Spec: corev1.PodSpec{NodeName: "node-a"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	web := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"}, Spec: corev1.PodSpec{NodeName: "node-a"},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	for _, f := range formats {
		t.Run(formatName(f.format, f.noHeaders), func(t *testing.T) {
			cs := kubefake.New(&nodes[0], &nodes[1], &ds, &web)
			var out bytes.Buffer
			o := &NodesOptions{Common: &Common{IOStreams: genericiooptions.IOStreams{Out: &out, ErrOut: &out}}, Output: NewOutputFlags(true), Now: now}
			o.Output.Format, o.Output.NoHeaders = f.format, f.noHeaders
			if err := o.Output.Validate(); err != nil {
				t.Fatal(err)
			}
			if err := o.Run(context.Background(), cs); err != nil {
				t.Fatal(err)
			}
			goldenFile(t, formatName(f.format, f.noHeaders), out.String())
		})
	}
}

func testPools() []*v1alpha1.NodePool {
	return []*v1alpha1.NodePool{
		{ObjectMeta: metav1.ObjectMeta{Name: "green", CreationTimestamp: created}},
		{ObjectMeta: metav1.ObjectMeta{Name: "blue", CreationTimestamp: created}, Spec: v1alpha1.NodePoolSpec{
			Labels:       map[string]v1alpha1.LabelValue{"tier": "web"},
			Taints:       []v1alpha1.Taint{{Key: "dedicated", Value: "blue", Effect: corev1.TaintEffectNoSchedule}},
			RuntimeClass: &v1alpha1.RuntimeClassSpec{Handler: "runc"}, MaxUnavailable: ptr.To[int32](2)}},
	}
}

func TestPoolGetOutput(t *testing.T) {
	for _, names := range [][]string{nil, {"blue"}, {"blue", "green"}} {
		for _, f := range formats {
			name := strings.Join(append([]string{"pools"}, names...), "-") + "-" + formatName(f.format, f.noHeaders)
			t.Run(name, func(t *testing.T) {
				nodes := testNodes()
				cs := kubefake.New(&nodes[0], &nodes[1])
				b := crfake.NewClientBuilder().WithScheme(Scheme())
				for _, p := range testPools() {
					b = b.WithObjects(p)
				}
				var out bytes.Buffer
				o := &PoolGetOptions{Common: &Common{IOStreams: genericiooptions.IOStreams{Out: &out, ErrOut: &out}}, Names: names, Output: NewOutputFlags(true), Now: now}
				o.Output.Format, o.Output.NoHeaders = f.format, f.noHeaders
				if err := o.Run(context.Background(), cs, b.Build()); err != nil {
					t.Fatal(err)
				}
				goldenFile(t, name, out.String())
			})
		}
	}
}

func TestPoolGetNamesWhatIsMissing(t *testing.T) {
	var out bytes.Buffer
	b := crfake.NewClientBuilder().WithScheme(Scheme()).WithObjects(testPools()[1])
	o := &PoolGetOptions{Common: &Common{IOStreams: genericiooptions.IOStreams{Out: &out, ErrOut: &out}}, Names: []string{"blue", "nope"},
		Output: NewOutputFlags(true), Now: now}
	o.Output.Format = "name"
	err := o.Run(context.Background(), kubefake.New(), b.Build())
	if err == nil || !strings.Contains(err.Error(), "not found: nope") {
		t.Errorf("err = %v, want nope not found", err)
	}
	if out.String() != "nodepool.maintenance.kubectl-maintenance.io/blue\n" {
		t.Errorf("output = %q, want blue's name", out.String())
	}
}

func TestBadOutputFormatIsAUsageError(t *testing.T) {
	for _, args := range [][]string{{"nodes", "-o", "xml"}, {"pool", "list", "-o", "xml"}, {"pool", "get", "-o", "jsonpath={.a"},
		{"plan", "n1", "-o", "wide"}} {
		_, errOut, code := run(args...)
		if code != ExitUsage || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line", args, code, errOut)
		}
	}
}

func TestPlanOutput(t *testing.T) {
	nodes := testNodes()
	rs := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", Controller: ptr.To(true)}
	web := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "shop", OwnerReferences: []metav1.OwnerReference{rs}},
		Spec: corev1.PodSpec{NodeName: "node-a"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	for _, format := range []string{"", "json", "yaml", "name", "jsonpath={.nodes[*].pods[*].pod}", "custom-columns=VERDICT:.verdict,WAVES:.waves"} {
		t.Run(formatName(format, false), func(t *testing.T) {
			var out bytes.Buffer
			c := &Common{IOStreams: genericiooptions.IOStreams{Out: &out, ErrOut: &out}}
			po := &PlanOptions{Printer: NewOutputFlags(false)}
			po.DrainOptions = DrainOptions{Common: c, Settings: drain.DefaultSettings(), DryRun: "none"}
			po.Printer.Format = format
			po.Nodes.Names = []string{"node-a"}
			if err := po.Validate(); err != nil {
				t.Fatal(err)
			}
			if err := po.Run(context.Background(), kubefake.New(&nodes[0], &nodes[1], &web)); err != nil {
				t.Fatal(err)
			}
			goldenFile(t, formatName(format, false), out.String())
		})
	}
}

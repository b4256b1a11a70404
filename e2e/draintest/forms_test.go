package draintest

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

// TestKubectlInputForms: every command takes a node as NAME, node/NAME or nodes/NAME, a
// pod is refused in one line, --dry-run=true is kubectl's deprecated client dry run, and
// plan -o name piped into drain drains the nodes it printed.
func TestKubectlInputForms(t *testing.T) {
	e := newEnv(t, "a", "b", "c", "d")
	e.AddNodes(0, 1)
	o := e.Here(fixture.PodOptions{ReadyDelay: time.Second, SpreadByHostname: true})
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", 4, o); err != nil {
		t.Fatal(err)
	}
	pods := e.Ready("web", 4)
	e.PDB("web", fixture.PDBSpec{App: "web", MaxUnavailable: fixture.Int(1)}, 1)
	e.AddNodes(2, 3)
	a, b := e.Nodes[0], e.Nodes[1]
	g := e.Guard()

	t.Run("cordon nodes/X and uncordon node/X act on X", func(t *testing.T) {
		r := e.Run("cordon", "nodes/"+a)
		if r.Code != 0 {
			t.Fatalf("cordon nodes/%s exit %d, want 0", a, r.Code)
		}
		mustContain(t, "stdout", r.Stdout, "node/"+a+" cordoned")
		if !e.Node(a).Spec.Unschedulable {
			t.Fatalf("node %s not cordoned", a)
		}
		r = e.Run("uncordon", "node/"+a)
		if r.Code != 0 {
			t.Fatalf("uncordon node/%s exit %d, want 0", a, r.Code)
		}
		mustContain(t, "stdout", r.Stdout, "node/"+a+" uncordoned")
		if e.Node(a).Spec.Unschedulable {
			t.Fatalf("node %s still cordoned", a)
		}
	})

	t.Run("drain pod/X is one line, exit 2, nothing changed", func(t *testing.T) {
		r := e.Run("drain", "pod/"+pods[0].Name, "--ignore-daemonsets")
		if r.Code != 2 {
			t.Fatalf("exit %d, want 2", r.Code)
		}
		if lines := strings.Split(strings.TrimSpace(r.Stderr), "\n"); len(lines) != 1 {
			t.Errorf("stderr has %d lines, want 1:\n%s", len(lines), r.Stderr)
		}
		mustContain(t, "stderr", r.Stderr, `expected resource of type node, got "pod"`)
		for _, n := range e.Nodes {
			if e.Node(n).Spec.Unschedulable {
				t.Errorf("node %s cordoned by a refused command", n)
			}
		}
	})

	t.Run("--dry-run=true is kubectl's deprecated client dry run", func(t *testing.T) {
		before := len(e.PodsOn(a))
		r := e.Run("drain", "node/"+a, "--dry-run=true")
		if r.Code != 0 {
			t.Fatalf("exit %d, want 0", r.Code)
		}
		mustContain(t, "stderr", r.Stderr, "--dry-run=true is deprecated (boolean value) and can be replaced with --dry-run=client.")
		mustContain(t, "stdout", r.Stdout, "node/"+a+" cordoned (dry run)", "node/"+a+" drained (dry run)")
		if e.Node(a).Spec.Unschedulable || len(e.PodsOn(a)) != before {
			t.Errorf("a client dry run changed node %s", a)
		}
		r = e.Run("cordon", a, "--dry-run=false")
		if r.Code != 0 || !e.Node(a).Spec.Unschedulable {
			t.Fatalf("cordon --dry-run=false exit %d; want a real cordon", r.Code)
		}
		mustContain(t, "stderr", r.Stderr, "--dry-run=false is deprecated (boolean value) and can be replaced with --dry-run=none.")
		if r := e.Run("uncordon", a); r.Code != 0 {
			t.Fatalf("uncordon exit %d", r.Code)
		}
	})

	t.Run("plan -l SEL -o name piped into drain drains those nodes", func(t *testing.T) {
		r := e.Run("plan", "-l", "kubernetes.io/hostname in ("+a+","+b+")", "-o", "name")
		if r.Code != 0 {
			t.Fatalf("plan exit %d, want 0", r.Code)
		}
		if want := "node/" + a + "\nnode/" + b + "\n"; r.Stdout != want {
			t.Fatalf("plan -o name printed %q, want %q", r.Stdout, want)
		}
		r = e.Run(append([]string{"drain"}, strings.Fields(r.Stdout)...)...) // xargs
		if r.Code != 0 {
			t.Fatalf("drain of plan's output exit %d, want 0", r.Code)
		}
		for _, n := range []string{a, b} {
			if !e.Node(n).Spec.Unschedulable || len(e.PodsOn(n)) != 0 {
				t.Errorf("node %s not drained", n)
			}
		}
		e.Ready("web", 4)
		if g.Deleted != 4 {
			t.Errorf("guard saw %d pods evicted, want 4", g.Deleted)
		}
	})
}

// TestNodeKarpenterIsDisruptingIsLeftToIt: a node carrying karpenter.sh/disrupted is
// named by plan and left alone by drain (exit 3) unless --include-disrupting is given.
func TestNodeKarpenterIsDisruptingIsLeftToIt(t *testing.T) {
	e := newEnv(t, "a", "b", "c")
	e.AddNodes(0, 1)
	o := e.Here(fixture.PodOptions{ReadyDelay: time.Second, SpreadByHostname: true})
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", 2, o); err != nil {
		t.Fatal(err)
	}
	e.Ready("web", 2)
	e.AddNodes(2)
	a, b := e.Nodes[0], e.Nodes[1]
	patch := `{"spec":{"taints":[{"key":"` + drain.KarpenterDisruptedTaint + `","effect":"NoSchedule"}]}}`
	if _, err := e.C.CoreV1().Nodes().Patch(e.Ctx, a, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	g := e.Guard()

	r := e.Run("plan", a, b)
	if r.Code != 0 {
		t.Fatalf("plan exit %d, want 0", r.Code)
	}
	mustContain(t, "plan", r.Stdout, "Karpenter is already disrupting this node")

	r = e.Run("drain", a, b)
	if r.Code != 3 {
		t.Fatalf("drain exit %d, want 3", r.Code)
	}
	mustContain(t, "stderr", r.Stderr, "node/"+a+" left to Karpenter")
	if strings.Contains(r.Stdout, a) {
		t.Errorf("drain acted on %s:\n%s", a, r.Stdout)
	}
	if n := e.Node(a); n.Spec.Unschedulable || len(e.PodsOn(a)) != 1 {
		t.Errorf("node %s touched: unschedulable=%v, %d pods left", a, n.Spec.Unschedulable, len(e.PodsOn(a)))
	}
	if !e.Node(b).Spec.Unschedulable || len(e.PodsOn(b)) != 0 {
		t.Errorf("node %s not drained", b)
	}

	r = e.Run("drain", a, "--include-disrupting")
	if r.Code != 0 {
		t.Fatalf("drain --include-disrupting exit %d, want 0", r.Code)
	}
	if !e.Node(a).Spec.Unschedulable || len(e.PodsOn(a)) != 0 {
		t.Errorf("node %s not drained with --include-disrupting", a)
	}
	if g.Deleted != 2 {
		t.Errorf("guard saw %d pods evicted, want 2", g.Deleted)
	}
}

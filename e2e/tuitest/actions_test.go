package tuitest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

// toggle filters the Nodes view to node and toggles its selection.
func toggle(tm *fixture.Term, node string) {
	tm.T.Helper()
	tm.Keys("1", "/", "C-u")
	tm.Keys("-l", node)
	tm.Keys("Enter", "Space")
}

// row is the Progress view's line of node ("" when it shows none).
func row(screen, node string) string {
	for _, l := range strings.Split(screen, "\n") {
		if strings.HasPrefix(strings.TrimLeft(l, "> "), node+" ") {
			return l
		}
	}
	return ""
}

// Issue 21, test 7, at 80x24: the drain dialog of two nodes shows its question; two drains
// run at once; on Progress the cursor moves down and x cancels the second only; quitting
// prints a hint that, run as printed once the budget allows, finishes the first drain
// (its --ignore-daemonsets included: the node has a DaemonSet pod).
func TestDashboardProgressCursorCancelAndQuitHint(t *testing.T) {
	e := fixture.NewEnv(t, shared, plugin, "a", "b", "c")
	fixture.NeedTmux(t)
	a, b := e.Nodes[0], e.Nodes[1]
	e.AddNodes(0)
	if _, err := fixture.DaemonSet(e.Ctx, e.C, e.NS, "agent", e.Here(fixture.PodOptions{})); err != nil {
		t.Fatal(err)
	}
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "ledger", 3, e.Here(fixture.PodOptions{})); err != nil {
		t.Fatal(err)
	}
	e.Ready("ledger", 3) // on a, the only node
	e.AddNodes(1)
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "vault", 2, fixture.PodOptions{NodeSelector: map[string]string{"kubernetes.io/hostname": b}}); err != nil {
		t.Fatal(err)
	}
	e.Ready("vault", 2)
	e.Ready("agent", 2)
	e.PDB("ledger", fixture.PDBSpec{App: "ledger", MaxUnavailable: fixture.Int(0)}, 0)
	e.PDB("vault", fixture.PDBSpec{App: "vault", MaxUnavailable: fixture.Int(0)}, 0)
	e.AddNodes(2) // the replacements' node
	g := e.Guard()

	errFile := filepath.Join(t.TempDir(), "stderr")
	tm := fixture.StartTerm(t, e.NS, 80, 24, fmt.Sprintf("%s 2>%s", dashboardCmd(shared.Kubeconfig), errFile))
	tm.WaitFor(a, 30*time.Second)

	// The dialog of two nodes at 80x24 keeps its question in sight.
	toggle(tm, a)
	toggle(tm, b)
	tm.WaitFor("2 selected", 5*time.Second)
	tm.Keys("d")
	s := tm.WaitFor("Proceed? [y] yes  [n] no", 20*time.Second)
	t.Logf("the drain dialog of two nodes at 80x24:\n%s", s)
	fixture.MustContain(t, "dialog", s, "Drain 2 node(s)", "[o] on blocked wait")
	tm.Keys("n")
	tm.WaitFor("cancelled", 5*time.Second)
	toggle(tm, a)
	toggle(tm, b)
	tm.WaitFor("0 selected", 5*time.Second)

	// Two actions: a drain of a, then one of b; both wait on budgets that allow nothing.
	selectAndDrain(tm, a)
	tm.WaitFor("waits:", 30*time.Second)
	selectAndDrain(tm, b)
	tm.Keys("4")
	tm.WaitUntil("two waiting drains", 30*time.Second, func(s string) bool { return strings.Count(s, "waits:") == 2 })
	tm.Keys("Down")
	tm.Keys("x")
	s = tm.WaitUntil("b stopped", 30*time.Second, func(s string) bool { return strings.Contains(row(s, b), "stopped") })
	t.Logf("progress after Down and x:\n%s", s)
	if r := row(s, a); r == "" || strings.Contains(r, "stop") {
		t.Errorf("x on the second row touched the first: %q", r)
	}
	if n := e.Node(b); !n.Spec.Unschedulable || len(e.PodsOn(b)) < 2 {
		t.Errorf("b after its drain was cancelled: cordoned %v, %d pods; want cordoned with its pods", n.Spec.Unschedulable, len(e.PodsOn(b)))
	}

	// Quit while a drains: the hint is the whole command.
	tm.Keys("q")
	tm.WaitFor("Stop them and quit?", 5*time.Second)
	tm.Keys("y")
	tm.WaitFor("EXITED 130", 30*time.Second)
	out, err := os.ReadFile(errFile)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the dashboard's stderr:\n%s", out)
	var hint string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "stopped: drain stopped on "+a+" ") {
			_, rest, _ := strings.Cut(l, "finish with `")
			hint, _, _ = strings.Cut(rest, "`")
		}
	}
	if !strings.HasPrefix(hint, "kubectl maintenance ") {
		t.Fatalf("no finish command for %s in the dashboard's stderr", a)
	}
	fixture.MustContain(t, "hint", hint, "--ignore-daemonsets", "--kubeconfig=", "drain "+a)

	// Once the budget allows, the hint run as printed finishes the drain.
	pdb, err := e.C.PolicyV1().PodDisruptionBudgets(e.NS).Get(e.Ctx, "ledger", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pdb.Spec.MaxUnavailable = fixture.Int(1)
	if _, err := e.C.PolicyV1().PodDisruptionBudgets(e.NS).Update(e.Ctx, pdb, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := fixture.WaitPDBAllows(e.Ctx, e.C, e.NS, "ledger", 1); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(e.Ctx, "sh", "-c", plugin+strings.TrimPrefix(hint, "kubectl maintenance"))
	res, err := cmd.CombinedOutput()
	t.Logf("$ %s\n%s", hint, res)
	if err != nil {
		t.Fatalf("the hint, run as printed: %v", err)
	}
	for _, p := range e.PodsOn(a) {
		if !strings.HasPrefix(p.Name, "agent-") {
			t.Errorf("pod %s is still on %s after the hint's drain", p.Name, a)
		}
	}
	if !e.Node(a).Spec.Unschedulable {
		t.Errorf("%s is not cordoned after its drain", a)
	}
	if g.Deleted < 3 {
		t.Errorf("the guard saw %d evictions, want the 3 ledger pods", g.Deleted)
	}
}

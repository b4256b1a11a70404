// Package tuitest drives the dashboard in a real terminal (tmux) against the real local
// cluster: select a node, drain it, watch the progress reach done, check the API; resize
// the terminal mid-drain; cancel a blocked drain; quit while it runs; start it against
// an unreachable server and as a user who may not list nodes.
package tuitest

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/cluster"
	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

var (
	shared *cluster.Cluster
	plugin string
)

func TestMain(m *testing.M) { os.Exit(fixture.TestMain(m, &shared, &plugin)) }

func dashboardCmd(kubeconfig string) string {
	return fmt.Sprintf("%s --kubeconfig %s dashboard", plugin, kubeconfig)
}

// selectAndDrain filters the nodes view to node, selects it and confirms a drain.
func selectAndDrain(tm *fixture.Term, node string) {
	tm.T.Helper()
	tm.WaitFor(" nodes, ", 30*time.Second) // the dashboard is up and has listed the nodes
	tm.Keys("1", "/", "C-u")               // a filter typed before is cleared
	tm.Keys("-l", node)
	tm.Keys("Enter")
	// The node's row (not the filter line, which names it too) before it is selected.
	tm.WaitUntil(node+" listed", 30*time.Second, func(s string) bool {
		for _, l := range strings.Split(s, "\n") {
			if strings.HasPrefix(strings.TrimLeft(l, " *>"), node+" ") {
				return true
			}
		}
		return false
	})
	tm.Keys("Space")
	tm.WaitFor("1 selected", 5*time.Second)
	tm.Keys("d")
	tm.WaitFor("Proceed?", 15*time.Second)
	tm.Keys("y")
}

func TestDashboardDrainsANodeInARealTerminal(t *testing.T) {
	e := fixture.NewEnv(t, shared, plugin, "a", "b")
	fixture.NeedTmux(t)
	e.AddNodes(0)
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", 4, e.Here(fixture.PodOptions{ReadyDelay: time.Second})); err != nil {
		t.Fatal(err)
	}
	e.Ready("web", 4)
	e.PDB("web", fixture.PDBSpec{App: "web", MaxUnavailable: fixture.Int(1)}, 1)
	e.AddNodes(1) // the replacements' node
	g := e.Guard()
	node := e.Nodes[0]
	tm := fixture.StartTerm(t, e.NS, 120, 40, dashboardCmd(shared.Kubeconfig))

	tm.WaitFor(node, 30*time.Second)
	tm.Keys("/")
	tm.Keys("-l", node)
	tm.Keys("Enter")
	tm.Keys("Space")
	tm.WaitFor("1 selected", 5*time.Second)
	tm.Keys("d")
	s := tm.WaitFor("Proceed?", 15*time.Second)
	if !strings.Contains(s, "pdb "+e.NS+"/web") {
		t.Errorf("the confirmation does not show the plan with the PDB:\n%s", s)
	}
	tm.Keys("y")
	s = tm.WaitFor("done: drained", 60*time.Second)
	t.Logf("progress view when done:\n%s", s)
	if !strings.Contains(s, "100%") {
		t.Errorf("progress did not reach 100%%:\n%s", s)
	}
	n := e.Node(node)
	if !n.Spec.Unschedulable {
		t.Error("the node drained from the dashboard is not cordoned")
	}
	if left := e.PodsOn(node); len(left) != 0 {
		t.Errorf("%d pods left on the node drained from the dashboard", len(left))
	}
	if g.Deleted == 0 {
		t.Error("the guard saw no eviction")
	}
	tm.Keys("q")
	tm.WaitFor("EXITED 0", 10*time.Second)
}

// blockedDrain starts a dashboard whose drain of the env's first node waits on a budget
// that never allows a disruption.
func blockedDrain(t *testing.T, w, h int) (*fixture.Env, *fixture.Term) {
	e := fixture.NewEnv(t, shared, plugin, "a", "b")
	fixture.NeedTmux(t)
	e.AddNodes(0)
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "ledger", 2, e.Here(fixture.PodOptions{})); err != nil {
		t.Fatal(err)
	}
	e.Ready("ledger", 2)
	e.PDB("ledger", fixture.PDBSpec{App: "ledger", MaxUnavailable: fixture.Int(0)}, 0)
	e.AddNodes(1)
	tm := fixture.StartTerm(t, e.NS, w, h, dashboardCmd(shared.Kubeconfig))
	selectAndDrain(tm, e.Nodes[0])
	tm.WaitFor("waits:", 30*time.Second)
	return e, tm
}

func TestDashboardSurvivesResizeMidDrain(t *testing.T) {
	e, tm := blockedDrain(t, 120, 30)
	for _, size := range [][2]int{{80, 24}, {60, 20}, {120, 30}, {40, 10}, {80, 24}} {
		tm.Resize(size[0], size[1])
		time.Sleep(500 * time.Millisecond) // a terminal has no "redrawn" notification
		for _, view := range []string{"1", "4", "3", "5", "4"} {
			tm.Keys(view)
			time.Sleep(150 * time.Millisecond)
			s := tm.Alive(fmt.Sprintf("view %s at %dx%d", view, size[0], size[1]))
			for i, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
				if len([]rune(l)) > size[0] {
					t.Errorf("%dx%d view %s: line %d is wider than the terminal: %q", size[0], size[1], view, i, l)
				}
			}
		}
	}
	tm.Resize(80, 24)
	s := tm.WaitFor("waits:", 5*time.Second)
	t.Logf("progress at 80x24 after the resizes:\n%s", s)
	if !e.Node(e.Nodes[0]).Spec.Unschedulable {
		t.Error("the node being drained is not cordoned")
	}
}

func TestCancelABlockedDrainFromProgressThenQuitMidDrain(t *testing.T) {
	e, tm := blockedDrain(t, 120, 30)
	node := e.Nodes[0]
	tm.Keys("x")
	s := tm.WaitFor("stopped", 30*time.Second)
	t.Logf("progress after x:\n%s", s)
	tm.Alive("after cancelling")
	if pods := e.PodsOn(node); len(pods) != 2 {
		t.Errorf("%d ledger pods on the node after the cancel, want 2 (never evicted)", len(pods))
	}
	if !e.Node(node).Spec.Unschedulable {
		t.Error("the cancelled drain's node is not cordoned (a re-run should finish the job)")
	}
	// The same node can be drained again at once; quitting while it runs stops it,
	// says what is left and how to finish, and exits 130.
	selectAndDrain(tm, node)
	tm.WaitFor("waits:", 30*time.Second)
	tm.Keys("q")
	tm.WaitFor("Stop them and quit?", 5*time.Second)
	tm.Keys("y")
	s = tm.WaitFor("EXITED 130", 30*time.Second)
	t.Logf("terminal after quitting mid-drain:\n%s", s)
	fixture.MustContain(t, "quit output", strings.Join(strings.Fields(s), " "),
		"stopped: drain stopped on "+node, "kubectl maintenance drain "+node)
}

// kubeconfigAs writes a copy of the admin kubeconfig that changes server or impersonates
// user (an empty value keeps the admin's).
func kubeconfigAs(t *testing.T, server, user string) string {
	t.Helper()
	c := cluster.Need(t, shared) // skips under -short
	cfg, err := clientcmd.LoadFromFile(c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cfg.Clusters {
		if server != "" {
			c.Server = server
		}
	}
	for _, a := range cfg.AuthInfos {
		if user != "" {
			a.Impersonate = user
		}
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestDashboardSaysWhatIsWrongInOneLine(t *testing.T) {
	cluster.Need(t, shared) // skips under -short
	tests := []struct {
		name, server, user, want string
	}{
		{"an unreachable server", "https://127.0.0.1:1", "", "cannot reach the API server at https://127.0.0.1:1"},
		{"a server that does not answer", "hang", "", "did not answer within 10s"},
		{"a user who may list pods and budgets but not nodes", "", "km-no-nodes", "not allowed to list/watch nodes (RBAC)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fixture.NeedTmux(t)
			if tc.server == "hang" {
				tc.server = hangingServer(t)
			}
			if tc.user != "" {
				allowAllButNodes(t, tc.user)
			}
			kc := kubeconfigAs(t, tc.server, tc.user)
			tm := fixture.StartTerm(t, strings.ReplaceAll(tc.name, " ", "-"), 100, 30, fmt.Sprintf("%s --kubeconfig %s dashboard", plugin, kc))
			began := time.Now()
			s := tm.WaitFor(tc.want, 15*time.Second)
			t.Logf("after %s:\n%s", time.Since(began).Round(100*time.Millisecond), s)
			tm.Alive("with " + tc.name)
			lines := 0
			for _, l := range strings.Split(s, "\n") {
				if strings.Contains(l, tc.want) {
					lines++
				}
			}
			if lines != 1 {
				t.Errorf("the problem shows on %d lines, want 1", lines)
			}
			for _, raw := range []string{"reflector.go", "Failed to watch", "E1", "W1"} {
				if strings.Contains(s, raw) {
					t.Errorf("a raw log line (%q) is on the screen:\n%s", raw, s)
				}
			}
			if !strings.Contains(s, "1 Nodes") {
				t.Errorf("the dashboard did not start:\n%s", s)
			}
			tm.Keys("q")
			tm.WaitFor("EXITED 0", 10*time.Second)
		})
	}
}

// hangingServer is an address that accepts connections and never answers (a server
// behind a firewall that drops, or a hung one): only a deadline ends a request to it.
func hangingServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var held []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		<-done
		for _, c := range held {
			_ = c.Close()
		}
	})
	return "https://" + l.Addr().String()
}

// allowAllButNodes lets user list and watch pods and PodDisruptionBudgets, and nothing of
// nodes: the dashboard must name the one permission missing.
func allowAllButNodes(t *testing.T, user string) {
	t.Helper()
	ctx := context.Background()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"policy"}, Resources: []string{"poddisruptionbudgets"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"storage.k8s.io"}, Resources: []string{"volumeattachments"}, Verbs: []string{"list", "watch"}},
		{APIGroups: []string{""}, Resources: []string{"persistentvolumeclaims"}, Verbs: []string{"get"}},
	}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}}
	if _, err := shared.Client.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := shared.Client.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = shared.Client.RbacV1().ClusterRoleBindings().Delete(ctx, user, metav1.DeleteOptions{})
		_ = shared.Client.RbacV1().ClusterRoles().Delete(ctx, user, metav1.DeleteOptions{})
	})
}

package pooltest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

// Issue 21, test 8: bad input is exit 2 (the README's exit-code table) with one line that
// names the real problem, nothing on stdout, and the cluster left as it was: the built
// binary against the real cluster, with its NodePool CRD installed.
func TestBadInputIsOneLineNamingTheProblemExit2(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a")
	e.AddNodes()
	pool := e.NS + "-kept"
	if r := applyPool(e, poolSpecYAML(pool, "kept", 1)); r.Code != 0 {
		t.Fatalf("pool apply exit %d", r.Code)
	}
	cm := filepath.Join(t.TempDir(), "settings.yaml")
	if err := os.WriteFile(cm, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "+e.NS+"-settings\n  namespace: "+e.NS+"\ndata:\n  maxUnavailable: \"1\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"an unknown pool", []string{"pool", "get", e.NS + "-nosuchpool"}, "nodepool(s) not found: " + e.NS + "-nosuchpool"},
		{"a shell completion does not know", []string{"completion", "tcsh"}, `no completion for "tcsh": the shells are bash, fish, kubectl, powershell, zsh`},
		{"an argument to a shell's completion", []string{"completion", "bash", "extra"}, "completion bash takes no arguments"},
		{"a request timeout that is no duration", []string{"--request-timeout", "abc", "pool", "list"}, `invalid --request-timeout "abc": must be a duration`},
		{"a server dry run of pool delete", []string{"pool", "delete", pool, "--dry-run=server"}, `invalid --dry-run "server": kubectl maintenance pool delete's dry run is a switch`},
		{"a ConfigMap given to pool apply", []string{"pool", "apply", "-f", cm}, "it is a ConfigMap (v1), not a NodePool"},
		{"a boolean flag given a word", []string{"drain", e.Nodes[0], "--ignore-daemonsets=yes please"}, `invalid --ignore-daemonsets "yes please": must be true or false`},
		{"a number given a word", []string{"pool", "move", e.Nodes[0], "--to", pool, "--grace-period=soon"}, `invalid --grace-period "soon": must be a whole number`},
		{"a verbosity given a word", []string{"-v", "loud", "nodes"}, `invalid -v "loud": must be a whole number`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := e.Run(tc.args...)
			if r.Code != 2 {
				t.Errorf("exit %d, want 2", r.Code)
			}
			lines := strings.Split(strings.TrimSpace(r.Stderr), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "error: ") {
				t.Errorf("stderr is %d line(s), want one error: line:\n%s", len(lines), r.Stderr)
			}
			fixture.MustContain(t, "stderr", r.Stderr, tc.want)
			if r.Stdout != "" {
				t.Errorf("stdout is not empty:\n%s", r.Stdout)
			}
		})
	}
	// The cluster is as it was: the pool is there, the ConfigMap was not created, the
	// node was neither cordoned nor moved.
	if p := getPool(e, pool); !p.DeletionTimestamp.IsZero() {
		t.Error("the pool is being deleted after a refused pool delete")
	}
	if _, err := e.C.CoreV1().ConfigMaps(e.NS).Get(e.Ctx, e.NS+"-settings", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the ConfigMap given to pool apply: get = %v, want not found", err)
	}
	n := e.Node(e.Nodes[0])
	if _, moved := n.Labels["node-role.kubernetes.io/"+pool]; n.Spec.Unschedulable || moved {
		t.Errorf("the node was changed: unschedulable %v, labels %v", n.Spec.Unschedulable, n.Labels)
	}
	t.Cleanup(func() { e.Run("pool", "delete", pool) })
}

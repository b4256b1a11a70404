package cli

import (
	"strings"
	"testing"
)

// Every pool move flag is checked before any API call (there is no cluster here): one
// line, exit 2.
func TestPoolMoveRefusesBadFlagsBeforeAnyCall(t *testing.T) {
	tests := map[string]struct {
		args []string
		want string
	}{
		"negative timeout":      {[]string{"--timeout", "-5s"}, "invalid --timeout -5s: must not be negative"},
		"grace period below -1": {[]string{"--grace-period", "-7"}, "invalid --grace-period -7: must be -1"},
		"negative skip-wait":    {[]string{"--skip-wait-for-delete-timeout", "-1"}, "--skip-wait-for-delete-timeout"},
		"a pod selector":        {[]string{"--pod-selector", "app=web"}, "a move must empty the node"},
		"disable-eviction":      {[]string{"--disable-eviction"}, "never bypasses PodDisruptionBudgets"},
		"no nodes":              {nil, "name the nodes to move"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			args := []string{"pool", "move", "n1", "--to", "green", "--kubeconfig", "/nonexistent/kubeconfig"}
			if tc.args == nil {
				args = []string{"pool", "move", "--to", "green", "--kubeconfig", "/nonexistent/kubeconfig"}
			}
			_, errOut, code := run(append(args, tc.args...)...)
			if code != ExitUsage {
				t.Errorf("exit %d, want 2 (stderr %q)", code, errOut)
			}
			if !strings.Contains(errOut, tc.want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
				t.Errorf("stderr = %q, want one line containing %q", errOut, tc.want)
			}
		})
	}
}

func TestPoolSyncRolloutTakesOnePool(t *testing.T) {
	_, errOut, code := run("pool", "sync", "--rollout", "--kubeconfig", "/nonexistent/kubeconfig")
	if code != ExitUsage || !strings.Contains(errOut, "exactly one pool") {
		t.Errorf("exit %d, stderr %q; want 2 naming the rule", code, errOut)
	}
}

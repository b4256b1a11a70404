package draintest

import (
	"regexp"
	"strings"
	"testing"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

// kubectl's filters GET the DaemonSet of every DaemonSet pod; the plan asks the API
// server once, with a list, whatever the number of nodes, and still ignores every such pod
// under --ignore-daemonsets. Counted from client-go's own request log (-v=6).
func TestDaemonSetsAreListedOncePerPlan(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a", "b", "c")
	e.AddNodes()
	if _, err := fixture.DaemonSet(e.Ctx, e.C, e.NS, "agent", e.Here(fixture.PodOptions{})); err != nil {
		t.Fatal(err)
	}
	e.Ready("agent", len(e.Nodes))

	r := e.Run(append([]string{"plan"}, append(e.Nodes, "--ignore-daemonsets", "-v=6")...)...)
	if r.Code != 0 {
		t.Fatalf("plan exit %d, want 0", r.Code)
	}
	lists := regexp.MustCompile(`verb="GET" url="[^"]*/apis/apps/v1/daemonsets\?`).FindAllString(r.Stderr, -1)
	gets := regexp.MustCompile(`verb="GET" url="[^"]*/apis/apps/v1/namespaces/[^/"]+/daemonsets/`).FindAllString(r.Stderr, -1)
	if len(lists) != 1 || len(gets) != 0 {
		t.Errorf("the plan of %d nodes sent %d lists and %d gets of daemonsets, want 1 and 0", len(e.Nodes), len(lists), len(gets))
	}
	if n := strings.Count(r.Stdout+r.Stderr, "ignoring DaemonSet-managed Pods: "+e.NS+"/agent-"); n != len(e.Nodes) {
		t.Errorf("%d nodes warned of their ignored agent pod, want %d:\n%s", n, len(e.Nodes), r.Stdout)
	}
}

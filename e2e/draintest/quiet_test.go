package draintest

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

// A routine drain says little and means it (issue 21, test 5): six nodes, 24 pods of two
// Deployments and a StatefulSet under budgets, replacements that take a moment to become
// Ready and evicted pods that take a moment to go. The output holds kubectl's two lines
// per pod, one line per node state change and one line per wait change (a wait said
// again unchanged, or a cause or remedy on a line of its own, is over the count), and
// never calls a pod stuck terminating nor sends the user to kube-controller-manager.
func TestRoutineDrainSaysLittle(t *testing.T) {
	t.Parallel()
	names := []string{"d0", "d1", "d2", "d3", "d4", "d5", "s0", "s1", "s2"}
	e := newEnv(t, names...)
	drained := e.Nodes[:6]
	e.AddNodes(0, 1, 2, 3, 4, 5)
	o := e.Here(fixture.PodOptions{ReadyDelay: 2 * time.Second, DeleteDelay: time.Second})
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", 12, o); err != nil {
		t.Fatal(err)
	}
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "api", 6, o); err != nil {
		t.Fatal(err)
	}
	if _, err := fixture.StatefulSet(e.Ctx, e.C, e.NS, "db", 6, o); err != nil {
		t.Fatal(err)
	}
	e.Ready("web", 12)
	e.Ready("api", 6)
	e.Ready("db", 6)
	e.PDB("web", fixture.PDBSpec{App: "web", MaxUnavailable: fixture.Int(2)}, 2)
	e.PDB("api", fixture.PDBSpec{App: "api", MinAvailable: fixture.Int(5)}, 1)
	e.PDB("db", fixture.PDBSpec{App: "db", MaxUnavailable: fixture.Int(1)}, 1)
	e.AddNodes(6, 7, 8)
	g := e.Guard()

	r := e.Run(append(append([]string{"drain"}, drained...), "--timeout", "5m")...)
	if r.Code != 0 {
		t.Fatalf("drain exit %d, want 0", r.Code)
	}
	for _, n := range drained {
		if left := e.PodsOn(n); len(left) != 0 {
			t.Errorf("%d pods left on %s", len(left), n)
		}
	}
	if g.Deleted < 24 {
		t.Errorf("guard saw %d pods deleted through the Eviction API, want 24", g.Deleted)
	}

	c := countLines(r.Stdout + r.Stderr)
	const pods, nodes = 24, 6
	// The plan's one ETA line ("eta: ...") is allowed once: a planner's question, said at the
	// start of every drain.
	allowed := 2*pods + 2*nodes + c.waitChanges + min(c.eta, 1)
	t.Logf("FIGURE test5: routine drain of %d nodes, %d pods: %d output lines (%d kubectl pod lines, %d node lines, %d wait lines of %d wait changes, %d other); allowed %d; %d stuck, %d naming kube-controller-manager",
		nodes, pods, c.total, c.podLines, c.nodeLines, c.waitLines, c.waitChanges, c.other, allowed, c.stuck, c.controlPlane)
	if c.stuck != 0 {
		t.Errorf("%d lines call a pod stuck in a routine drain, want 0", c.stuck)
	}
	if c.controlPlane != 0 {
		t.Errorf("%d lines send the user to kube-controller-manager in a routine drain, want 0", c.controlPlane)
	}
	if c.total > allowed {
		t.Errorf("%d output lines, want at most %d (2 per pod, 2 per node, 1 per wait change)", c.total, allowed)
	}
}

// lineCount sorts a drain's human output by kind.
type lineCount struct {
	total, podLines, nodeLines, waitLines, waitChanges, eta, other int
	// stuck lines call a pod stuck (or still terminating); controlPlane lines name
	// kube-controller-manager.
	stuck, controlPlane int
}

var (
	// waitSubject is who waits, at the start of a wait line.
	// (kubectl's "error when evicting" line is a wait too: a retry).
	waitSubject = regexp.MustCompile(`^(pod \S+ (?:waits|is blocked|would be refused)|node \S+ waits for pod \S+|error when evicting pod \S+)`)
	// volatile are the parts of a wait line that move while the wait does not: numbers
	// and durations.
	volatile = regexp.MustCompile(`(?:[0-9][0-9.]*(?:ms|µs|[smh])?)+`)
)

// countLines counts the lines of a drain's output by kind. A wait change is a wait line
// that differs from the last wait line about the same subject in more than its numbers
// and durations: a wait said again unchanged is not one (the first time a wait is said
// again, with "(waiting for 30s)", it is: the wait has lasted the wait interval).
func countLines(out string) lineCount {
	var c lineCount
	last := map[string]string{}
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if l == "" {
			continue
		}
		c.total++
		if strings.Contains(l, "stuck") || strings.Contains(l, "still terminating") {
			c.stuck++
		}
		if strings.Contains(l, "kube-controller-manager") {
			c.controlPlane++
		}
		switch {
		case strings.HasPrefix(l, "evicting pod "), strings.HasPrefix(l, "pod/") && strings.HasSuffix(l, " evicted"):
			c.podLines++
		case strings.HasPrefix(l, "node/"):
			c.nodeLines++
		case strings.HasPrefix(l, "eta: "):
			c.eta++
		case waitSubject.MatchString(l):
			c.waitLines++
			subject := waitSubject.FindString(l)
			norm := volatile.ReplaceAllString(l, "#")
			if last[subject] != norm {
				c.waitChanges++
			}
			last[subject] = norm
		default:
			c.other++
		}
	}
	return c
}

func TestCountLines(t *testing.T) {
	out := strings.Join([]string{
		"node/a cordoned",
		"evicting pod ns/p1",
		"pod ns/p2 waits for pdb ns/web: needs 3 healthy pods, has 3, allows 0; retrying when its status changes, not before 446.415191ms",
		"pod ns/p2 waits for pdb ns/web: needs 3 healthy pods, has 2, allows 0; retrying when its status changes, not before 1.2s",
		"pod ns/p2 waits for pdb ns/web: needs 3 healthy pods, has 2, allows 0: 1 taken by this drain's evictions in flight",
		"pod ns/p2 waits for pdb ns/web: needs 3 healthy pods, has 2, allows 0: 1 taken by this drain's evictions in flight (waiting for 30s)",
		"pod ns/p2 waits for pdb ns/web: needs 3 healthy pods, has 2, allows 0: 1 taken by this drain's evictions in flight (waiting for 1m0s)",
		"error when evicting pod ns/p3 (will retry after 0.4s): the server is busy",
		"  cause: pdb ns/web cannot recover: 1 pod is stuck terminating",
		"  remedy: is kube-controller-manager running?",
		"pod/p1 evicted",
		"node/a drained",
		"summary: 1 node(s) drained",
	}, "\n") + "\n"
	got := countLines(out)
	want := lineCount{total: 13, podLines: 2, nodeLines: 2, waitLines: 6, waitChanges: 4, other: 3, stuck: 1, controlPlane: 1}
	if got != want {
		t.Errorf("countLines = %+v, want %+v", got, want)
	}
}

package faulttest

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/cluster"
	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

// outage is how long the API server stays down in the middle of the drain.
const outage = 10 * time.Second

// slowBudget puts replicas pods of app web on the env's first node, under a PDB that
// allows one disruption, each replacement taking readyDelay to become Ready (so the
// budget frees slowly), then adds the env's other nodes for the replacements.
func slowBudget(t *testing.T, e *fixture.Env, replicas int32, readyDelay time.Duration) {
	t.Helper()
	e.AddNodes(0)
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", replicas, e.Here(fixture.PodOptions{ReadyDelay: readyDelay})); err != nil {
		t.Fatal(err)
	}
	e.Ready("web", int(replicas))
	e.PDB("web", fixture.PDBSpec{App: "web", MaxUnavailable: fixture.Int(1)}, 1)
	for i := 1; i < len(e.Nodes); i++ {
		e.AddNodes(i)
	}
}

// Issue 10, test 3: the API server killed for 10 s in the middle of a drain under a slow
// budget, then restarted. The drain finishes without a re-run, or exits 1 naming the lost
// connection and a re-run finishes; nothing is violated. Not parallel: every other test
// would lose the API server too.
func TestAPIServerKilledMidDrain(t *testing.T) {
	e := fixture.NewEnv(t, shared, plugin, "a", "b")
	ensureRunning(t, cluster.APIServer)
	const pods = 6
	slowBudget(t, e, pods, 3*time.Second)
	e.Guard()
	evictions := watchEvictions(t, e)

	tl := newTimeline(t, "api-server-outage")
	var mu sync.Mutex
	var faultBegan, faultEnded, noticed, answered, resumed bool
	onLine := func(l line) {
		mu.Lock()
		defer mu.Unlock()
		if !faultBegan {
			return
		}
		switch {
		case !noticed && mentions(l.Text, "API server", "connection refused"):
			noticed = true
			tl.mark("drain notices: %s", l.Text)
		case noticed && !answered && mentions(l.Text, "answers again", "reachable again", "back"):
			answered = true
			tl.mark("drain says the server is back: %s", l.Text)
		case faultEnded && !resumed && strings.HasPrefix(l.Text, "evicting pod"):
			resumed = true
			tl.mark("drain evicts again: %s", l.Text)
		}
	}
	tl.mark("drain starts (%d pods, PDB maxUnavailable 1, replacements Ready after 3 s)", pods)
	r := start(t, e.Ctx, shared.Kubeconfig, onLine, "drain", e.Nodes[0], "--progress=plain")

	if err := evictions.waitFor(e.Ctx, 2); err != nil {
		t.Fatal(err)
	}
	allBefore, acceptedBefore := evictionRequests(t, e.Ctx)
	if err := shared.Kill(cluster.APIServer); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	faultBegan = true
	mu.Unlock()
	tl.mark("fault begins: kube-apiserver SIGKILLed after %d evictions", evictions.count())
	time.Sleep(outage)
	if err := shared.Restart(e.Ctx, cluster.APIServer); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	faultEnded = true
	mu.Unlock()
	tl.mark("fault ends: kube-apiserver restarted and ready")

	res := r.wait()
	tl.mark("drain finishes: exit %d", res.Code)
	out := res.Stdout + res.Stderr
	switch {
	case res.Code == 0:
	case res.Code == 1 && mentions(out, "API server", "connection refused"):
		again := run(t, e.Ctx, shared.Kubeconfig, "drain", e.Nodes[0], "--progress=plain")
		tl.mark("re-run finishes: exit %d", again.Code)
		if again.Code != 0 {
			t.Errorf("re-run after the outage: exit %d, want 0", again.Code)
		}
	default:
		t.Errorf("drain across the outage: exit %d, want 0 (or 1 naming the lost connection, then a re-run)", res.Code)
	}
	allAfter, acceptedAfter := evictionRequests(t, e.Ctx)
	tl.log()
	t.Logf("FIGURE api-server-outage: eviction requests counted by the API server: %.0f before the kill (%.0f accepted), %.0f after the restart (%.0f accepted), %.0f in all for %d pods",
		allBefore, acceptedBefore, allAfter, acceptedAfter, allBefore+allAfter, pods)

	if left := appPodsOn(e, "web", e.Nodes[0]); len(left) > 0 {
		t.Errorf("node %s still runs %v after the drain", e.Nodes[0], left)
	}
	if acceptedBefore+acceptedAfter < pods {
		t.Errorf("the API server accepted %.0f evictions, fewer than the %d pods that left", acceptedBefore+acceptedAfter, pods)
	}
	// Waits on the engine: it says out loud that it cannot reach the API server.
	if !noticed {
		t.Errorf("the drain never said it lost the API server (no line naming it after the fault began) [engine]")
	}
	e.Ready("web", pods)
}

// Issue 10, test 4: kube-controller-manager stopped in the middle of a drain, so the PDB's
// status is frozen. The drain says the budget's status is stale and never asks it again;
// --timeout gives 124 naming the PDB; once the controller-manager is back a drain finishes.
// Not parallel: every other test's budgets would freeze too.
func TestControllerManagerStoppedMidDrain(t *testing.T) {
	e := fixture.NewEnv(t, shared, plugin, "a", "b")
	ensureRunning(t, cluster.ControllerManager)
	slowBudget(t, e, 3, time.Second)
	e.Guard()
	evictions := watchEvictions(t, e)

	tl := newTimeline(t, "controller-manager-stopped")
	var mu sync.Mutex
	var staleAt time.Duration
	var staleAll float64 = -1
	onLine := func(l line) {
		mu.Lock()
		defer mu.Unlock()
		if staleAll < 0 && frozenNotice(l.Text) {
			staleAt = tl.mark("drain notices: %s", l.Text)
			// The API server's count at the notice, to show that nothing is asked after it.
			// (Not evictionRequests: this runs on the output reader's goroutine, where t.Fatal must not be called.)
			if n, err := shared.APIServerMetric(e.Ctx, "apiserver_request_total", map[string]string{"resource": "pods", "subresource": "eviction"}); err == nil {
				staleAll = n
			}
		}
	}
	// The stop races the controller-manager's last syncs: it may or may not have dropped
	// the evicted pod from disruptedPods, or created and counted its replacement. When the
	// status still lists the gone pod, or disagrees with the pods, the drain must call the
	// status stale within StaleAfter (30 s) and a probe interval (10 s) of the last change
	// it saw. When the disruption controller dropped the pod but the ReplicaSet controller
	// stopped before creating its replacement, the status is current (3 expected, 2 exist)
	// and the truth is that no replacement comes: the drain must say that, naming
	// kube-controller-manager. 75 s leaves room for a slow replacement.
	tl.mark("drain starts (3 pods, PDB maxUnavailable 1, --timeout 75s)")
	r := start(t, e.Ctx, shared.Kubeconfig, onLine, "drain", e.Nodes[0], "--progress=plain", "--timeout", "75s", "--wait-interval", "5s")
	if err := evictions.waitFor(e.Ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := shared.StopComponent(cluster.ControllerManager); err != nil {
		t.Fatal(err)
	}
	faultAt := time.Since(r.began)
	atStop, _ := evictionRequests(t, e.Ctx)
	tl.mark("fault begins: kube-controller-manager stopped after the first accepted eviction")

	res := r.wait()
	tl.mark("drain finishes: exit %d", res.Code)
	atEnd, _ := evictionRequests(t, e.Ctx)
	again := restartControllerManagerAndRedrain(t, e, tl)
	t.Logf("FIGURE controller-manager-stopped: eviction requests while the status was frozen: %.0f (%.0f after the stale notice)",
		atEnd-atStop, atEnd-max(staleAll, atStop))

	out := res.Stdout + res.Stderr
	if res.Code != 124 {
		t.Errorf("drain with a frozen budget and --timeout 75s: exit %d, want 124", res.Code)
	}
	// Never silent: while the status is frozen the wait is said again every
	// --wait-interval (5 s), with how long it has lasted and why.
	gap, last, repeated := time.Duration(0), faultAt, false
	for _, l := range r.lines {
		if l.At < faultAt {
			continue
		}
		gap, last = max(gap, l.At-last), l.At
		repeated = repeated || strings.Contains(l.Text, "(waiting for ")
	}
	t.Logf("FIGURE controller-manager-stopped: longest silence while the status was frozen: %s (--wait-interval 5s)", gap.Round(100*time.Millisecond))
	if !repeated || gap > 15*time.Second {
		t.Errorf("while the status was frozen the drain was silent for up to %s (wait said again: %v); want a wait line at least every --wait-interval", gap.Round(100*time.Millisecond), repeated)
	}
	fixture.MustContain(t, "drain output [wait lines: cause of the frozen budget]", res.Stderr, "cause: ", "kube-controller-manager", "remedy: ")
	if !strings.Contains(out, e.NS+"/web") && !mentions(out, "pdb web", "pdb/web", "budget web") {
		t.Errorf("the timed-out drain does not name the PDB %s/web", e.NS)
	}
	// Waits on the engine: the stale-status warning (or, when the status is current, the
	// missing replacements) and asking the budget no more after it.
	if !frozenNotice(out) {
		t.Errorf("drain output [engine: stale PDB status or missing replacements]: says neither %q nor %q:\n%s", staleNotice, missingNotice, out)
	}
	fixture.MustContain(t, "drain output [engine: names the component]", out, "kube-controller-manager")
	if staleAll >= 0 {
		t.Logf("stale notice at %s", staleAt.Round(100*time.Millisecond))
		if atEnd > staleAll {
			t.Errorf("the drain asked the frozen budget %.0f more times after calling it stale", atEnd-staleAll)
		}
	}
	if again.Code != 0 {
		t.Errorf("drain once kube-controller-manager is back: exit %d, want 0", again.Code)
	}
	if left := appPodsOn(e, "web", e.Nodes[0]); len(left) > 0 {
		t.Errorf("node %s still runs %v after the re-run", e.Nodes[0], left)
	}
}

// The engine's two truthful notices of a budget frozen by a stopped kube-controller-manager:
// its status is stale (it lists a gone pod or disagrees with the pods), or it is current
// and the evicted pods' replacements are not being created.
const (
	staleNotice   = "status is stale"
	missingNotice = "replacements have not been created"
)

// frozenNotice reports whether text carries either notice.
func frozenNotice(text string) bool {
	return strings.Contains(text, staleNotice) || strings.Contains(text, missingNotice)
}

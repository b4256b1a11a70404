package faulttest

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/cluster"
	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// controllerExit is one exit of a supervised controller process.
type controllerExit struct {
	code int
	log  string
}

// supervisedController runs "kubectl maintenance controller" with leader election (its
// Lease in the test's namespace, short timings) and starts it again 1 s after each exit,
// as the Deployment's restartPolicy Always does, until the test ends. It returns the exits.
func supervisedController(e *fixture.Env) func() []controllerExit {
	ctx, cancel := context.WithCancel(e.Ctx)
	var mu sync.Mutex
	var exits []controllerExit
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			cmd := exec.CommandContext(ctx, plugin, "--kubeconfig", shared.Kubeconfig, "controller", "--health-probe-bind-address=0",
				"--leader-elect", "--leader-election-namespace="+e.NS, "--leader-election-lease-duration=6s",
				"--leader-election-renew-deadline=4s", "--leader-election-retry-period=1s")
			logs := &fixture.SyncBuffer{}
			cmd.Stderr = logs
			err := cmd.Run()
			if ctx.Err() != nil {
				return
			}
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			}
			mu.Lock()
			exits = append(exits, controllerExit{code: code, log: logs.String()})
			mu.Unlock()
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}()
	e.T.Cleanup(func() { cancel(); <-done })
	return func() []controllerExit {
		mu.Lock()
		defer mu.Unlock()
		return append([]controllerExit(nil), exits...)
	}
}

// Issue 39, test 5: kube-apiserver stopped for 12 s under drain --server-side. The
// follower rides the outage out as a local drain does (says so once, reads again with
// backoff) and exits 0 when the object Succeeds. The controller, run as the Deployment
// runs it (leader election, restarted when it exits), loses its Lease in the outage: it
// exits non-zero saying why, and its next process resumes the run. Not parallel.
func TestServerSideFollowerRidesOutAPIServerOutage(t *testing.T) {
	e := fixture.NewEnv(t, shared, plugin, "a", "b")
	ensureRunning(t, cluster.APIServer)
	if r := e.Run("install"); r.Code != 0 {
		t.Fatalf("install: exit %d", r.Code)
	}
	const pods = 6
	slowBudget(t, e, pods, 3*time.Second)
	e.Guard()
	evictions := watchEvictions(t, e)
	exits := supervisedController(e)

	tl := newTimeline(t, "api-server-stopped-under-server-side")
	name := e.NS
	r := start(t, e.Ctx, shared.Kubeconfig, nil, "drain", e.Nodes[0], "--server-side", "--name", name)
	if err := evictions.waitFor(e.Ctx, 2); err != nil {
		t.Fatal(err)
	}
	if err := shared.StopComponent(cluster.APIServer); err != nil {
		t.Fatal(err)
	}
	tl.mark("fault begins: kube-apiserver stopped after %d evictions", evictions.count())
	time.Sleep(12 * time.Second)
	if err := shared.Restart(e.Ctx, cluster.APIServer); err != nil {
		t.Fatal(err)
	}
	tl.mark("fault ends: kube-apiserver started and ready")
	res := r.wait()
	tl.mark("follower exits %d", res.Code)

	if res.Code != 0 {
		t.Errorf("drain --server-side across the outage: exit %d, want 0", res.Code)
	}
	if n := strings.Count(res.Stderr, "cannot reach the API server"); n != 1 {
		t.Errorf("the follower said %d times that it cannot reach the API server, want once", n)
	}
	if !strings.Contains(res.Stderr, "answers again") {
		t.Errorf("the follower did not say the API server answers again")
	}
	m := &mntv1.Maintenance{}
	if err := mntClient(t).Get(e.Ctx, types.NamespacedName{Name: name}, m); err != nil {
		t.Fatal(err)
	}
	if m.Status.Phase != mntv1.PhaseSucceeded {
		t.Errorf("maintenance/%s: phase %s (%s), want Succeeded", name, m.Status.Phase, m.Status.Message)
	}
	for i, x := range exits() {
		lines := strings.Split(strings.TrimSpace(x.log), "\n")
		t.Logf("controller exit %d: code %d, last line: %s", i+1, x.code, lines[len(lines)-1])
		if x.code == 0 {
			t.Errorf("controller exit %d: code 0 while the test ran, want non-zero (its supervisor restarts it)", i+1)
		}
		if strings.Contains(x.log, "leader election lost") && !strings.Contains(x.log, "supervisor") {
			t.Errorf("controller exit %d: lost its Lease without saying it is to be restarted", i+1)
		}
	}
}

// mntClient is a client for Maintenances on the shared cluster.
func mntClient(t *testing.T) client.Client {
	t.Helper()
	s := runtime.NewScheme()
	if err := mntv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(shared.Config, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

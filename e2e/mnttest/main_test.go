// Package mnttest runs Maintenance objects through "kubectl maintenance controller", run
// as the built binary in a process, against the real local cluster, with the guard (no
// pod deleted without the Eviction API, no budget below desired).
package mnttest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/cluster"
	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

var (
	shared  *cluster.Cluster
	plugin  string
	install sync.Once
)

func TestMain(m *testing.M) { os.Exit(fixture.TestMain(m, &shared, &plugin)) }

// newEnv gives the test its namespace and nodes, with the CRDs installed.
func newEnv(t *testing.T, nodes ...string) *fixture.Env {
	e := fixture.NewEnv(t, shared, plugin, nodes...)
	install.Do(func() {
		if r := e.Run("install"); r.Code != 0 {
			t.Fatalf("install exit %d", r.Code)
		}
	})
	return e
}

// mclient is a client for Maintenances.
func mclient(t *testing.T) client.Client {
	t.Helper()
	cluster.Need(t, shared)
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

// controller is one "controller" process.
type controller struct {
	cmd  *exec.Cmd
	logs *fixture.SyncBuffer
	stop func()
	// exited is closed once the process has exited.
	exited chan struct{}
}

// startController runs "controller" as a process until the test ends (or stop is
// called); extra flags are added.
func startController(e *fixture.Env, extra ...string) (stop func()) {
	e.T.Helper()
	return runController(e, extra...).stop
}

func runController(e *fixture.Env, extra ...string) *controller {
	e.T.Helper()
	return runControllerOn(e, "", append([]string{"--health-probe-bind-address=0"}, extra...)...)
}

// runControllerOn is runController as another host would run it: with host set, the
// process runs in a UTS namespace of its own with that hostname (unshare --uts, which
// execs in place: the process's PID is the controller's), so that it cannot tell the
// other replicas' processes from its own host's, as a replica in another pod cannot. No
// flag is added but the kubeconfig (and --leader-elect=false unless extra names it).
func runControllerOn(e *fixture.Env, host string, extra ...string) *controller {
	e.T.Helper()
	ctx, cancel := context.WithCancel(e.Ctx)
	args := append([]string{"--kubeconfig", shared.Kubeconfig, "controller"}, extra...)
	if !strings.Contains(strings.Join(extra, " "), "--leader-elect") {
		args = append(args, "--leader-elect=false")
	}
	ctl := exec.CommandContext(ctx, plugin, args...)
	if host != "" {
		ctl = exec.CommandContext(ctx, "unshare", append([]string{"--uts", "--", "sh", "-c", `hostname "$0" && exec "$@"`, host, plugin}, args...)...)
	}
	logs := &fixture.SyncBuffer{}
	ctl.Stderr = logs
	if err := ctl.Start(); err != nil {
		e.T.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = ctl.Wait(); close(exited) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			<-exited
			s := logs.String()
			if len(s) > 4096 {
				s = s[len(s)-4096:]
			}
			e.T.Logf("controller %d log (last 4 KiB):\n%s", ctl.Process.Pid, s)
		})
	}
	e.T.Cleanup(stop)
	return &controller{cmd: ctl, logs: logs, stop: stop, exited: exited}
}

// create creates a Maintenance (deleted at the test's end).
func create(e *fixture.Env, mc client.Client, name string, spec mntv1.MaintenanceSpec) {
	e.T.Helper()
	m := &mntv1.Maintenance{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}
	if err := mc.Create(e.Ctx, m); err != nil {
		e.T.Fatal(err)
	}
	e.T.Cleanup(func() { _ = mc.Delete(context.Background(), m) })
}

// get reads a Maintenance.
func get(e *fixture.Env, mc client.Client, name string) *mntv1.Maintenance {
	e.T.Helper()
	m := &mntv1.Maintenance{}
	if err := mc.Get(e.Ctx, types.NamespacedName{Name: name}, m); err != nil {
		e.T.Fatal(err)
	}
	return m
}

// waitFor polls name until ok says so (the phases seen on the way are returned).
func waitFor(e *fixture.Env, mc client.Client, name, what string, ok func(*mntv1.Maintenance) bool) (*mntv1.Maintenance, []mntv1.Phase) {
	e.T.Helper()
	var seen []mntv1.Phase
	for {
		m := &mntv1.Maintenance{}
		err := mc.Get(e.Ctx, types.NamespacedName{Name: name}, m)
		if err != nil && !apierrors.IsNotFound(err) {
			e.T.Fatal(err)
		}
		if err == nil && (len(seen) == 0 || seen[len(seen)-1] != m.Status.Phase) {
			seen = append(seen, m.Status.Phase)
		}
		if ok(m) {
			return m, seen
		}
		select {
		case <-e.Ctx.Done():
			e.T.Fatalf("maintenance/%s: gave up waiting for %s (phases seen %v, status %+v)", name, what, seen, m.Status)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// evictions is the API server's count of eviction requests.
func evictions(e *fixture.Env) float64 {
	e.T.Helper()
	n, err := shared.APIServerMetric(e.Ctx, "apiserver_request_total", map[string]string{"resource": "pods", "subresource": "eviction"})
	if err != nil {
		e.T.Fatal(err)
	}
	return n
}

func names(e *fixture.Env, idx ...int) []string {
	var out []string
	for _, i := range idx {
		out = append(out, e.Nodes[i])
	}
	return out
}

func nodeStates(m *mntv1.Maintenance) string {
	var parts []string
	for _, n := range m.Status.Nodes {
		parts = append(parts, fmt.Sprintf("%s=%s/%d", n.Name, n.State, n.PodsLeft))
	}
	return strings.Join(parts, " ")
}

// oneNodeWorkload is node (named for the test) with pods of Deployment app on it, under
// budget when one is given (allowing allowed), a spare node for the replacements added
// after them, and the guard on.
func oneNodeWorkload(t *testing.T, node, app string, pods int32, budget *fixture.PDBSpec, allowed int32) *fixture.Env {
	t.Helper()
	e := newEnv(t, node, "spare")
	e.AddNodes(0)
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, app, pods, e.Here(fixture.PodOptions{})); err != nil {
		t.Fatal(err)
	}
	e.Ready(app, int(pods))
	if budget != nil {
		e.PDB(app, *budget, allowed)
	}
	e.AddNodes(1)
	e.Guard()
	return e
}

// threeNodesOfWeb is three nodes (a, b, c) with six pods of Deployment web (Ready after
// 1 s) under a budget of maxUnavailable 1, a spare node for the replacements added after
// them, and the guard on.
func threeNodesOfWeb(t *testing.T) *fixture.Env {
	t.Helper()
	e := newEnv(t, "a", "b", "c", "spare")
	e.AddNodes(0, 1, 2)
	slow := e.Here(fixture.PodOptions{ReadyDelay: time.Second})
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", 6, slow); err != nil {
		t.Fatal(err)
	}
	e.Ready("web", 6)
	e.PDB("web", fixture.PDBSpec{App: "web", MaxUnavailable: fixture.Int(1)}, 1)
	e.AddNodes(3)
	e.Guard()
	return e
}

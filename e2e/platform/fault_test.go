package platform

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/cluster"
	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

// TestEveryComponentKilledAndRestarted kills each component with SIGKILL, checks that the
// process is gone, restarts it and checks that the whole cluster works again: a new
// Deployment's pod is created (controller-manager), bound (scheduler) and Ready (kwok)
// through the API server, and an object written before the API server died is still there
// (etcd's data is kept). Not parallel: the other tests of the package would lose their
// watches while the API server is down.
func TestEveryComponentKilledAndRestarted(t *testing.T) {
	c := cluster.Need(t, shared)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ns, err := fixture.Namespace(ctx, c.Client, "fault")
	if err != nil {
		t.Fatal(err)
	}
	node := ns + "-a"
	t.Cleanup(func() {
		fixture.DeleteNodes(context.Background(), c.Client, node)
		_ = c.Client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
	})
	mine := map[string]string{"test": ns}
	if _, err := fixture.CreateNodes(ctx, c.Client, fixture.NodeSpec{Names: []string{node}, Labels: mine}); err != nil {
		t.Fatal(err)
	}
	kept := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kept", Namespace: ns}, Data: map[string]string{"k": "v"}}
	if _, err := c.Client.CoreV1().ConfigMaps(ns).Create(ctx, kept, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	for _, comp := range cluster.Components {
		t.Run(string(comp), func(t *testing.T) {
			before, err := c.PID(comp)
			if err != nil || before == 0 {
				t.Fatalf("PID(%s) = %d, %v; want a running process", comp, before, err)
			}
			if err := c.Kill(comp); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(fmt.Sprintf("/proc/%d", before)); err == nil && procAlive(before) {
				t.Fatalf("%s (pid %d) still running after Kill", comp, before)
			}
			if pid, _ := c.PID(comp); pid != 0 {
				t.Errorf("PID(%s) = %d after Kill, want 0", comp, pid)
			}
			if comp == cluster.APIServer {
				short, cancel := context.WithTimeout(ctx, 3*time.Second)
				_, err := c.Client.CoreV1().Namespaces().Get(short, ns, metav1.GetOptions{})
				cancel()
				if err == nil {
					t.Fatal("the API server answered while killed")
				}
				t.Logf("while the API server is down: %v", err)
			}
			began := time.Now()
			if err := c.Restart(ctx, comp); err != nil {
				t.Fatal(err)
			}
			after, err := c.PID(comp)
			if err != nil || after == 0 || after == before {
				t.Fatalf("PID(%s) after Restart = %d, %v; want a new running process (was %d)", comp, after, err, before)
			}
			t.Logf("FIGURE %s: restarted and healthy in %s (pid %d -> %d)", comp, time.Since(began).Round(time.Millisecond), before, after)

			got, err := c.Client.CoreV1().ConfigMaps(ns).Get(ctx, "kept", metav1.GetOptions{})
			if err != nil || got.Data["k"] != "v" {
				t.Fatalf("object written before the restart: %v, %v", got, err)
			}
			app := "after-" + string(comp)
			if _, err := fixture.Deployment(ctx, c.Client, ns, app, 1, fixture.PodOptions{NodeSelector: mine}); err != nil {
				t.Fatal(err)
			}
			pods, err := fixture.WaitPodsReady(ctx, c.Client, ns, "app="+app, 1)
			if err != nil {
				t.Fatalf("the cluster does not run a new pod after %s restarted: %v", comp, err)
			}
			if pods[0].Spec.NodeName != node {
				t.Errorf("pod %s on %q, want %q", pods[0].Name, pods[0].Spec.NodeName, node)
			}
		})
	}
}

// procAlive reports whether pid is running and not a zombie.
func procAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == ')' {
			return i+2 < len(b) && b[i+2] != 'Z'
		}
	}
	return true
}

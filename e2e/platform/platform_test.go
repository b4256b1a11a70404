package platform

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/cluster"
	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

// setup gives a test its own namespace and nodes (names prefixed by the test's namespace).
func setup(t *testing.T, nodes ...string) (context.Context, kubernetes.Interface, string, []string) {
	t.Helper()
	c := cluster.Need(t, shared)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	ns, err := fixture.Namespace(ctx, c.Client, "platform")
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(nodes))
	for i, n := range nodes {
		names[i] = ns + "-" + n
	}
	t.Cleanup(func() {
		fixture.DeleteNodes(context.Background(), c.Client, names...)
		_ = c.Client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
	})
	return ctx, c.Client, ns, names
}

func TestPDBStatusComputedByDisruptionController(t *testing.T) {
	t.Parallel()
	ctx, c, ns, nodes := setup(t, "a")
	if _, err := fixture.CreateNodes(ctx, c, fixture.NodeSpec{Names: nodes}); err != nil {
		t.Fatal(err)
	}
	on := fixture.PodOptions{NodeSelector: map[string]string{"kubernetes.io/hostname": nodes[0]}}
	if _, err := fixture.Deployment(ctx, c, ns, "web", 3, on); err != nil {
		t.Fatal(err)
	}
	if _, err := fixture.PDB(ctx, c, ns, "web", fixture.PDBSpec{App: "web", MaxUnavailable: fixture.Int(1)}); err != nil {
		t.Fatal(err)
	}
	pods, err := fixture.WaitPodsReady(ctx, c, ns, "app=web", 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods {
		if p.Spec.NodeName != nodes[0] {
			t.Errorf("pod %s on %q, want %q", p.Name, p.Spec.NodeName, nodes[0])
		}
	}
	pdb, err := fixture.WaitPDBAllows(ctx, c, ns, "web", 1)
	if err != nil {
		t.Fatal(err)
	}
	if pdb.Status.CurrentHealthy != 3 || pdb.Status.DesiredHealthy != 2 || pdb.Status.ExpectedPods != 3 {
		t.Errorf("pdb status = healthy %d desired %d expected %d, want 3 2 3",
			pdb.Status.CurrentHealthy, pdb.Status.DesiredHealthy, pdb.Status.ExpectedPods)
	}
}

// evict posts a policy/v1 Eviction for pod, with the pod's UID as precondition.
func evict(ctx context.Context, c kubernetes.Interface, p *corev1.Pod) error {
	return c.PolicyV1().Evictions(p.Namespace).Evict(ctx, &policyv1.Eviction{
		ObjectMeta:    metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace},
		DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &p.UID}},
	})
}

// noRetry returns a client that does not retry 429 answers by itself, so the test sees
// the server's first answer (client-go otherwise retries a 429 with Retry-After).
func noRetry(t *testing.T) kubernetes.Interface {
	cfg := rest.CopyConfig(shared.Config)
	drain.DisableEvictionRetries(cfg)
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestEvictionAPIAnswers(t *testing.T) {
	t.Parallel()
	ctx, c, ns, nodes := setup(t, "a", "b")
	// The test's own label keeps its pods off the nodes of tests running beside it.
	mine := map[string]string{"test": ns}
	if _, err := fixture.CreateNodes(ctx, c, fixture.NodeSpec{Names: nodes[:1], Labels: mine}); err != nil {
		t.Fatal(err)
	}
	on := fixture.PodOptions{NodeSelector: mine}
	for _, app := range []string{"frozen", "shared", "web"} {
		if _, err := fixture.Deployment(ctx, c, ns, app, 2, on); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		name string
		spec fixture.PDBSpec
	}{
		{"frozen", fixture.PDBSpec{App: "frozen", MaxUnavailable: fixture.Int(0)}},
		{"shared-a", fixture.PDBSpec{App: "shared", MaxUnavailable: fixture.Int(1)}},
		{"shared-b", fixture.PDBSpec{App: "shared", MinAvailable: fixture.Int(1)}},
		{"web", fixture.PDBSpec{App: "web", MaxUnavailable: fixture.Int(1)}},
	}
	for _, s := range steps {
		if _, err := fixture.PDB(ctx, c, ns, s.name, s.spec); err != nil {
			t.Fatal(err)
		}
	}
	podsOf := map[string][]*corev1.Pod{}
	for _, app := range []string{"frozen", "shared", "web"} {
		ps, err := fixture.WaitPodsReady(ctx, c, ns, "app="+app, 2)
		if err != nil {
			t.Fatal(err)
		}
		podsOf[app] = ps
	}
	if _, err := fixture.WaitPDBAllows(ctx, c, ns, "frozen", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := fixture.WaitPDBAllows(ctx, c, ns, "web", 1); err != nil {
		t.Fatal(err)
	}
	// The second node comes up only now, so every pod started on the first one.
	if _, err := fixture.CreateNodes(ctx, c, fixture.NodeSpec{Names: nodes[1:], Labels: mine}); err != nil {
		t.Fatal(err)
	}
	raw := noRetry(t)

	t.Run("a budget that allows 0 answers 429 naming the PDB", func(t *testing.T) {
		err := evict(ctx, raw, podsOf["frozen"][0])
		if !apierrors.IsTooManyRequests(err) {
			t.Fatalf("evict under maxUnavailable 0: got %v, want 429", err)
		}
		var status apierrors.APIStatus
		if !errors.As(err, &status) || status.Status().Details == nil {
			t.Fatalf("429 carries no details: %#v", err)
		}
		found := false
		for _, cause := range status.Status().Details.Causes {
			if cause.Type == policyv1.DisruptionBudgetCause && strings.Contains(cause.Message, "frozen") {
				found = true
			}
		}
		if !found {
			t.Errorf("no DisruptionBudget cause naming pdb frozen in %+v", status.Status().Details.Causes)
		}
	})

	t.Run("a pod under two PDBs answers 500", func(t *testing.T) {
		err := evict(ctx, raw, podsOf["shared"][0])
		if !apierrors.IsInternalError(err) || !strings.Contains(err.Error(), "more than one PodDisruptionBudget") {
			t.Fatalf("evict under two PDBs: got %v, want 500 about more than one PodDisruptionBudget", err)
		}
	})

	t.Run("an allowed eviction is replaced on another node", func(t *testing.T) {
		victim := podsOf["web"][0]
		// Cordon the first node so the replacement must go to the second.
		if _, err := c.CoreV1().Nodes().Patch(ctx, nodes[0], types.MergePatchType,
			[]byte(`{"spec":{"unschedulable":true}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := evict(ctx, raw, victim); err != nil {
			t.Fatalf("evict %s: %v", victim.Name, err)
		}
		pods, err := fixture.WaitPods(ctx, c, ns, "app=web", func(ps []*corev1.Pod) bool {
			ready := 0
			for _, p := range ps {
				if p.UID == victim.UID {
					return false
				}
				if fixture.PodReady(p) {
					ready++
				}
			}
			return ready == 2
		})
		if err != nil {
			t.Fatal(err)
		}
		moved := 0
		for _, p := range pods {
			if p.Spec.NodeName == nodes[1] {
				moved++
			}
		}
		if moved != 1 {
			t.Errorf("%d replacement pods on %s, want 1", moved, nodes[1])
		}
		if _, err := fixture.WaitPDBAllows(ctx, c, ns, "web", 1); err != nil {
			t.Fatal(err)
		}
	})
}

func TestNodesAndPodsStayReady(t *testing.T) {
	if testing.Short() {
		t.Skip("takes 3 minutes")
	}
	t.Parallel()
	ctx, c, ns, nodes := setup(t, "a")
	if _, err := fixture.CreateNodes(ctx, c, fixture.NodeSpec{Names: nodes}); err != nil {
		t.Fatal(err)
	}
	on := fixture.PodOptions{NodeSelector: map[string]string{"kubernetes.io/hostname": nodes[0]}}
	if _, err := fixture.Deployment(ctx, c, ns, "steady", 2, on); err != nil {
		t.Fatal(err)
	}
	if _, err := fixture.PDB(ctx, c, ns, "steady", fixture.PDBSpec{App: "steady", MaxUnavailable: fixture.Int(1)}); err != nil {
		t.Fatal(err)
	}
	if _, err := fixture.WaitPodsReady(ctx, c, ns, "app=steady", 2); err != nil {
		t.Fatal(err)
	}
	if _, err := fixture.WaitPDBAllows(ctx, c, ns, "steady", 1); err != nil {
		t.Fatal(err)
	}
	// Watch for three minutes: any moment the node, a pod or the budget goes bad fails.
	watchCtx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	errc := make(chan error, 3)
	go func() {
		_, err := fixture.WaitPods(watchCtx, c, ns, "app=steady", func(ps []*corev1.Pod) bool {
			for _, p := range ps {
				if !fixture.PodReady(p) {
					errc <- fmt.Errorf("pod %s went unready: %+v", p.Name, p.Status.Conditions)
					return true
				}
			}
			return false
		})
		errc <- err
	}()
	go func() {
		_, err := fixture.WaitPDB(watchCtx, c, ns, "steady", func(p *policyv1.PodDisruptionBudget) bool {
			if p.Status.DisruptionsAllowed != 1 {
				errc <- fmt.Errorf("pdb lost its budget: %+v", p.Status)
				return true
			}
			return false
		})
		errc <- err
	}()
	go func() {
		w, err := c.CoreV1().Nodes().Watch(watchCtx, metav1.ListOptions{FieldSelector: "metadata.name=" + nodes[0]})
		if err != nil {
			errc <- err
			return
		}
		for e := range w.ResultChan() {
			if n, ok := e.Object.(*corev1.Node); ok && !fixture.NodeReady(n) {
				errc <- fmt.Errorf("node %s went unready", n.Name)
				return
			}
		}
		errc <- watchCtx.Err()
	}()
	for range 3 {
		// A watch that ran out its three minutes ends with a wait timeout: that is success.
		if err := <-errc; !wait.Interrupted(err) {
			t.Fatalf("within 3 minutes: %v", err)
		}
	}
	n, err := c.CoreV1().Nodes().Get(ctx, nodes[0], metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !fixture.NodeReady(n) {
		t.Errorf("node %s not Ready after 3 minutes", n.Name)
	}
}

const crashHelperEnv = "KM_PLATFORM_CRASH_HELPER"

// crashHelper runs in a child test binary: it starts a cluster, prints its directory and
// dies at once with SIGKILL, running no cleanup at all.
func crashHelper() {
	c, err := cluster.Start(context.Background(), cluster.Options{})
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(1)
	}
	fmt.Println("DIR", c.Dir)
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
}

func TestNoProcessOutlivesAKilledHarness(t *testing.T) {
	cluster.Need(t, shared)
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashHelperEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var dir string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "DIR "); ok {
			dir = d
		} else {
			t.Log(sc.Text())
		}
	}
	_ = cmd.Wait()
	if dir == "" {
		t.Fatal("the child never started its cluster")
	}
	// The reaper checks once a second; give it 20 s to kill etcd, apiserver and the rest.
	deadline := time.Now().Add(20 * time.Second)
	for {
		left, err := cluster.ProcessesUnder(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes of a SIGKILLed harness still running after 20 s: %v", left)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

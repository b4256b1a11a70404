package draintest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/cluster"
	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

var (
	shared *cluster.Cluster
	plugin string // path of the built kubectl-maintenance
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "km-plugin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	plugin = filepath.Join(dir, "kubectl-maintenance")
	root, err := cluster.RepoRoot()
	if err == nil {
		cmd := exec.Command("go", "build", "-o", plugin, "./cmd/kubectl-maintenance")
		cmd.Dir = root
		cmd.Stderr = os.Stderr
		err = cmd.Run()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "build the plugin: %v\n", err)
		os.Exit(1)
	}
	code := cluster.Main(m, cluster.Options{}, &shared)
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// env is one test's namespace and nodes on the shared cluster.
type env struct {
	t     *testing.T
	ctx   context.Context
	c     kubernetes.Interface
	ns    string
	nodes []string
}

// newEnv gives the test its own namespace and kwok nodes named <ns>-<name>, labelled
// test=<ns> so that a workload can be kept on them with a node selector.
func newEnv(t *testing.T, nodes ...string) *env {
	t.Helper()
	c := cluster.Need(t, shared)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	t.Cleanup(cancel)
	ns, err := fixture.Namespace(ctx, c.Client, "drain")
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, ctx: ctx, c: c.Client, ns: ns}
	for _, n := range nodes {
		e.nodes = append(e.nodes, ns+"-"+n)
	}
	t.Cleanup(func() {
		fixture.DeleteNodes(context.Background(), c.Client, e.nodes...)
		_ = c.Client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
	})
	return e
}

// addNodes creates the env's nodes with the given indexes (all when none given).
func (e *env) addNodes(idx ...int) {
	e.t.Helper()
	var names []string
	if len(idx) == 0 {
		names = e.nodes
	}
	for _, i := range idx {
		names = append(names, e.nodes[i])
	}
	if _, err := fixture.CreateNodes(e.ctx, e.c, fixture.NodeSpec{Names: names, Labels: map[string]string{"test": e.ns}}); err != nil {
		e.t.Fatal(err)
	}
}

// here keeps pods on this test's nodes.
func (e *env) here(o fixture.PodOptions) fixture.PodOptions {
	o.NodeSelector = map[string]string{"test": e.ns}
	return o
}

// result is one run of the plugin.
type result struct {
	stdout, stderr string
	code           int
	elapsed        time.Duration
}

// run runs the plugin against the shared cluster, as a user would.
func (e *env) run(args ...string) result {
	e.t.Helper()
	return e.runCtx(e.ctx, nil, args...)
}

func (e *env) runCtx(ctx context.Context, started func(*exec.Cmd), args ...string) result {
	e.t.Helper()
	cmd := exec.CommandContext(ctx, plugin, append([]string{"--kubeconfig", shared.Kubeconfig}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	began := time.Now()
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	if started != nil {
		started(cmd)
	}
	err := cmd.Wait()
	r := result{stdout: out.String(), stderr: errb.String(), elapsed: time.Since(began)}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatalf("run plugin: %v", err)
	}
	e.t.Logf("$ kubectl maintenance %s  (exit %d, %s)\n%s%s", strings.Join(args, " "), r.code, r.elapsed.Round(time.Millisecond), r.stdout, r.stderr)
	return r
}

// summary parses the NDJSON summary line of a -o json run.
func (r result) summary(t *testing.T) map[string]any {
	t.Helper()
	var last map[string]any
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("stdout line is not JSON: %q: %v", sc.Text(), err)
		}
		last = ev
	}
	if last == nil || last["type"] != "summary" {
		t.Fatalf("last NDJSON line is not a summary: %v", last)
	}
	return last["summary"].(map[string]any)
}

// guard fails the test if, while it runs, any pod of the namespace is deleted without
// going through the Eviction API (no DisruptionTarget condition) or any PDB's healthy
// count drops below its desired count.
type guard struct {
	mu         sync.Mutex
	violations []string
	deleted    int
}

func (e *env) guard() *guard {
	e.t.Helper()
	g := &guard{}
	ctx, cancel := context.WithCancel(e.ctx)
	pw, err := e.c.CoreV1().Pods(e.ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	bw, err := e.c.PolicyV1().PodDisruptionBudgets(e.ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for ev := range pw.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok || (ev.Type != watch.Deleted && p.DeletionTimestamp == nil) {
				continue
			}
			if !evictedByAPI(p) {
				g.add(fmt.Sprintf("pod %s deleted without the Eviction API (no DisruptionTarget condition)", p.Name))
			} else if ev.Type == watch.Deleted {
				g.mu.Lock()
				g.deleted++
				g.mu.Unlock()
			}
		}
	}()
	go func() {
		defer wg.Done()
		for ev := range bw.ResultChan() {
			b, ok := ev.Object.(*policyv1.PodDisruptionBudget)
			if !ok || ev.Type == watch.Deleted || b.Status.ObservedGeneration != b.Generation {
				continue
			}
			if b.Status.CurrentHealthy < b.Status.DesiredHealthy {
				g.add(fmt.Sprintf("pdb %s: %d healthy pods, below the %d it needs", b.Name, b.Status.CurrentHealthy, b.Status.DesiredHealthy))
			}
		}
	}()
	e.t.Cleanup(func() {
		cancel()
		wg.Wait()
		for _, v := range g.violations {
			e.t.Errorf("guard: %s", v)
		}
	})
	return g
}

func (g *guard) add(v string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.violations = append(g.violations, v)
}

func evictedByAPI(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue && c.Reason == "EvictionByEvictionAPI" {
			return true
		}
	}
	return false
}

// podsOn lists the namespace's pods bound to node.
func (e *env) podsOn(node string) []corev1.Pod {
	e.t.Helper()
	list, err := e.c.CoreV1().Pods(e.ns).List(e.ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
	if err != nil {
		e.t.Fatal(err)
	}
	return list.Items
}

func (e *env) node(name string) *corev1.Node {
	e.t.Helper()
	n, err := e.c.CoreV1().Nodes().Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

// ready waits until n pods of app are Ready.
func (e *env) ready(app string, n int) []*corev1.Pod {
	e.t.Helper()
	ps, err := fixture.WaitPodsReady(e.ctx, e.c, e.ns, "app="+app, n)
	if err != nil {
		e.t.Fatal(err)
	}
	return ps
}

// pdb creates a PDB over app and waits until its status is current and allows want.
func (e *env) pdb(name string, spec fixture.PDBSpec, want int32) {
	e.t.Helper()
	if _, err := fixture.PDB(e.ctx, e.c, e.ns, name, spec); err != nil {
		e.t.Fatal(err)
	}
	if _, err := fixture.WaitPDBAllows(e.ctx, e.c, e.ns, name, want); err != nil {
		e.t.Fatal(err)
	}
}

func mustContain(t *testing.T, what, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Errorf("%s does not contain %q:\n%s", what, sub, s)
		}
	}
}

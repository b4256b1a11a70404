package faulttest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/cluster"
	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

// timeline records what happened when, from its start, and logs it as FIGURE lines.
type timeline struct {
	t     *testing.T
	name  string
	began time.Time
	mu    sync.Mutex
	marks []string
}

func newTimeline(t *testing.T, name string) *timeline {
	return &timeline{t: t, name: name, began: time.Now()}
}

// mark records what at the current time and returns the offset.
func (tl *timeline) mark(format string, args ...any) time.Duration {
	at := time.Since(tl.began)
	tl.mu.Lock()
	tl.marks = append(tl.marks, fmt.Sprintf("t=%5.1fs %s", at.Seconds(), fmt.Sprintf(format, args...)))
	tl.mu.Unlock()
	return at
}

// log writes the timeline as FIGURE lines.
func (tl *timeline) log() {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	for _, m := range tl.marks {
		tl.t.Logf("FIGURE %s: %s", tl.name, m)
	}
}

// line is one line the plugin wrote, with when (from the run's start) and where.
type line struct {
	At     time.Duration
	Stream string
	Text   string
}

// running is a plugin process whose output is read line by line as it comes.
type running struct {
	t       *testing.T
	args    []string
	cmd     *exec.Cmd
	began   time.Time
	mu      sync.Mutex
	lines   []line
	out     bytes.Buffer
	errOut  bytes.Buffer
	readers sync.WaitGroup
}

// start runs the plugin with kubeconfig; onLine (may be nil) sees every output line as it
// is written, from the reading goroutines.
func start(t *testing.T, ctx context.Context, kubeconfig string, onLine func(line), args ...string) *running {
	t.Helper()
	r := &running{t: t, args: args}
	r.cmd = exec.CommandContext(ctx, plugin, append([]string{"--kubeconfig", kubeconfig}, args...)...)
	stdout, err := r.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := r.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	r.began = time.Now()
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	read := func(name string, from io.Reader, into *bytes.Buffer) {
		defer r.readers.Done()
		sc := bufio.NewScanner(from)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			l := line{At: time.Since(r.began), Stream: name, Text: sc.Text()}
			r.mu.Lock()
			r.lines = append(r.lines, l)
			into.WriteString(l.Text + "\n")
			r.mu.Unlock()
			if onLine != nil {
				onLine(l)
			}
		}
	}
	r.readers.Add(2)
	go read("stdout", stdout, &r.out)
	go read("stderr", stderr, &r.errOut)
	return r
}

// wait waits for the process and returns its result, logging its output with times.
func (r *running) wait() fixture.Result {
	r.t.Helper()
	r.readers.Wait()
	err := r.cmd.Wait()
	res := fixture.Result{Stdout: r.out.String(), Stderr: r.errOut.String(), Elapsed: time.Since(r.began)}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		res.Code = ee.ExitCode()
	} else if err != nil {
		r.t.Fatalf("run plugin: %v", err)
	}
	var b strings.Builder
	for _, l := range r.lines {
		fmt.Fprintf(&b, "  %6.1fs %s: %s\n", l.At.Seconds(), l.Stream, l.Text)
	}
	r.t.Logf("$ kubectl maintenance %s  (exit %d, %s)\n%s", strings.Join(r.args, " "), res.Code, res.Elapsed.Round(time.Millisecond), b.String())
	return res
}

// run runs the plugin to its end.
func run(t *testing.T, ctx context.Context, kubeconfig string, args ...string) fixture.Result {
	t.Helper()
	return start(t, ctx, kubeconfig, nil, args...).wait()
}

// evictionWatch counts the distinct pods of ns the Eviction API has marked
// (DisruptionTarget, EvictionByEvictionAPI) and lets a test wait for the n-th.
type evictionWatch struct {
	mu      sync.Mutex
	evicted map[types.UID]bool
	changed chan struct{}
}

func watchEvictions(t *testing.T, e *fixture.Env) *evictionWatch {
	t.Helper()
	ctx, cancel := context.WithCancel(e.Ctx)
	pods := e.C.CoreV1().Pods(e.NS)
	events, err := fixture.Rewatch(ctx, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return pods.List(ctx, o) }, pods.Watch)
	if err != nil {
		t.Fatal(err)
	}
	w := &evictionWatch{evicted: map[types.UID]bool{}, changed: make(chan struct{}, 1)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range events {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok || !fixture.EvictedByAPI(p) {
				continue
			}
			w.mu.Lock()
			w.evicted[p.UID] = true
			w.mu.Unlock()
			select {
			case w.changed <- struct{}{}:
			default:
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return w
}

func (w *evictionWatch) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.evicted)
}

// waitFor waits until n pods have been evicted.
func (w *evictionWatch) waitFor(ctx context.Context, n int) error {
	for w.count() < n {
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for %d evictions (saw %d): %w", n, w.count(), ctx.Err())
		case <-w.changed:
		}
	}
	return nil
}

// evictionRequests is what the API server counted of eviction requests: all of them, and
// the accepted ones (201). The counters start again from zero when the server restarts.
func evictionRequests(t *testing.T, ctx context.Context) (all, accepted float64) {
	t.Helper()
	match := map[string]string{"resource": "pods", "subresource": "eviction"}
	all, err := shared.APIServerMetric(ctx, "apiserver_request_total", match)
	if err != nil {
		t.Fatal(err)
	}
	match["code"] = "201"
	if accepted, err = shared.APIServerMetric(ctx, "apiserver_request_total", match); err != nil {
		t.Fatal(err)
	}
	return all, accepted
}

// appPodsOn lists the pods of app on node that are not terminating.
func appPodsOn(e *fixture.Env, app, node string) []string {
	var out []string
	for _, p := range e.PodsOn(node) {
		if p.Labels["app"] == app {
			out = append(out, p.Name)
		}
	}
	return out
}

// ensureRunning restarts comp at the end of the test if the test left it down.
func ensureRunning(t *testing.T, comp cluster.Component) {
	t.Cleanup(func() {
		if shared == nil {
			return // no cluster (-short): nothing was stopped
		}
		if pid, _ := shared.PID(comp); pid == 0 {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := shared.Restart(ctx, comp); err != nil {
				t.Errorf("restart %s after the test: %v", comp, err)
			}
		}
	})
}

// mentions reports whether s contains any of subs, ignoring case.
func mentions(s string, subs ...string) bool {
	s = strings.ToLower(s)
	for _, sub := range subs {
		if strings.Contains(s, strings.ToLower(sub)) {
			return true
		}
	}
	return false
}

// waitSchedulable waits, by watch, until node carries no NoSchedule taint (a new node
// carries node.kubernetes.io/not-ready until the node lifecycle controller sees it Ready).
func waitSchedulable(t *testing.T, e *fixture.Env, node string) {
	t.Helper()
	nodes := e.C.CoreV1().Nodes()
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", node).String()
			return nodes.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", node).String()
			return nodes.Watch(ctx, o)
		},
	}
	_, err := watchtools.UntilWithSync(e.Ctx, lw, &corev1.Node{}, nil, func(ev watch.Event) (bool, error) {
		n, ok := ev.Object.(*corev1.Node)
		if !ok || ev.Type == watch.Deleted {
			return false, nil
		}
		for _, taint := range n.Spec.Taints {
			if taint.Effect == corev1.TaintEffectNoSchedule {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("wait for node %s to lose its NoSchedule taints: %v", node, err)
	}
}

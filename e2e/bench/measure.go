package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// observer records, from watches, when pods were evicted and how each PDB's status moved.
type observer struct {
	mu       sync.Mutex
	start    time.Time
	evicted  map[string]time.Time // pod -> first seen terminating
	appOf    map[string]string    // pod -> app label
	nodeOf   map[string]string    // evicted pod (name/uid) -> its node
	statuses map[string][]pdbPoint
	// ready are the times pods were first seen Ready (by UID) during the run.
	ready     []time.Time
	readyUIDs map[string]bool
	// hw follows the disruption controller: its holds and status writes (fleet_holds.go).
	hw holdWatch
}

type pdbPoint struct {
	at                                  time.Time
	allowed, current, desired, expected int32
	disrupted                           map[string]time.Time // status.disruptedPods: pod name -> the eviction's time (nil: none)
}

func observe(ctx context.Context, c kubernetes.Interface, ns string) (*observer, error) {
	o := &observer{start: time.Now(), evicted: map[string]time.Time{}, appOf: map[string]string{}, nodeOf: map[string]string{}, statuses: map[string][]pdbPoint{}, readyUIDs: map[string]bool{},
		hw: newHoldWatch()}
	// From the current resourceVersion (no ADDED burst of every pod, which a loaded API
	// server answers by dropping a slow watcher), re-established if the server closes it.
	now, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return nil, fmt.Errorf("list pods: %w", err)
	}
	pw, err := watchtools.NewRetryWatcherWithContext(ctx, now.ResourceVersion, &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return c.CoreV1().Pods(ns).Watch(ctx, o)
		}})
	if err != nil {
		return nil, fmt.Errorf("watch pods: %w", err)
	}
	// The budgets: their status now, then every change, the watch re-established too (the
	// API server closes watches while a hundred kubectl processes hammer it).
	budgets, err := c.PolicyV1().PodDisruptionBudgets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list pdbs: %w", err)
	}
	for i := range budgets.Items {
		o.record(&budgets.Items[i])
	}
	bw, err := watchtools.NewRetryWatcherWithContext(ctx, budgets.ResourceVersion, &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return c.PolicyV1().PodDisruptionBudgets(ns).Watch(ctx, o)
		}})
	if err != nil {
		return nil, fmt.Errorf("watch pdbs: %w", err)
	}
	go func() {
		for ev := range pw.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			o.mu.Lock()
			if p.DeletionTimestamp == nil && podReady(p) && !o.readyUIDs[string(p.UID)] {
				o.readyUIDs[string(p.UID)] = true
				o.ready = append(o.ready, time.Now())
			}
			o.appOf[p.Name] = p.Labels["app"]
			if _, seen := o.evicted[p.Name+"/"+string(p.UID)]; !seen && (p.DeletionTimestamp != nil || ev.Type == watch.Deleted) {
				o.evicted[p.Name+"/"+string(p.UID)] = time.Now()
				o.nodeOf[p.Name+"/"+string(p.UID)] = p.Spec.NodeName
			}
			o.seePod(p, ev.Type == watch.Deleted, time.Now())
			o.mu.Unlock()
		}
	}()
	go func() {
		for ev := range bw.ResultChan() {
			if b, ok := ev.Object.(*policyv1.PodDisruptionBudget); ok && ev.Type != watch.Deleted {
				o.record(b)
			}
		}
	}()
	return o, nil
}

// record adds a budget's status, once the disruption controller has computed it for the
// budget's current spec.
func (o *observer) record(b *policyv1.PodDisruptionBudget) { o.recordAt(b, time.Now()) }

// recordAt is record with the time the status was seen.
func (o *observer) recordAt(b *policyv1.PodDisruptionBudget, now time.Time) {
	if b.Status.ObservedGeneration != b.Generation {
		return
	}
	s := b.Status
	var disrupted map[string]time.Time
	for name, t := range s.DisruptedPods {
		if disrupted == nil {
			disrupted = map[string]time.Time{}
		}
		disrupted[name] = t.Time
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	pts := o.statuses[b.Name]
	var prev map[string]time.Time
	if len(pts) > 0 {
		prev = pts[len(pts)-1].disrupted
	}
	o.seeBudget(b, prev, len(pts) > 0, disrupted, now)
	o.statuses[b.Name] = append(pts, pdbPoint{now, s.DisruptionsAllowed, s.CurrentHealthy, s.DesiredHealthy, s.ExpectedPods, disrupted})
}

// check fills the ceiling figures: worst unavailable per PDB and any violation.
func (o *observer) check(r *Result, main string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	r.MaxUnavailable, r.Allowed = map[string]int32{}, map[string]int32{}
	for name, pts := range o.statuses {
		for i, p := range pts {
			if i == 0 {
				r.Allowed[name] = p.expected - p.desired
			}
			r.MaxUnavailable[name] = max(r.MaxUnavailable[name], p.expected-p.current)
			if p.current < p.desired {
				r.Violations = append(r.Violations, fmt.Sprintf("pdb %s had %d healthy pods, below the %d it needs", name, p.current, p.desired))
			}
			if name == main {
				r.Timeline = append(r.Timeline, [2]float64{p.at.Sub(o.start).Seconds(), float64(p.expected - p.current)})
			}
		}
	}
}

var responseLine = regexp.MustCompile(`"Response" verb="([A-Z]+)" url="([^"]+)" status="(\d+)`)

// countRequests reads client-go's -v=6 request log: requests by "VERB resource".
func countRequests(stderr []byte) (map[string]int, int) {
	out := map[string]int{}
	total := 0
	sc := bufio.NewScanner(bytes.NewReader(stderr))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		m := responseLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		total++
		out[m[1]+" "+resourceOf(m[2])]++
	}
	return out, total
}

// resourceOf turns an API URL into its resource (and subresource): pods/eviction, nodes.
func resourceOf(url string) string {
	path := url
	if i := strings.Index(path, "://"); i >= 0 {
		path = path[i+3:]
		if j := strings.IndexByte(path, '/'); j >= 0 {
			path = path[j:]
		}
	}
	path = strings.SplitN(path, "?", 2)[0]
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return path
	}
	if len(parts) >= 2 && parts[0] == "namespaces" && len(parts) > 2 {
		parts = parts[2:]
	}
	switch len(parts) {
	case 0:
		return "discovery"
	case 1, 2:
		return parts[0]
	}
	return parts[0] + "/" + parts[2]
}

// evictionMetrics reads the API server's eviction counters: all requests and 429s.
func evictionMetrics(ctx context.Context, c kubernetes.Interface) (total, refused float64, err error) {
	b, err := c.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("scrape /metrics: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if !strings.HasPrefix(l, "apiserver_request_total{") || !strings.Contains(l, `resource="pods"`) ||
			!strings.Contains(l, `subresource="eviction"`) || !strings.Contains(l, `verb="POST"`) && !strings.Contains(l, `verb="CREATE"`) {
			continue
		}
		f := strings.Fields(l)
		v, _ := strconv.ParseFloat(f[len(f)-1], 64)
		total += v
		if strings.Contains(l, `code="429"`) {
			refused += v
		}
	}
	return total, refused, nil
}

func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

func machine() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s, %d cores, %s/%s, %s", host, runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version())
}

// podReady reports whether the pod's Ready condition is true.
func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

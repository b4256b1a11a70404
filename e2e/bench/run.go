package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// runOne sets up a fresh workload for phase, drains its nodes with tool, and measures.
func runOne(ctx context.Context, cfg Config, phase, tool string) (*Result, error) {
	c := cfg.Cluster.Client
	setupCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	w, err := setUp(setupCtx, c, cfg.Profile, phase, tool)
	if err != nil {
		return nil, fmt.Errorf("set up: %w", err)
	}
	defer w.tearDown(c)
	onDrained := map[string]int{}
	for _, n := range w.drain {
		pods, err := c.CoreV1().Pods(w.id).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + n})
		if err != nil {
			return nil, fmt.Errorf("list pods: %w", err)
		}
		for _, p := range pods.Items {
			if app := p.Labels["app"]; app != "agent" { // DaemonSet pods stay
				onDrained[app]++
			}
		}
	}
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	obs, err := observe(watchCtx, c, w.id)
	if err != nil {
		return nil, err
	}
	evBefore, refBefore, err := evictionMetrics(ctx, c)
	if err != nil {
		return nil, err
	}
	r := &Result{Phase: phase, Tool: tool}
	began := time.Now()
	var outs [][]byte
	var errs []byte
	switch tool {
	case "ours":
		args := append([]string{"--kubeconfig", cfg.Cluster.Kubeconfig, "drain"}, w.drain...)
		args = append(args, "--ignore-daemonsets", "--delete-emptydir-data", "--timeout", "15m", "-o", "json", "-v=6",
			fmt.Sprintf("--max-parallel-nodes=%d", len(w.drain)))
		out, stderr, code, rss := run(ctx, cfg.Plugin, args)
		outs, errs, r.ExitCode, r.PeakRSSMiB = [][]byte{out}, stderr, code, rss
	case "kubectl-seq":
		args := append([]string{"--kubeconfig", cfg.Cluster.Kubeconfig, "drain"}, w.drain...)
		args = append(args, "--ignore-daemonsets", "--delete-emptydir-data", "--timeout", "15m", "-v=6")
		out, stderr, code, rss := run(ctx, cfg.Kubectl, args)
		outs, errs, r.ExitCode, r.PeakRSSMiB = [][]byte{out}, stderr, code, rss
	case "kubectl-par":
		var mu sync.Mutex
		var wg sync.WaitGroup
		for _, n := range w.drain {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out, stderr, code, rss := run(ctx, cfg.Kubectl, []string{"--kubeconfig", cfg.Cluster.Kubeconfig, "drain", n,
					"--ignore-daemonsets", "--delete-emptydir-data", "--timeout", "15m", "-v=6"})
				mu.Lock()
				defer mu.Unlock()
				outs, errs = append(outs, out), append(errs, stderr...)
				r.ExitCode, r.PeakRSSMiB = max(r.ExitCode, code), max(r.PeakRSSMiB, rss)
			}()
		}
		wg.Wait()
	default:
		return nil, fmt.Errorf("unknown tool %q (want ours, kubectl-seq or kubectl-par)", tool)
	}
	r.WallSec = time.Since(began).Seconds()
	if cfg.RawDir != "" {
		base := filepath.Join(cfg.RawDir, phase+"-"+tool)
		_ = os.WriteFile(base+".stdout", bytes.Join(outs, nil), 0o644)
		_ = os.WriteFile(base+".stderr", errs, 0o644)
	}
	// Let the last status updates of the watches arrive before reading them.
	time.Sleep(time.Second)
	evAfter, refAfter, err := evictionMetrics(ctx, c)
	if err != nil {
		return nil, err
	}
	r.Evictions, r.Refused = evAfter-evBefore, refAfter-refBefore
	r.ClientRequests, r.ClientRequestsTotal = countRequests(errs)
	for _, n := range onDrained {
		r.Evicted += n
	}
	tc := obs.tc()
	r.TcSec = tc.Seconds()
	r.LimitSec = windowLimit(obs.allowances(), []map[string]int{onDrained}, 1, obs.tcOf(), w.termination).Seconds()
	obs.check(r, w.mainPDB)
	if cfg.RawDir != "" {
		_ = obs.dump(filepath.Join(cfg.RawDir, phase+"-"+tool+".observed.json"))
	}
	if tool == "ours" {
		r.LagMedianMs, r.LagP99Ms = lag(outs[0])
	}
	if r.ExitCode != 0 {
		tail := string(errs)
		if i := strings.LastIndex(tail, "error:"); i >= 0 {
			tail = tail[i:]
		}
		return r, fmt.Errorf("%s exited %d: %.300s", tool, r.ExitCode, tail)
	}
	return r, nil
}

// run runs a command and returns its stdout, stderr, exit code and peak RSS (MiB).
func run(ctx context.Context, bin string, args []string) ([]byte, []byte, int, float64) {
	p := runProc(ctx, bin, args)
	return p.stdout, p.stderr, p.code, p.rssMiB
}

// lag reads, from our NDJSON stream, the time from each PDB watch event that woke a
// waiting pod to that pod's eviction request (the engine measures it: lag_ms).
func lag(ndjson []byte) (median, p99 float64) {
	var ds []time.Duration
	sc := bufio.NewScanner(bytes.NewReader(ndjson))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev struct {
			Type  string  `json:"type"`
			LagMs float64 `json:"lag_ms"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Type == "pod.eviction_started" && ev.LagMs > 0 {
			ds = append(ds, time.Duration(ev.LagMs*float64(time.Millisecond)))
		}
	}
	return float64(percentile(ds, 0.5).Microseconds()) / 1000, float64(percentile(ds, 0.99).Microseconds()) / 1000
}

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/cluster"
	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

var (
	shared *cluster.Cluster
	plugin string
)

func TestMain(m *testing.M) { os.Exit(fixture.TestMain(m, &shared, &plugin)) }

// TestDemoShort runs the demo in its short form on the package's own local cluster and
// checks what the demo is for, from the plugin's NDJSON and the API server's metrics (no
// timing asserted): at least 10 pods evicted through the Eviction API across at least two
// waves, one budget wait that cleared (a pod held back by a budget, then evicted), and the
// side-by-side line, with both drains evicting every pod of their nodes through the
// Eviction API.
func TestDemoShort(t *testing.T) {
	c := cluster.Need(t, shared)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	out := &logWriter{t: t}
	d := &demo{options: options{plugin: plugin, kubeconfig: c.Kubeconfig, short: true, json: true, out: out}, c: c}
	before, _, err := d.evictions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.run(ctx); err != nil {
		t.Fatal(err)
	}
	accepted, _, err := d.evictions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out.flush()

	var drains []drainEvents
	for _, r := range d.ran {
		if r.json {
			drains = append(drains, parseDrain(t, r))
		}
	}
	evicted, waves, cleared := 0, map[int]bool{}, []string{}
	planWaves := 0
	for _, dr := range drains {
		evicted += len(dr.evicted)
		for _, w := range dr.evicted {
			if w > 0 {
				waves[w] = true
			}
		}
		cleared = append(cleared, dr.cleared...)
		planWaves = max(planWaves, dr.planWaves)
	}
	t.Logf("%d drains with NDJSON: %d pods evicted, waves %v (the plans: up to %d), budget waits cleared: %v; the API server accepted %.0f evictions",
		len(drains), evicted, waves, planWaves, cleared, accepted-before)
	for _, check := range []struct {
		what string
		ok   bool
	}{
		{"at least two drains run with -o json (pool blue's and the side by side's)", len(drains) >= 2},
		{"at least 10 pods evicted by the plugin", evicted >= 10},
		{"the API server accepted at least as many evictions as the plugin reports evicted pods", accepted-before >= float64(evicted)},
		{"pods evicted in at least two waves", len(waves) >= 2},
		{"a plan of at least two waves", planWaves >= 2},
		{"a budget wait cleared: a pod held back by a PDB, then evicted", len(cleared) >= 1},
		{"the side-by-side line printed", regexp.MustCompile(`(?m)^side by side: kubectl-maintenance [0-9.]+s, kubectl drain [0-9.]+s \(same workload on twin nodes\): [0-9.]+x$`).MatchString(out.all.String())},
		{"our side-by-side drain evicted every pod of its nodes through the Eviction API", d.side.ours.pods >= 10 && d.side.ours.accepted >= float64(d.side.ours.pods)},
		{"kubectl drain evicted every pod of its nodes through the Eviction API", d.side.kubectl.pods == d.side.ours.pods && d.side.kubectl.accepted >= float64(d.side.kubectl.pods)},
	} {
		if !check.ok {
			t.Errorf("want %s", check.what)
		}
	}
}

// drainEvents is what one drain's NDJSON says.
type drainEvents struct {
	// planWaves is the waves of the drain's plan.
	planWaves int
	// evicted maps each evicted pod to its wave (its pod.eviction_started's).
	evicted map[string]int
	// cleared are the pods held back by a budget and evicted afterwards.
	cleared []string
}

func parseDrain(t *testing.T, r result) drainEvents {
	t.Helper()
	dr := drainEvents{evicted: map[string]int{}}
	blocked, wave := map[string]bool{}, map[string]int{}
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev struct {
			Type string `json:"type"`
			Pod  string `json:"pod"`
			PDB  string `json:"pdb"`
			Wave int    `json:"wave"`
			Plan *struct {
				Waves int `json:"waves"`
			} `json:"plan"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("%v: stdout line is not JSON: %q: %v", r.args, sc.Text(), err)
		}
		switch ev.Type {
		case "plan":
			dr.planWaves = max(dr.planWaves, ev.Plan.Waves)
		case "pod.eviction_blocked":
			if ev.PDB != "" {
				blocked[ev.Pod] = true
			}
		case "pod.eviction_started":
			wave[ev.Pod] = ev.Wave
		case "pod.evicted":
			dr.evicted[ev.Pod] = wave[ev.Pod]
			if blocked[ev.Pod] {
				dr.cleared = append(dr.cleared, ev.Pod)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return dr
}

// logWriter keeps everything the demo prints and logs it line by line.
type logWriter struct {
	t    *testing.T
	mu   sync.Mutex
	all  strings.Builder
	line []byte
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.all.Write(p)
	w.line = append(w.line, p...)
	for {
		i := bytes.IndexByte(w.line, '\n')
		if i < 0 {
			break
		}
		w.t.Log(string(w.line[:i]))
		w.line = w.line[i+1:]
	}
	return len(p), nil
}

func (w *logWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.line) > 0 {
		w.t.Log(string(w.line))
		w.line = nil
	}
}

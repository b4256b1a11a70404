// Command bench brings up the local cluster and drains the same workloads with kubectl
// drain (nodes one after another, and one process per node in parallel) and with
// kubectl-maintenance, then prints a table with the physical limit and the ratios, and
// writes every figure as JSON and a timeline PNG per phase. It exits 1 if any PDB dropped
// below its desired healthy pods during any run.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"

	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/bench"
	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/cluster"
	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

func main() {
	profile := flag.String("profile", "realistic", "realistic (2 s ready, 1 s terminate), fast (kwok's instant stages), scale (100 nodes, not for CI), smoke, or fleet (1,000 nodes, 10,000 pods; BENCH_FLEET_NODES scales it)")
	out := flag.String("out", ".local/bench", "directory for report.json and the timeline PNGs")
	phases := flag.String("phases", "", "comma-separated phases to run (default: the profile's)")
	tools := flag.String("tools", "", "comma-separated tools (default: ours,kubectl-seq,kubectl-par); in the fleet profile, of each phase's (F2 and F3 are ours only)")
	flag.Parse()
	// The local cluster's harness (envtest) logs through controller-runtime, which warns
	// with a stack trace when nobody set its logger: its errors only, through klog.
	ctrllog.SetLogger(klog.NewKlogr().V(4))
	if err := run(*profile, *out, *phases, *tools); err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(1)
	}
}

func run(profileName, out, phases, tools string) error {
	if profileName == "fleet" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		return runFleet(ctx, out, phases, tools, func(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) })
	}
	p, ok := bench.Profiles[profileName]
	if !ok {
		return fmt.Errorf("unknown profile %q", profileName)
	}
	if phases != "" {
		p.Phases = strings.Split(phases, ",")
	}
	if tools != "" {
		p.Tools = strings.Split(tools, ",")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logf := func(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) }
	cfg, stopCluster, err := start(ctx, out, cluster.Options{Logf: logf})
	if err != nil {
		return err
	}
	defer stopCluster()
	cfg.Profile = p
	rep, err := bench.Run(ctx, cfg)
	return report(rep, err, out, printTable)
}

// start builds the plugin and starts the local cluster with opts (BinDir is filled in),
// and returns the bench's configuration on them, writing raw outputs to out; stop stops
// the cluster and removes the plugin.
func start(ctx context.Context, out string, opts cluster.Options) (cfg bench.Config, stop func(), err error) {
	bin, err := cluster.Binaries(ctx)
	if err != nil {
		return cfg, nil, err
	}
	plugin, cleanup, err := fixture.BuildPlugin()
	if err != nil {
		return cfg, nil, err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		cleanup()
		return cfg, nil, err
	}
	opts.BinDir = bin
	c, err := cluster.Start(ctx, opts)
	if err != nil {
		cleanup()
		return cfg, nil, err
	}
	cfg = bench.Config{Cluster: c, Plugin: plugin, Kubectl: filepath.Join(bin, "kubectl"), Logf: opts.Logf, RawDir: out}
	return cfg, func() { c.Stop(); cleanup() }, nil
}

// report writes and prints what a run measured (even when it stopped early) and returns
// the run's error, or an error when a PDB ceiling did not hold or our drain failed.
func report(rep *bench.Report, err error, out string, show func(*bench.Report)) error {
	if rep != nil {
		if werr := write(rep, out); werr != nil && err == nil {
			err = werr
		}
		show(rep)
	}
	if err != nil {
		return err
	}
	if len(rep.Failures) > 0 {
		return fmt.Errorf("the bench failed: %s", strings.Join(rep.Failures, "; "))
	}
	return nil
}

func write(rep *bench.Report, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "report.json"), b, 0o644); err != nil {
		return err
	}
	byPhase := map[string][]bench.Result{}
	for _, r := range rep.Results {
		byPhase[r.Phase] = append(byPhase[r.Phase], r)
	}
	for phase, rs := range byPhase {
		if !hasTimeline(rs) {
			continue // the fleet's plan phase
		}
		f, err := os.Create(filepath.Join(dir, "timeline-"+phase+".png"))
		if err != nil {
			return err
		}
		err = bench.WriteTimeline(f, phase, rs)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	if err := writeMetricsTimeline(dir, rep.Results); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "bench: wrote %s/report.json and timeline-*.png\n", dir)
	return nil
}

func printTable(rep *bench.Report) {
	fmt.Printf("profile %s on %s, %s\n\n", rep.Profile, rep.Machine, rep.Date.Format("2006-01-02"))
	w := tabwriter.NewWriter(os.Stdout, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "phase\ttool\twall s\tlimit s\twall/limit\tTc s\tevicted\tevict req\t429s\tclient req/pod\tlag p50 ms\tlag p99 ms\tmax unavail/allowed\tpeak RSS MiB\t")
	walls := map[string]map[string]float64{}
	for _, r := range rep.Results {
		main := mainPDB(r.Phase)
		perPod := 0.0
		if r.Evicted > 0 {
			perPod = float64(r.ClientRequestsTotal) / float64(r.Evicted)
		}
		lag50, lag99 := "-", "-"
		if r.Tool == "ours" {
			lag50, lag99 = fmt.Sprintf("%.1f", r.LagMedianMs), fmt.Sprintf("%.1f", r.LagP99Ms)
		}
		fmt.Fprintf(w, "%s\t%s\t%.1f\t%.1f\t%.2f\t%.2f\t%d\t%.0f\t%.0f\t%.1f\t%s\t%s\t%d/%d\t%.0f\t\n", r.Phase, r.Tool, r.WallSec, r.LimitSec,
			r.WallSec/max(r.LimitSec, 0.001), r.TcSec, r.Evicted, r.Evictions, r.Refused, perPod, lag50, lag99,
			r.MaxUnavailable[main], r.Allowed[main], r.PeakRSSMiB)
		if walls[r.Phase] == nil {
			walls[r.Phase] = map[string]float64{}
		}
		walls[r.Phase][r.Tool] = r.WallSec
		walls[r.Phase]["limit:"+r.Tool] = r.LimitSec
	}
	_ = w.Flush()
	fmt.Println()
	for _, phase := range []string{"W1", "W2", "W3"} {
		t := walls[phase]
		if t == nil || t["ours"] == 0 {
			continue
		}
		line := fmt.Sprintf("%s: ours/limit %.2f", phase, t["ours"]/max(t["limit:ours"], 0.001))
		if v := t["kubectl-seq"]; v > 0 {
			line += fmt.Sprintf(", kubectl sequential/ours %.2f", v/t["ours"])
		}
		if v := t["kubectl-par"]; v > 0 {
			line += fmt.Sprintf(", kubectl parallel/ours %.2f", v/t["ours"])
		}
		fmt.Println(line)
	}
	for _, f := range rep.Failures {
		fmt.Println("FAIL:", f)
	}
}

func mainPDB(phase string) string {
	return map[string]string{"W1": "w1", "W2": "big", "W3": "db"}[phase]
}

func hasTimeline(rs []bench.Result) bool {
	for _, r := range rs {
		if len(r.Timeline) > 0 {
			return true
		}
	}
	return false
}

// writeMetricsTimeline writes timeline-metrics.png (F1 and F5 from their metrics
// endpoints) when some result has a metrics timeline.
func writeMetricsTimeline(dir string, rs []bench.Result) error {
	f, err := os.Create(filepath.Join(dir, "timeline-metrics.png"))
	if err != nil {
		return err
	}
	drew, err := bench.WriteMetricsTimeline(f, rs)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if !drew {
		_ = os.Remove(f.Name())
	}
	return err
}

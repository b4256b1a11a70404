package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/bench"
	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/cluster"
)

// runFleet runs the fleet profile on a cluster started with the fleet's control plane flags.
func runFleet(ctx context.Context, out, phases, tools string, logf func(string, ...any)) error {
	p := bench.Fleet()
	if phases != "" {
		p.Phases = strings.Split(phases, ",")
	}
	if tools != "" {
		p.Tools = strings.Split(tools, ",")
	}
	cfg, stopCluster, err := start(ctx, out, cluster.Options{Logf: logf, ExtraArgs: bench.FleetClusterArgs(),
		PodReadyDelay: p.ReadyDelay, PodDeleteDelay: p.DeleteDelay})
	if err != nil {
		return err
	}
	defer stopCluster()
	rep, err := bench.RunFleet(ctx, bench.FleetConfig{Fleet: p, Config: cfg,
		Progress: func(r *bench.Report) { _ = writeJSON(r, out) }})
	logf("local cluster: memory %s", cfg.Cluster.MemoryReport())
	return report(rep, err, out, printFleet)
}

func printFleet(rep *bench.Report) {
	fmt.Printf("profile %s on %s, %s\n\n", rep.Profile, rep.Machine, rep.Date.Format("2006-01-02 15:04 MST"))
	w := tabwriter.NewWriter(os.Stdout, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "phase\ttool\tnodes\twall s\tlimit s\twall/limit\thold-free s\twall/hold-free\tholds caused\tholds seen\tctl writes\tctl writes/evict\tctl busy s\tTc s\tevicted\tevict req\t429s\tclient req\treq/pod\twatches\tlag p50 ms\tlag p99 ms\t1st evict s\tpeak RSS MiB\tCPU s\tfloor s\tctl bound s\twall/floor\tlines\twrites/min\t")
	walls := map[string]float64{}
	for _, r := range rep.Results {
		perPod, ratio, free, freeRatio := "-", "-", "-", "-"
		if r.HoldFreeLimitSec > 0 {
			free, freeRatio = fmt.Sprintf("%.1f", r.HoldFreeLimitSec), fmt.Sprintf("%.2f", r.WallSec/r.HoldFreeLimitSec)
		}
		if r.Evicted > 0 {
			perPod = fmt.Sprintf("%.2f", float64(r.ClientRequestsTotal)/float64(r.Evicted))
		}
		if r.LimitSec > 0 {
			ratio = fmt.Sprintf("%.2f", r.WallSec/r.LimitSec)
		}
		lag50, lag99, first := "-", "-", "-"
		if r.Tool == "ours" {
			lag50, lag99 = fmt.Sprintf("%.2f", r.LagMedianMs), fmt.Sprintf("%.2f", r.LagP99Ms)
		}
		if r.FirstEvictionSec > 0 {
			first = fmt.Sprintf("%.2f", r.FirstEvictionSec)
		}
		fl, flRatio, lines, writes, ctl, perEvict, busy := "-", "-", "-", "-", "-", "-", "-"
		if r.Floor != nil && r.Floor.Sec > 0 {
			fl, flRatio = fmt.Sprintf("%.1f", r.Floor.Sec), fmt.Sprintf("%.2f", r.WallSec/r.Floor.Sec)
		}
		if r.Floor != nil && r.Floor.ControllerSec > 0 {
			ctl = fmt.Sprintf("%.1f", r.Floor.ControllerSec)
		}
		if r.ControllerBusySec > 0 {
			busy = fmt.Sprintf("%.1f", r.ControllerBusySec)
		}
		if r.CoveredEvicted > 0 {
			perEvict = fmt.Sprintf("%.2f", float64(r.ControllerWrites)/float64(r.CoveredEvicted))
		}
		if r.Lines > 0 {
			lines = fmt.Sprintf("%d", r.Lines)
		}
		if r.StatusWritesPerMin > 0 {
			writes = fmt.Sprintf("%.1f (max %d)", r.StatusWritesPerMin, r.StatusWritesMaxMin)
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%.1f\t%.1f\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t%.2f\t%d\t%.0f\t%.0f\t%d\t%s\t%d\t%s\t%s\t%s\t%.0f\t%.1f\t%s\t%s\t%s\t%s\t%s\t\n", r.Phase, r.Tool, r.Nodes,
			r.WallSec, r.LimitSec, ratio, free, freeRatio, r.Holds, r.HoldsSeen, r.ControllerWrites, perEvict, busy, r.TcSec, r.Evicted, r.Evictions, r.Refused,
			r.ClientRequestsTotal, perPod, r.Watches, lag50, lag99, first, r.PeakRSSMiB, r.CPUSec, fl, ctl, flRatio, lines, writes)
		walls[r.Phase+"/"+r.Tool] = r.WallSec
		if r.StoppedAtSec > 0 {
			walls[r.Phase+"/"+r.Tool+"-stopped"] = r.StoppedAtSec
		} else if r.ExitCode != 0 && r.Tool != "ours" {
			// gave up: some nodes not drained, so its wall is a lower bound
			walls[r.Phase+"/"+r.Tool+"-gaveup"] = float64(r.GaveUp)
			walls[r.Phase+"/"+r.Tool+"-procs"] = float64(max(1, r.Nodes))
		}
		if r.Tool == "kubectl-seq" {
			walls["seq-per-node"] = r.PerNodeSec
		}
		if r.Tool == "ours" || r.Tool == "controller" {
			walls[r.Phase+"/ours-nodes"] = float64(r.Nodes)
			walls[r.Phase+"/"+r.Tool+"-lines"] = float64(r.Lines)
			walls[r.Phase+"/"+r.Tool+"-rss"] = r.PeakRSSMiB
			walls[r.Phase+"/"+r.Tool+"-writes"] = r.StatusWritesPerMin
			walls[r.Phase+"/"+r.Tool+"-writes-max"] = float64(r.StatusWritesMaxMin)
		}
		if r.Floor != nil && r.Floor.Rate > 0 {
			walls["floor-rate"] = r.Floor.Rate
			walls["floor-write-rate"], walls["floor-writes-per-eviction"] = r.Floor.WriteRate, r.Floor.WritesPerEviction
		}
	}
	_ = w.Flush()
	fmt.Println()
	if o := walls["F1/ours"]; o > 0 {
		line := "F1:"
		if v := walls["F1/kubectl-par"]; v > 0 {
			line += kubectlRatio(walls, "F1", v, o) + ";"
		}
		if v := walls["seq-per-node"]; v > 0 {
			line += fmt.Sprintf(" kubectl sequential %.1f s per node, so %.0f s for ours' %.0f nodes (/ours %.1f)", v, v*walls["F1/ours-nodes"], walls["F1/ours-nodes"], v*walls["F1/ours-nodes"]/o)
		}
		fmt.Println(line)
	}
	if o := walls["F4/ours"]; o > 0 {
		line := fmt.Sprintf("F4: ours %.1f s for %.0f nodes", o, walls["F4/ours-nodes"])
		if f1 := walls["F1/ours"]; f1 > 0 {
			line += fmt.Sprintf(" (%.2fx F1's wall for %.1fx its nodes)", o/f1, walls["F4/ours-nodes"]/walls["F1/ours-nodes"])
		}
		if v := walls["F4/kubectl-par"]; v > 0 {
			line += ";" + kubectlRatio(walls, "F4", v, o)
		}
		fmt.Println(line)
	}
	if c := walls["F5/controller"]; c > 0 {
		line := fmt.Sprintf("F5: the controller %.1f s for %.0f nodes through one Maintenance", c, walls["F5/ours-nodes"])
		if o := walls["F1/ours"]; o > 0 {
			line += fmt.Sprintf(" (%.2fx the CLI's F1; target ≤ 1.1)", c/o)
		}
		line += fmt.Sprintf("; controller peak RSS %.0f MiB (target ≤ 300); %.1f status writes a minute of wall, at most %.0f in any minute (target ≤ 12); the follower printed %.0f lines",
			walls["F5/controller-rss"], walls["F5/controller-writes"], walls["F5/controller-writes-max"], walls["F5/controller-lines"])
		if l := walls["F1/ours-lines"]; l > 0 {
			line += fmt.Sprintf(", the CLI's F1 %.0f", l)
		}
		fmt.Println(line)
	}
	printQueries(rep.Results)
	if r := walls["floor-rate"]; r > 0 {
		fmt.Printf("floor: the run's sustained rate of pods becoming Ready, %.1f a second (best %.0f s window of any phase); the disruption controller's worker %.1f status writes a second of its busy time and %.2f writes per budget-covered eviction (the drain whose evictions cost it least); floor = max(pods waiting for a replacement / Ready rate, the slowest budget's waves × readiness, budget-covered pods × writes per eviction / write rate) + termination\n",
			r, bench.FloorWindowSeconds, walls["floor-write-rate"], walls["floor-writes-per-eviction"])
	}
	for _, f := range rep.Failures {
		fmt.Println("FAIL:", f)
	}
}

// kubectlRatio says kubectl parallel's wall v against ours o in phase: a ratio, or a lower
// bound when kubectl was stopped at its time box or some of its drains gave up (exit
// non-zero: their nodes not drained, so kubectl would have needed longer).
func kubectlRatio(walls map[string]float64, phase string, v, o float64) string {
	switch {
	case walls[phase+"/kubectl-par-stopped"] > 0:
		return fmt.Sprintf(" kubectl parallel/ours ≥ %.2f (kubectl stopped at its --timeout of %.0f s, not done)", v/o, walls[phase+"/kubectl-par-stopped"])
	case walls[phase+"/kubectl-par-gaveup"] > 0:
		return fmt.Sprintf(" kubectl parallel/ours ≥ %.2f (%.0f of its %.0f drains gave up after %.1f s, their nodes not drained)",
			v/o, walls[phase+"/kubectl-par-gaveup"], walls[phase+"/kubectl-par-procs"], v)
	}
	return fmt.Sprintf(" kubectl parallel/ours %.2f", v/o)
}

func writeJSON(rep *bench.Report, dir string) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "report.json"), b, 0o644)
}

// printQueries prints F5's metrics at its end: each family's example query (the metrics
// reference's) evaluated on the controller's scrapes.
func printQueries(rs []bench.Result) {
	for _, r := range rs {
		if r.Phase != "F5" || len(r.MetricsQueries) == 0 {
			continue
		}
		fmt.Println("F5's metrics at its end (the controller's last scrape, F5-metrics.txt; a range function reads the scrapes in its window, cut to the run's):")
		for _, q := range r.MetricsQueries {
			span := ""
			if q.SpanSec > 0 {
				span = fmt.Sprintf("   [over the last %.0f s of scrapes]", q.SpanSec)
			}
			fmt.Printf("  %s\n    = %s%s\n", q.Query, q.Value, span)
		}
	}
}

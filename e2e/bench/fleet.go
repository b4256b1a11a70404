package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/cluster"
)

// FleetConfig is what RunFleet needs besides the cluster (started with FleetClusterArgs).
type FleetConfig struct {
	Config
	Fleet FleetProfile
	// Progress, if set, receives the report after each result (to keep it on disk should
	// the run be cut short).
	Progress func(*Report)
}

// RunFleet sets up the fleet once, then runs its phases on it, each tool on its own group
// of nodes of the same fleet, so the figures of one phase are taken side by side:
//   - F2: plan over every node and over F1's group (changes nothing);
//   - F1: ours drains Nodes/10 nodes at once (--max-parallel-nodes equal to that), kubectl
//     drains the next Nodes/10 as that many processes in parallel (xargs -P), and kubectl
//     drains Nodes/100 nodes sequentially (one command, reported per node too);
//   - F3: a rolling drain --pool of a pool of Nodes/10 nodes, maxUnavailable 10% of them;
//   - F4: every node uncordoned first, ours drains 3·Nodes/10 nodes at once
//     (--max-parallel-nodes equal to that), then kubectl the next 3·Nodes/10 in parallel:
//     how wall time and requests grow from F1's count to three times it;
//   - F5: F1's count of nodes (a group of their own) drained through one Maintenance by
//     the controller as a local process, the CLI following (fleet_controller.go).
//
// Every drain gets a floor (package floor) from the run's sustained rate of pods becoming
// Ready, the best over every phase of the run, and from what a budget-covered eviction
// cost the disruption controller's worker in the run's cheapest drain (setFloors); and its
// holds seen and caused (pdb.Holds, fleet_holds.go).
//
// Between runs it waits until every pod is Ready and every budget full again.
func RunFleet(ctx context.Context, cfg FleetConfig) (*Report, error) {
	rep := &Report{Profile: fmt.Sprintf("fleet (%d nodes)", cfg.Fleet.Nodes), Date: time.Now().UTC(), Machine: machine()}
	f := newFleet(cfg.Fleet)
	c := cfg.Cluster.Client
	pods := 0
	for _, a := range f.apps {
		pods += int(a.replicas)
	}
	cfg.Logf("fleet: %d nodes, %d apps (%d namespaces), %d pods", len(f.nodes), len(f.apps), fleetNamespaces, pods)
	if err := f.setUp(ctx, c, cfg.Logf); err != nil {
		return rep, fmt.Errorf("set up: %w", err)
	}
	if cfg.Fleet.ControllerClientDefaults {
		args := defaultClientArgs()
		if err := cfg.Cluster.RestartWith(ctx, cluster.ControllerManager, args...); err != nil {
			return rep, fmt.Errorf("restart kube-controller-manager with its client's defaults: %w", err)
		}
		cfg.Logf("fleet: kube-controller-manager restarted with its client's defaults (20 QPS, burst 30): %s", strings.Join(args, " "))
		rep.Profile += ", kube-controller-manager at its client's defaults"
		if err := f.settle(ctx, c, cfg.Logf); err != nil {
			return rep, err
		}
	}
	if s, err := newKCMScraper(ctx, cfg.Cluster); err != nil {
		cfg.Logf("fleet: kube-controller-manager's metrics not read, the floor goes without the disruption controller's bound: %v", err)
	} else {
		f.kcm = s
	}
	// Every run but the last is followed by a settle (every pod Ready, every budget full).
	runs := 0
	for _, phase := range cfg.Fleet.Phases {
		n := len(cfg.Fleet.tools(phase))
		if phase == "F2" {
			n *= 2 // over every node and over F1's group
		}
		runs += n
	}
	add := func(r *Result, err error) error {
		runs--
		if r != nil {
			rep.Results = append(rep.Results, *r)
			for _, v := range r.Violations {
				rep.Failures = append(rep.Failures, fmt.Sprintf("%s/%s: %s", r.Phase, r.Tool, v))
			}
			if (r.Tool == "ours" || r.Tool == "controller") && r.Error != "" {
				rep.Failures = append(rep.Failures, fmt.Sprintf("%s/%s: %s", r.Phase, r.Tool, r.Error))
			} else if r.Error != "" {
				cfg.Logf("fleet: %s %s: %d of its processes exited non-zero (gave up, or stopped at the box): %s", r.Phase, r.Tool, r.GaveUp, r.Error)
			}
			if cfg.Progress != nil {
				cfg.Progress(rep)
			}
			cfg.Logf("fleet: %s %s: %.1fs (limit %.1fs, hold-free %.1fs, %d holds caused, %d seen), %d evicted (%d under a budget), %d disruption controller writes (%.0f syncs, %.1f s of its worker), %.0f eviction requests, %.0f 429s, %d client requests, %d watches, rss %.0f MiB, cpu %.1fs",
				r.Phase, r.Tool, r.WallSec, r.LimitSec, r.HoldFreeLimitSec, r.Holds, r.HoldsSeen, r.Evicted, r.CoveredEvicted, r.ControllerWrites, r.ControllerSyncs, r.ControllerBusySec,
				r.Evictions, r.Refused, r.ClientRequestsTotal, r.Watches, r.PeakRSSMiB, r.CPUSec)
		}
		if err != nil || runs <= 0 {
			return err
		}
		return f.settle(ctx, c, cfg.Logf)
	}
	for _, phase := range cfg.Fleet.Phases {
		switch phase {
		case "F2":
			if len(cfg.Fleet.tools("F2")) == 0 {
				continue
			}
			for _, sel := range []string{"bench=fleet", fleetGroupLabel + "=f1-ours"} {
				if err := add(f.plan(ctx, cfg, sel)); err != nil {
					return rep, err
				}
			}
		case "F1":
			for _, tool := range cfg.Fleet.tools("F1") {
				if err := add(f.drainF1(ctx, cfg, tool)); err != nil {
					return rep, err
				}
			}
		case "F3":
			if len(cfg.Fleet.tools("F3")) == 0 {
				continue
			}
			if err := add(f.drainPool(ctx, cfg)); err != nil {
				return rep, err
			}
		case "F5":
			if len(cfg.Fleet.tools("F5")) == 0 {
				continue
			}
			if err := add(f.drainF5(ctx, cfg)); err != nil {
				return rep, err
			}
		case "F4":
			// The earlier phases' nodes back, so that 600 more cordoned leave room.
			if err := uncordonFleet(ctx, c, cfg.Logf); err != nil {
				return rep, err
			}
			for _, tool := range cfg.Fleet.tools("F4") {
				if err := add(f.drainGroup(ctx, cfg, "F4", tool)); err != nil {
					return rep, err
				}
			}
		default:
			return rep, fmt.Errorf("unknown fleet phase %q (want F1, F2, F3, F4 or F5)", phase)
		}
	}
	setFloors(rep)
	return rep, nil
}

// plan runs our plan over the nodes sel selects, end to end (the node list included).
func (f *fleet) plan(ctx context.Context, cfg FleetConfig, sel string) (*Result, error) {
	n := len(f.nodes)
	if sel != "bench=fleet" {
		n = len(f.groups["f1-ours"])
	}
	r := &Result{Phase: "F2", Tool: fmt.Sprintf("plan-%d", n), Nodes: n}
	began := time.Now()
	p := runProc(ctx, cfg.Plugin, []string{"--kubeconfig", cfg.Cluster.Kubeconfig, "plan", "-l", sel,
		"--ignore-daemonsets", "--delete-emptydir-data", "-v=6"})
	r.WallSec = time.Since(began).Seconds()
	r.ExitCode, r.PeakRSSMiB, r.CPUSec = p.code, p.rssMiB, p.cpuSec
	r.ClientRequests, r.ClientRequestsTotal = countRequests(p.stderr)
	r.Watches = countWatches(p.stderr)
	keepRaw(cfg.Config, r, p.stdout, p.stderr)
	// 3: the plan is complete and says some pods can never go (planning every node of
	// the fleet at once leaves their replacements nowhere to run).
	if p.code != 0 && p.code != 3 {
		return r, fmt.Errorf("plan exited %d: %.300s", p.code, tailErr(p.stderr))
	}
	return r, nil
}

// drainF1 drains one F1 group with one tool.
func (f *fleet) drainF1(ctx context.Context, cfg FleetConfig, tool string) (*Result, error) {
	return f.drainGroup(ctx, cfg, "F1", tool)
}

// drainGroup drains the phase's group of one tool (F1 or F4) with that tool.
func (f *fleet) drainGroup(ctx context.Context, cfg FleetConfig, phase, tool string) (*Result, error) {
	group := map[string]string{"ours": "-ours", "kubectl-par": "-kpar", "kubectl-seq": "-kseq"}[tool]
	nodes := f.groups[strings.ToLower(phase)+group]
	timeout := 30 * time.Minute
	box := cfg.Fleet.KubectlBox[phase]
	boxed := tool == "kubectl-par" && box > 0
	if boxed {
		timeout = box
	}
	common := []string{"--ignore-daemonsets", "--delete-emptydir-data", "--timeout", timeout.String(), "-v=6"}
	var samples *metricsSampler
	r, err := f.measure(ctx, cfg, phase, tool, nodes, func() []proc {
		switch tool {
		case "ours":
			args := append(append([]string{"--kubeconfig", cfg.Cluster.Kubeconfig, "drain"}, nodes...), common...)
			args = append(args, "-o", "json", fmt.Sprintf("--max-parallel-nodes=%d", len(nodes)))
			if phase != "F1" {
				return []proc{runProc(ctx, cfg.Plugin, args)}
			}
			// F1's timeline from the run's own metrics (drain --metrics-bind-address).
			addr, err := freePort()
			if err != nil {
				return []proc{{code: 1, stderr: []byte("error: " + err.Error())}}
			}
			var stop func()
			samples, stop = sampleMetrics(ctx, addr, time.Now())
			defer stop()
			return []proc{runProc(ctx, cfg.Plugin, append(args, "--metrics-bind-address="+addr))}
		case "kubectl-seq":
			args := append(append([]string{"--kubeconfig", cfg.Cluster.Kubeconfig, "drain"}, nodes...), common...)
			return []proc{runProc(ctx, cfg.Kubectl, args)}
		}
		out := make([]proc, len(nodes))
		var wg sync.WaitGroup
		for i, n := range nodes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out[i] = runProc(ctx, cfg.Kubectl, append([]string{"--kubeconfig", cfg.Cluster.Kubeconfig, "drain", n}, common...))
			}()
		}
		wg.Wait()
		return out
	}, 0)
	if r != nil && samples != nil {
		r.MetricsTimeline = samples.timeline()
	}
	if r != nil && boxed && r.ExitCode != 0 && r.WallSec >= timeout.Seconds() {
		r.StoppedAtSec = timeout.Seconds() // kubectl's "global timeout reached"
	}
	return r, err
}

// drainPool rolls the F3 pool: drain --pool with maxUnavailable 10% of its nodes.
func (f *fleet) drainPool(ctx context.Context, cfg FleetConfig) (*Result, error) {
	nodes := f.groups["f3-pool"]
	batch := max(1, len(nodes)/10)
	manifest := fmt.Sprintf("apiVersion: maintenance.kubectl-maintenance.io/v1alpha1\nkind: NodePool\nmetadata:\n  name: %s\nspec:\n  maxUnavailable: %d\n", fleetPool, batch)
	file := filepath.Join(cfg.Cluster.Dir, "fleet-pool.yaml")
	if err := os.WriteFile(file, []byte(manifest), 0o600); err != nil {
		return nil, err
	}
	for _, args := range [][]string{{"pool", "install"}, {"pool", "apply", "-f", file}} {
		if p := runProc(ctx, cfg.Plugin, append([]string{"--kubeconfig", cfg.Cluster.Kubeconfig}, args...)); p.code != 0 {
			return nil, fmt.Errorf("%s exited %d: %s", strings.Join(args, " "), p.code, tailErr(p.stderr))
		}
	}
	return f.measure(ctx, cfg, "F3", "ours", nodes, func() []proc {
		return []proc{runProc(ctx, cfg.Plugin, []string{"--kubeconfig", cfg.Cluster.Kubeconfig, "drain", "--pool", fleetPool,
			"--ignore-daemonsets", "--delete-emptydir-data", "--timeout", "30m", "-o", "json", "-v=6"})}
	}, batch)
}

// measure runs a drain (do) over nodes with the watches and counters around it. window,
// when above 0, is a rolling drain's width (a pool's maxUnavailable): the limit is then
// that of a sliding window over the nodes in the order our drain cordoned them.
func (f *fleet) measure(ctx context.Context, cfg FleetConfig, phase, tool string, nodes []string, do func() []proc,
	window int) (*Result, error) {
	c := cfg.Cluster.Client
	onDrained, err := podsOn(ctx, c, nodes)
	if err != nil {
		return nil, err
	}
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	obs, err := observe(watchCtx, c, "")
	if err != nil {
		return nil, err
	}
	evBefore, refBefore, err := evictionMetrics(ctx, c)
	if err != nil {
		return nil, err
	}
	queueBefore, queueErr := f.disruptionQueue(ctx)
	r := &Result{Phase: phase, Tool: tool, Nodes: len(nodes)}
	began := time.Now()
	procs := do()
	r.WallSec = time.Since(began).Seconds()
	var outs, errs [][]byte
	for _, p := range procs {
		outs, errs = append(outs, p.stdout), append(errs, p.stderr)
		r.ExitCode, r.PeakRSSMiB = max(r.ExitCode, p.code), max(r.PeakRSSMiB, p.rssMiB)
		r.CPUSec += p.cpuSec
		if p.code != 0 {
			r.GaveUp++
		}
	}
	keepRaw(cfg.Config, r, bytes.Join(outs, nil), bytes.Join(errs, nil))
	time.Sleep(time.Second) // the last status updates of the watches
	evAfter, refAfter, err := evictionMetrics(ctx, c)
	if err != nil {
		return nil, err
	}
	r.Evictions, r.Refused = evAfter-evBefore, refAfter-refBefore
	if queueAfter, err := f.disruptionQueue(ctx); err == nil && queueErr == nil {
		r.ControllerSyncs, r.ControllerBusySec = queueAfter.Syncs-queueBefore.Syncs, queueAfter.BusySec-queueBefore.BusySec
	} else if f.kcm != nil {
		cfg.Logf("fleet: %s %s: the disruption controller's queue not read: %v", phase, tool, errors.Join(queueErr, err))
	}
	stderr := bytes.Join(errs, nil)
	r.ClientRequests, r.ClientRequestsTotal = countRequests(stderr)
	r.Watches = countWatches(stderr)
	for _, n := range onDrained {
		r.Evicted += n
	}
	tc := obs.tc()
	r.TcSec = tc.Seconds()
	// Every node at once: the pods there at the start, evicted or not. Rolling: each
	// node's evicted pods, in the order the drain took the nodes.
	drained, width := []map[string]int{onDrained}, 1
	if window > 0 {
		drained, width = nil, window
		for _, n := range cordonOrder(outs[0], nodes) {
			drained = append(drained, obs.evictedFrom([]string{n}))
		}
	}
	r.LimitSec = windowLimit(obs.allowances(), drained, width, obs.tcOf(), f.p.DeleteDelay).Seconds()
	r.HoldsSeen, r.Holds = obs.holdCounts()
	holds := obs.heldEvictions()
	r.HoldFreeLimitSec = windowLimit(obs.allowances(), drained, width, obs.tcWithout(holds), f.p.DeleteDelay).Seconds()
	obs.check(r, "")
	r.Timeline = obs.disrupted()
	if cfg.RawDir != "" {
		_ = obs.dump(filepath.Join(cfg.RawDir, r.Phase+"-"+r.Tool+".observed.json"))
	}
	if tool == "ours" {
		r.LagMedianMs, r.LagP99Ms = lag(outs[0])
		r.FirstEvictionSec = firstEviction(outs[0], began)
		r.Lines = outputLines(outs[0], errs[0])
	}
	r.floorIn, r.ready = f.floorInput(r.Evicted, onDrained, obs.allowances()), obs.readyTimes()
	r.ControllerWrites, r.CoveredEvicted = len(obs.controllerWrites()), obs.coveredEvictions()
	if tool == "kubectl-seq" && len(nodes) > 0 {
		r.PerNodeSec = r.WallSec / float64(len(nodes))
	}
	if r.ExitCode != 0 {
		// Recorded, not fatal: the profile goes on (a kubectl drain that gave up under load
		// is a figure of kubectl's; ours exiting non-zero is a failure RunFleet reports).
		r.Error = fmt.Sprintf("%s exited %d: %.300s", tool, r.ExitCode, tailErr(stderr))
	}
	return r, nil
}

func keepRaw(cfg Config, r *Result, stdout, stderr []byte) {
	if cfg.RawDir == "" {
		return
	}
	base := filepath.Join(cfg.RawDir, r.Phase+"-"+r.Tool)
	_ = os.WriteFile(base+".stdout", stdout, 0o644)
	_ = os.WriteFile(base+".stderr", stderr, 0o644)
}

func tailErr(stderr []byte) string {
	s := string(stderr)
	if i := strings.LastIndex(s, "error:"); i >= 0 {
		return s[i:]
	}
	if len(s) > 300 {
		return s[len(s)-300:]
	}
	return s
}

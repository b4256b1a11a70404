package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math"
	"net"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/bench/floor"
)

// F5: F1 run by the controller. The same number of nodes as F1's ours (a group of their
// own, the fleet's extra tenth, so that each phase finds its nodes full) drained through
// one Maintenance object: "kubectl maintenance controller" as a local process against the
// fleet cluster, and the CLI following it (drain --server-side -o json). The wall is the
// follower's (from the object's creation to its end: a controller runs before and after);
// RSS and CPU are the controller's; the status writes per minute and the timeline come
// from the controller's metrics endpoint, scraped every second.

// bgProc is a command running until stopped, with its peak RSS watched.
type bgProc struct {
	cmd       *exec.Cmd
	out, errb bytes.Buffer
	stopHWM   chan struct{}
	hwm       chan float64
}

func startProc(ctx context.Context, bin string, args []string) (*bgProc, error) {
	b := &bgProc{cmd: exec.CommandContext(ctx, bin, args...), stopHWM: make(chan struct{}), hwm: make(chan float64, 1)}
	b.cmd.Stdout, b.cmd.Stderr = &b.out, &b.errb
	if err := b.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	go func() { b.hwm <- watchHWM(b.cmd.Process.Pid, b.stopHWM) }()
	return b, nil
}

// stop sends SIGTERM, waits for the process, and returns it as runProc would.
func (b *bgProc) stop() proc {
	_ = b.cmd.Process.Signal(syscall.SIGTERM)
	err := b.cmd.Wait()
	close(b.stopHWM)
	p := proc{stdout: b.out.Bytes(), stderr: b.errb.Bytes(), code: exitCode(err), rssMiB: <-b.hwm}
	if b.cmd.ProcessState != nil {
		if ru, ok := b.cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			p.cpuSec = time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
		}
	}
	return p
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// drainF5 drains the F5 group through one Maintenance run by a local controller.
func (f *fleet) drainF5(ctx context.Context, cfg FleetConfig) (*Result, error) {
	nodes := f.groups["f5-controller"]
	kube := []string{"--kubeconfig", cfg.Cluster.Kubeconfig}
	if p := runProc(ctx, cfg.Plugin, append(kube, "install")); p.code != 0 {
		return nil, fmt.Errorf("install exited %d: %s", p.code, tailErr(p.stderr))
	}
	if err := warmMaintenances(ctx, cfg, nodes[0]); err != nil {
		return nil, err
	}
	addr, err := freePort()
	if err != nil {
		return nil, err
	}
	var ctl proc
	var follower proc
	var began, ended time.Time
	var samples *metricsSampler
	var writes float64
	var startErr error
	r, err := f.measure(ctx, cfg, "F5", "controller", nodes, func() []proc {
		bg, err := startProc(ctx, cfg.Plugin, append(kube, "controller", "--leader-elect=false", "--health-probe-bind-address=0",
			"--metrics-bind-address="+addr, "-v=6"))
		if err != nil {
			startErr = err
			return nil
		}
		// Ready once its cache of Maintenances answers (the family is read from it).
		deadline := time.Now().Add(2 * time.Minute)
		for {
			if _, ok, err := scrapeSum(addr, "kubectl_maintenance_maintenances"); err == nil && ok {
				break
			}
			if time.Now().After(deadline) {
				startErr = fmt.Errorf("the controller's metrics endpoint %s did not answer in 2 minutes: %s", addr, tailErr(bg.stop().stderr))
				return nil
			}
			time.Sleep(200 * time.Millisecond)
		}
		began = time.Now()
		var stopSampling func()
		samples, stopSampling = sampleMetrics(ctx, addr, began)
		// F1's settings: every node at once (the Maintenance's policy.maxParallelNodes;
		// without it the controller drains 5 at a time, the default).
		args := append(append(append(kube, "drain"), nodes...), "--server-side", "--name", "f5", "--ignore-daemonsets",
			"--delete-emptydir-data", "--timeout", "30m", "-o", "json", "-v=6", fmt.Sprintf("--max-parallel-nodes=%d", len(nodes)))
		follower = runProc(ctx, cfg.Plugin, args)
		ended = time.Now()
		stopSampling()
		// The end of F5: one last scrape, the controller still serving.
		if err := samples.scrapeOnce(); err != nil {
			cfg.Logf("fleet: F5: the last scrape of the controller's metrics: %v", err)
		}
		writes, _, _ = scrapeSum(addr, "kubectl_maintenance_status_writes_total")
		ctl = bg.stop()
		return []proc{follower, ctl}
	}, 0)
	if startErr != nil {
		return r, startErr
	}
	if r == nil {
		return r, err
	}
	r.WallSec = ended.Sub(began).Seconds()
	r.PeakRSSMiB, r.CPUSec = ctl.rssMiB, ctl.cpuSec
	r.FollowerRSSMiB = follower.rssMiB
	r.ExitCode = follower.code
	// Stopped by our SIGTERM, the plugin exits 130 as on Ctrl-C (cmd/kubectl-maintenance):
	// the follower alone can give up.
	r.GaveUp = 0
	if follower.code != 0 {
		r.GaveUp = 1
	}
	if ctl.code != 0 && ctl.code != 130 {
		r.Error = fmt.Sprintf("controller exited %d: %.300s", ctl.code, tailErr(ctl.stderr))
	} else if follower.code == 0 {
		r.Error = ""
	}
	if r.WallSec > 0 {
		r.StatusWritesPerMin = writes / (r.WallSec / 60)
	}
	// The most in any minute, from the controller's -v=6 request log (a run shorter than
	// a minute: all of them).
	if times := statusWrites(ctl.stderr, "f5"); len(times) > 0 {
		r.StatusWritesMaxMin = int(math.Round(floor.SustainedRate(times, 60) * 60))
	}
	r.Lines = outputLines(follower.stdout, follower.stderr)
	r.MetricsTimeline = samples.timeline()
	r.MetricsQueries = samples.queries()
	if err := samples.keepLast(cfg.RawDir, "F5-metrics.txt"); err != nil {
		cfg.Logf("fleet: F5: %v", err)
	}
	for _, p := range r.MetricsTimeline {
		if p[1] > 0 {
			r.FirstEvictionSec = p[0] // at the scrape's resolution (1 s)
			break
		}
	}
	return r, err
}

// outputLines counts the lines a command printed for its user: stdout's, and stderr's
// that are not client-go's -v log (klog's "I1128 ..." header).
func outputLines(stdout, stderr []byte) int {
	n := bytes.Count(stdout, []byte("\n"))
	sc := bufio.NewScanner(bytes.NewReader(stderr))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		l := sc.Text()
		if len(l) > 5 && strings.ContainsRune("IWEF", rune(l[0])) && l[1] >= '0' && l[1] <= '9' {
			continue
		}
		n++
	}
	return n
}

var klogTime = regexp.MustCompile(`^[IWEF]\d{4} (\d{2}):(\d{2}):(\d{2}\.\d+)`)

// statusWrites are the times (seconds in the day) of the PUTs of Maintenance name's
// status in a -v=6 request log.
func statusWrites(stderr []byte, name string) []float64 {
	var out []float64
	sc := bufio.NewScanner(bytes.NewReader(stderr))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		l := sc.Text()
		m := responseLine.FindStringSubmatch(l)
		if m == nil || m[1] != "PUT" || !strings.Contains(m[2], "/maintenances/"+name+"/status") {
			continue
		}
		if t := klogTime.FindStringSubmatch(l); t != nil {
			h, _ := strconv.Atoi(t[1])
			mi, _ := strconv.Atoi(t[2])
			sec, _ := strconv.ParseFloat(t[3], 64)
			out = append(out, float64(h*3600+mi*60)+sec)
		}
	}
	return out
}

// warmMaintenances creates a Maintenance with dryRun=All (nothing is stored): the first
// write of a CRD installed a moment before waits for the API server to set up its
// handler and validation (2 s in a run), which a cluster whose CRDs have been there for
// a while never pays, and which would otherwise count in F5's wall.
func warmMaintenances(ctx context.Context, cfg FleetConfig, node string) error {
	dc, err := dynamic.NewForConfig(cfg.Cluster.Config)
	if err != nil {
		return fmt.Errorf("warm up maintenances: %w", err)
	}
	gvr := schema.GroupVersionResource{Group: "maintenance.kubectl-maintenance.io", Version: "v1alpha1", Resource: "maintenances"}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "maintenance.kubectl-maintenance.io/v1alpha1", "kind": "Maintenance",
		"metadata": map[string]any{"name": "f5-warm-up"},
		"spec":     map[string]any{"action": "Drain", "nodes": []any{node}},
	}}
	deadline := time.Now().Add(time.Minute)
	for {
		_, err := dc.Resource(gvr).Create(ctx, obj, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("warm up maintenances: %w", err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

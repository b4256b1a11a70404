package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// proc is one finished command: its output, exit code, and resource use from rusage.
type proc struct {
	stdout, stderr []byte
	code           int
	rssMiB, cpuSec float64
}

// runProc runs a command and returns its output, exit code, peak RSS and CPU seconds
// (user + system, from the child's rusage). The peak RSS is the child's VmHWM, read from
// /proc while it runs: rusage's ru_maxrss would report the bench's own RSS, since Go
// starts children with a vfork that shares the parent's memory until the exec, whose high
// water mark the kernel then records as the child's.
func runProc(ctx context.Context, bin string, args []string) proc {
	cmd := exec.CommandContext(ctx, bin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	var p proc
	if err := cmd.Start(); err != nil {
		p.code = exitCode(err)
		return p
	}
	stop := make(chan struct{})
	hwm := make(chan float64, 1)
	go func() { hwm <- watchHWM(cmd.Process.Pid, stop) }()
	err := cmd.Wait()
	close(stop)
	p.stdout, p.stderr, p.code, p.rssMiB = out.Bytes(), errb.Bytes(), exitCode(err), <-hwm
	if cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			p.cpuSec = time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
		}
	}
	return p
}

// watchHWM reads the process's VmHWM (peak RSS, MiB) every 50 ms until stop, and returns
// the last value read.
func watchHWM(pid int, stop <-chan struct{}) float64 {
	path := fmt.Sprintf("/proc/%d/status", pid)
	peak := 0.0
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		if b, err := os.ReadFile(path); err == nil {
			for _, l := range strings.Split(string(b), "\n") {
				if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
					if kb, err := strconv.ParseFloat(f[1], 64); err == nil {
						peak = max(peak, kb/1024)
					}
				}
			}
		}
		select {
		case <-stop:
			return peak
		case <-t.C:
		}
	}
}

// countWatches counts the watch requests in client-go's -v=6 request log: the watch
// connections the client opened.
func countWatches(stderr []byte) int {
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(stderr))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if m := responseLine.FindStringSubmatch(sc.Text()); m != nil && strings.Contains(m[2], "watch=true") {
			n++
		}
	}
	return n
}

// evictedFrom counts, per app, the pods evicted from the named nodes during the run.
func (o *observer) evictedFrom(nodes []string) map[string]int {
	on := map[string]bool{}
	for _, n := range nodes {
		on[n] = true
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	out := map[string]int{}
	for key := range o.evicted {
		if on[o.nodeOf[key]] {
			out[o.appOf[strings.SplitN(key, "/", 2)[0]]]++
		}
	}
	return out
}

// disrupted is the timeline of every budget's unavailable pods, summed: at each status
// change seen, seconds since start and Σ_b (expected_b − currentHealthy_b).
func (o *observer) disrupted() [][2]float64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	type change struct {
		at   time.Time
		name string
		v    float64
	}
	var all []change
	for name, pts := range o.statuses {
		for _, p := range pts {
			all = append(all, change{p.at, name, float64(p.expected - p.current)})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].at.Before(all[j].at) })
	cur, sum := map[string]float64{}, 0.0
	var out [][2]float64
	for _, c := range all {
		sum += c.v - cur[c.name]
		cur[c.name] = c.v
		out = append(out, [2]float64{c.at.Sub(o.start).Seconds(), sum})
	}
	return out
}

// recovery is one eviction of a budget's pod and, when the budget then ran out and
// allowed a disruption again, the time that took.
type recovery struct {
	pod      string // name/uid
	at       time.Time
	took     time.Duration
	measured bool
}

// recoveries is, per budget, each of its evictions in time order with the time from it to
// the budget allowing a disruption again after it had none left (measured only when it
// ran out after it).
func (o *observer) recoveries() map[string][]recovery {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := map[string][]recovery{}
	for key, at := range o.evicted {
		app := o.appOf[strings.SplitN(key, "/", 2)[0]]
		rc := recovery{pod: key, at: at}
		sawZero := false
		for _, p := range o.statuses[app] {
			if p.at.Before(at) {
				continue
			}
			if p.allowed == 0 {
				sawZero = true
			}
			if sawZero && p.allowed > 0 {
				rc.took, rc.measured = p.at.Sub(at), true
				break
			}
		}
		out[app] = append(out[app], rc)
	}
	for _, rs := range out {
		sort.Slice(rs, func(i, j int) bool { return rs[i].at.Before(rs[j].at) })
	}
	return out
}

// tc is the median time from an eviction to its budget allowing a disruption again, over
// every budget (the T_c column of the report).
func (o *observer) tc() time.Duration {
	var all []time.Duration
	for _, rs := range o.recoveries() {
		for _, r := range rs {
			if r.measured {
				all = append(all, r.took)
			}
		}
	}
	return percentile(all, 0.5)
}

// tcOf is T_c,b,j: how long budget b's slot stays taken after its j-th eviction (0-based,
// in time order): the time the control plane took in this run from that eviction to the
// budget allowing a disruption again, and never less than the run's median of those
// (tc). Replayed eviction by eviction so that a 2-minute hold is not averaged away (a
// StatefulSet's evicted pod comes back under its own name, often before the disruption
// controller has seen it go, and the controller then counts it as disrupted until the
// eviction's disruptedPods entry expires, 2 minutes later); floored at the median
// because, in a wave of several evictions, the later ones see the budget reopen soon
// after them, when the first replacements of the wave are Ready, although their own
// slot frees only when theirs is. An eviction after which the budget never ran out
// counts as the mean of b's measured ones, floored the same way; a budget with none, as
// the median.
func (o *observer) tcOf() func(app string, j int) time.Duration { return o.tcWithout(nil) }

// tcWithout is tcOf with the recoveries after the evictions in holds (name/uid) counted
// as the run's median instead of replayed: the limit the run would have had without them.
func (o *observer) tcWithout(holds map[string]bool) func(app string, j int) time.Duration {
	recs := o.recoveries()
	var all []time.Duration
	for _, rs := range recs {
		for _, r := range rs {
			if r.measured {
				all = append(all, r.took)
			}
		}
	}
	median := percentile(all, 0.5) // tc, from the same look
	for _, rs := range recs {
		for j := range rs {
			if holds[rs[j].pod] {
				rs[j].measured = false
			}
		}
	}
	mean := map[string]time.Duration{}
	for app, rs := range recs {
		var sum time.Duration
		n := 0
		for _, r := range rs {
			if r.measured {
				sum += r.took
				n++
			}
		}
		if n > 0 {
			mean[app] = sum / time.Duration(n)
		}
	}
	return func(app string, j int) time.Duration {
		if rs := recs[app]; j < len(rs) && holds[rs[j].pod] {
			return median
		}
		if rs := recs[app]; j < len(rs) && rs[j].measured {
			return max(rs[j].took, median)
		}
		if d, ok := mean[app]; ok {
			return max(d, median)
		}
		return median
	}
}

// dump writes what the observer saw (evictions with their node, every budget status) as
// JSON, so that a limit can be recomputed from a run.
func (o *observer) dump(path string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	type ev struct {
		Pod, App, Node string
		At             float64
	}
	type st struct {
		At                                  float64
		Allowed, Current, Desired, Expected int32
	}
	out := struct {
		Evictions []ev
		Statuses  map[string][]st
	}{Statuses: map[string][]st{}}
	for key, at := range o.evicted {
		name := strings.SplitN(key, "/", 2)[0]
		out.Evictions = append(out.Evictions, ev{name, o.appOf[name], o.nodeOf[key], at.Sub(o.start).Seconds()})
	}
	for name, pts := range o.statuses {
		for _, p := range pts {
			out.Statuses[name] = append(out.Statuses[name], st{p.at.Sub(o.start).Seconds(), p.allowed, p.current, p.desired, p.expected})
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

package cluster

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
)

// Component names a control-plane process that fault injection can stop and start again.
// etcd is not one of them: it holds the cluster's data, which every restart keeps.
type Component string

// The components a test can stop, kill and restart.
const (
	APIServer         Component = "kube-apiserver"
	ControllerManager Component = "kube-controller-manager"
	Scheduler         Component = "kube-scheduler"
	Kwok              Component = "kwok"
)

// Components lists every component fault injection can act on, in start order.
var Components = []Component{APIServer, ControllerManager, Scheduler, Kwok}

// stopGrace is how long StopComponent waits after SIGTERM before it sends SIGKILL.
const stopGrace = 10 * time.Second

// adoptAPIServer finds the kube-apiserver envtest started (the one process under the
// cluster directory named kube-apiserver) and adopts it, so that it can be killed and
// started again with the same flags, certificates and port.
func (c *Cluster) adoptAPIServer() error {
	pids, err := ProcessesUnder(c.Dir)
	if err != nil {
		return err
	}
	for _, pid := range pids {
		if processName(pid) != string(APIServer) {
			continue
		}
		comp, err := adopt(string(APIServer), pid)
		if err != nil {
			return err
		}
		comp.health = strings.TrimRight(c.Config.Host, "/") + "/readyz"
		if comp.client, err = rest.HTTPClientFor(c.Config); err != nil {
			return fmt.Errorf("build the kube-apiserver health client: %w", err)
		}
		comp.client.Timeout = 2 * time.Second
		c.mu.Lock()
		c.components = append(c.components, comp)
		c.mu.Unlock()
		return nil
	}
	return fmt.Errorf("find the kube-apiserver envtest started: no such process under %s", c.Dir)
}

// component returns the running record of name.
func (c *Cluster) component(name Component) (*component, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, comp := range c.components {
		if comp.name == string(name) {
			return comp, nil
		}
	}
	return nil, fmt.Errorf("no component %q in this cluster (one of %v)", name, Components)
}

// PID returns the process ID of the component, or 0 when it is not running.
func (c *Cluster) PID(name Component) (int, error) {
	comp, err := c.component(name)
	if err != nil {
		return 0, err
	}
	if comp.exited() {
		return 0, nil
	}
	return comp.pid, nil
}

// Kill sends SIGKILL to the component (a crash: nothing is flushed or said goodbye) and
// returns once the process is gone.
func (c *Cluster) Kill(name Component) error {
	comp, err := c.component(name)
	if err != nil {
		return err
	}
	if comp.exited() {
		return nil
	}
	c.setDown(comp)
	c.mark(comp, "killed (SIGKILL) by the harness")
	if err := comp.signal(syscall.SIGKILL); err != nil && !comp.exited() {
		return fmt.Errorf("kill %s (pid %d): %w", name, comp.pid, err)
	}
	select {
	case <-comp.done:
		return nil
	case <-time.After(stopGrace):
		return fmt.Errorf("%s (pid %d) still running %s after SIGKILL", name, comp.pid, stopGrace)
	}
}

// StopComponent stops the component the way an operator would (SIGTERM, SIGKILL after
// 10 s) and returns once the process is gone. The rest of the cluster keeps running.
func (c *Cluster) StopComponent(name Component) error {
	comp, err := c.component(name)
	if err != nil {
		return err
	}
	c.setDown(comp)
	c.mark(comp, "stopped (SIGTERM) by the harness")
	comp.stop(stopGrace)
	return nil
}

// Restart starts the component again with the same binary, flags, ports and certificates,
// stopping it first (SIGTERM) if it still runs, and returns once it is healthy (the API
// server's /readyz, the others' /healthz). etcd's data is untouched, so the cluster
// comes back as it was.
func (c *Cluster) Restart(ctx context.Context, name Component) error {
	return c.restart(ctx, name, nil)
}

// RestartWith restarts the component as Restart does, with extra appended to its own
// flags instead of the extra of an earlier RestartWith (a later flag wins: for example
// "--kube-api-qps=2" slows kube-controller-manager's clients). RestartWith with no extra
// brings back its own flags.
func (c *Cluster) RestartWith(ctx context.Context, name Component, extra ...string) error {
	return c.restart(ctx, name, append([]string{}, extra...)) // never nil: none is its own flags
}

// restart restarts name; extra nil keeps the flags it runs with.
func (c *Cluster) restart(ctx context.Context, name Component, extra []string) error {
	old, err := c.component(name)
	if err != nil {
		return err
	}
	old.stop(stopGrace)
	c.mark(old, "started again by the harness")
	args, kept := old.args, old.extra
	if extra != nil {
		own := old.args[:len(old.args)-len(old.extra)]
		args, kept = append(append([]string(nil), own...), extra...), extra
	}
	comp, err := startComponent(old.name, old.path, args, filepath.Join(c.Dir, "logs"))
	if err != nil {
		return err
	}
	comp.extra = kept
	comp.health, comp.client = old.health, old.client
	c.mu.Lock()
	replaced := false
	for i := range c.components {
		if c.components[i] == old {
			c.components[i], replaced = comp, true
		}
	}
	if !replaced { // the cluster was stopped meanwhile
		c.mu.Unlock()
		comp.stop(stopGrace)
		return fmt.Errorf("restart %s: the cluster was stopped", name)
	}
	c.mu.Unlock()
	if err := waitHealthy(ctx, comp); err != nil {
		return fmt.Errorf("restart %s: %w\n%s", name, err, tail(c.LogPath(old.name), 25))
	}
	c.logf("local cluster: %s restarted (pid %d)", name, comp.pid)
	if name == APIServer {
		c.mu.Lock()
		downAt := old.downAt
		c.mu.Unlock()
		if err := c.afterAPIServerOutage(ctx, time.Since(downAt)); err != nil {
			return err
		}
	}
	return nil
}

// renewDeadline is kube-controller-manager's and kube-scheduler's default
// --leader-elect-renew-deadline.
const renewDeadline = 10 * time.Second

// afterAPIServerOutage does what a real control plane does once its API server is back.
// kube-controller-manager and kube-scheduler run with leader election there: an outage
// longer than the renew deadline makes them lose their lease and exit, and the kubelet
// starts them again, with fresh informers. The harness runs them without leader
// election (one of each), so it restarts them itself. A component that exited by itself
// meanwhile (kube-controller-manager does when the API server goes away while it builds
// its controllers) is started again as well.
func (c *Cluster) afterAPIServerOutage(ctx context.Context, outage time.Duration) error {
	if outage >= renewDeadline {
		for _, name := range []Component{ControllerManager, Scheduler} {
			comp, err := c.component(name)
			if err != nil {
				continue
			}
			c.mu.Lock()
			down := comp.downOnPurpose
			c.mu.Unlock()
			if down {
				continue
			}
			c.logf("local cluster: %s lost its leader lease in the %s outage; restarting it", name, outage.Round(time.Second))
			if err := c.Restart(ctx, name); err != nil {
				return err
			}
		}
	}
	_, err := c.Revive(ctx)
	return err
}

// Revive restarts, as a kubelet would, every component that exited without being stopped
// or killed by fault injection, and returns the ones it restarted.
func (c *Cluster) Revive(ctx context.Context) ([]Component, error) {
	c.mu.Lock()
	var dead []Component
	for _, comp := range c.components {
		if comp.exited() && !comp.downOnPurpose {
			dead = append(dead, Component(comp.name))
		}
	}
	c.mu.Unlock()
	for _, name := range dead {
		c.logf("local cluster: %s exited by itself; restarting it", name)
		if err := c.Restart(ctx, name); err != nil {
			return dead, err
		}
	}
	return dead, nil
}

// superviseEvery is how often the supervisor looks for components that exited by themselves.
const superviseEvery = time.Second

// supervise starts the goroutine that does what a kubelet does for static pods: a
// component that exits without being stopped or killed by fault injection is started
// again (kube-controller-manager and kwok exit when the API server goes away at the wrong
// moment, which a restart of the API server under load can cause). Stop ends it first.
func (c *Cluster) supervise() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(superviseEvery)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if _, err := c.Revive(ctx); err != nil && ctx.Err() == nil {
				c.logf("local cluster: revive: %v", err)
			}
		}
	}()
	c.stopSupervisor = func() { cancel(); <-done }
}

func (c *Cluster) setDown(comp *component) {
	c.mu.Lock()
	comp.downOnPurpose = true
	comp.downAt = time.Now()
	c.mu.Unlock()
}

// mark writes a line into the component's log, so that a reader of the log sees where a
// fault was injected.
func (c *Cluster) mark(comp *component, what string) {
	f, err := os.OpenFile(c.LogPath(comp.name), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	defer func() { _ = f.Close() }()
	_, _ = fmt.Fprintf(f, "==== %s: pid %d %s ====\n", time.Now().Format(time.RFC3339Nano), comp.pid, what)
	c.logf("local cluster: %s (pid %d) %s", comp.name, comp.pid, what)
}

// APIServerMetric reads the API server's /metrics and returns the sum of the samples of
// the named metric whose labels include every pair in match. For instance the eviction
// requests the server has answered:
//
//	c.APIServerMetric(ctx, "apiserver_request_total",
//		map[string]string{"resource": "pods", "subresource": "eviction", "verb": "POST"})
//
// A counter starts again from zero when the API server restarts.
func (c *Cluster) APIServerMetric(ctx context.Context, metric string, match map[string]string) (float64, error) {
	raw, err := c.Client.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return 0, fmt.Errorf("read the API server's /metrics: %w", err)
	}
	return sumMetric(raw, metric, match)
}

// sumMetric adds up the samples of metric in a Prometheus text exposition whose labels
// include every pair of match.
func sumMetric(text []byte, metric string, match map[string]string) (float64, error) {
	var sum float64
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, metric)
		if !ok || (rest != "" && rest[0] != '{' && rest[0] != ' ') {
			continue
		}
		labels := map[string]string{}
		if strings.HasPrefix(rest, "{") {
			end := strings.LastIndexByte(rest, '}')
			if end < 0 {
				return 0, fmt.Errorf("metrics line without a closing brace: %q", line)
			}
			for _, kv := range splitLabels(rest[1:end]) {
				k, v, _ := strings.Cut(kv, "=")
				labels[k] = strings.Trim(v, `"`)
			}
			rest = rest[end+1:]
		}
		if !matches(labels, match) {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return 0, fmt.Errorf("metrics line without a value: %q", line)
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			return 0, fmt.Errorf("metrics line %q: %w", line, err)
		}
		sum += v
	}
	return sum, sc.Err()
}

// splitLabels splits `a="x",b="y,z"` at the commas outside quotes.
func splitLabels(s string) []string {
	var out []string
	quoted, start := false, 0
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\':
			i++
		case s[i] == '"':
			quoted = !quoted
		case s[i] == ',' && !quoted:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

func matches(labels, match map[string]string) bool {
	for k, v := range match {
		if labels[k] != v {
			return false
		}
	}
	return true
}

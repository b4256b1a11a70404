package cluster

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// component is one control-plane process: one the harness started itself, or the
// kube-apiserver envtest started, adopted by PID (see adopt). Its path and arguments are
// kept so that the fault-injection methods can start it again exactly as it was.
type component struct {
	name string
	path string
	args []string
	// extra are the flags RestartWith appended to the component's own (args ends with them).
	extra []string
	// health is the URL that answers 200 once the component is healthy, probed with client.
	health string
	client *http.Client
	pid    int
	// signal sends sig to the process.
	signal func(sig syscall.Signal) error
	// downOnPurpose is set when fault injection stopped or killed the process: Revive
	// leaves it down.
	downOnPurpose bool
	// downAt is when fault injection stopped or killed it.
	downAt  time.Time
	done    chan struct{}
	waitErr error
}

// startComponent starts bin with args, its output appended to logDir/name.log (a restart
// keeps the log of the run before). The process gets its own process group (so a Ctrl-C in
// the terminal reaches the harness first, which then stops everything in order) and SIGKILL
// when the harness dies (Pdeathsig), so a crashed test binary leaves nothing behind.
func startComponent(name, bin string, args []string, logDir string) (*component, error) {
	logPath := filepath.Join(logDir, name+".log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open log for %s: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout = f
	cmd.Stderr = f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	c := &component{name: name, path: bin, args: args, pid: cmd.Process.Pid, done: make(chan struct{}),
		signal: func(sig syscall.Signal) error { return cmd.Process.Signal(sig) }}
	go func() {
		c.waitErr = cmd.Wait()
		_ = f.Close()
		close(c.done)
	}()
	return c, nil
}

// adopt takes over a running process the harness did not start (envtest's kube-apiserver):
// its path and arguments come from /proc, and its end is seen by polling /proc every 50 ms
// (its parent, envtest, reaps it; nothing else can be waited on).
func adopt(name string, pid int) (*component, error) {
	path, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return nil, fmt.Errorf("adopt %s (pid %d): %w", name, pid, err)
	}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return nil, fmt.Errorf("adopt %s (pid %d): %w", name, pid, err)
	}
	argv := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
	c := &component{name: name, path: path, args: argv[1:], pid: pid, done: make(chan struct{}),
		signal: func(sig syscall.Signal) error { return syscall.Kill(pid, sig) }}
	go func() {
		defer close(c.done)
		for alive(pid) {
			time.Sleep(50 * time.Millisecond)
		}
	}()
	return c, nil
}

// alive reports whether pid is a running process (not gone, not a zombie).
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	return err == nil && !isZombie(stat)
}

// exited reports whether the process has ended.
func (c *component) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM, then SIGKILL after grace, and waits for the process to end.
func (c *component) stop(grace time.Duration) {
	if c.exited() {
		return
	}
	_ = c.signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(grace):
		_ = c.signal(syscall.SIGKILL)
		<-c.done
	}
}

// Ports are picked below Linux's ephemeral range (32768–60999 by default): a port the
// kernel hands out for :0 comes from that range, as do the source ports of every outgoing
// connection, so between the pick and the component's own listen a client connection (of
// this cluster or of another package's, two run at once) could take it, and the component
// would then exit at every start and restart (kube-controller-manager crash-looped for six
// minutes in one CI run, failing three tests).
const (
	portLow, portHigh = 20000, 32767
	portTries         = 100
)

// freePort picks a free loopback port at random in [portLow, portHigh].
func freePort() (int, error) {
	var err error
	for range portTries {
		port := portLow + rand.IntN(portHigh-portLow+1)
		var l net.Listener
		if l, err = net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port)); err == nil {
			_ = l.Close()
			return port, nil
		}
	}
	return 0, fmt.Errorf("find a free port in %d-%d: %w", portLow, portHigh, err)
}

// insecureClient probes the health endpoints of the loopback components, whose serving
// certificates are self-signed.
var insecureClient = &http.Client{
	Timeout:   time.Second,
	Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // loopback health check of a self-signed test component
}

// waitHealthy polls the component's health URL until it answers 200, the component exits,
// or ctx ends. A health endpoint has no watch, so this is the one place the harness polls
// (every 100 ms).
func waitHealthy(ctx context.Context, c *component) error {
	client := c.client
	if client == nil {
		client = insecureClient
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		resp, err := client.Get(c.health)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not healthy at %s: %w", c.name, c.health, ctx.Err())
		case <-c.done:
			return fmt.Errorf("%s exited before it was healthy: %v", c.name, c.waitErr)
		case <-tick.C:
		}
	}
}

// tail returns the last n lines of the file at path.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// ProcessesUnder lists the PIDs of running processes whose command line mentions dir.
// Every component of a cluster is started with paths inside the cluster's directory
// (kubeconfig, data dir, certificates), so this finds all of them, including the ones
// envtest started, without trusting any bookkeeping.
func ProcessesUnder(dir string) ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	self := os.Getpid()
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte(dir)) {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && isZombie(stat) {
			continue
		}
		pids = append(pids, pid)
	}
	return pids, nil
}

// isZombie reports whether a /proc/PID/stat line is of a zombie (state Z), which holds no
// resources and only waits for its parent to reap it.
func isZombie(stat []byte) bool {
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}

// rssMiB returns the resident memory of pid in MiB (VmRSS, or with peak the high-water
// mark VmHWM), from /proc/PID/status.
func rssMiB(pid int, peak bool) (float64, error) {
	field := "VmRSS:"
	if peak {
		field = "VmHWM:"
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("read status of pid %d: %w", pid, err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == field {
			kb, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				return 0, fmt.Errorf("parse VmRSS of pid %d: %w", pid, err)
			}
			return kb / 1024, nil
		}
	}
	return 0, fmt.Errorf("no %s line", field)
}

// processName returns the executable name of pid.
func processName(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(b))
}

// startReaper starts a tiny shell that outlives the harness only to kill, with SIGKILL,
// every process still mentioning dir once the harness process is gone (a test binary
// that panics or is killed with -9 runs no cleanup of its own). It checks once a second
// whether the harness is alive; it has nothing else to wait on.
func startReaper(dir string) error {
	script := `while kill -0 "$1" 2>/dev/null; do sleep 1; done
for p in /proc/[0-9]*; do
  pid=${p#/proc/}; [ "$pid" = "$$" ] && continue
  if tr '\0' ' ' < "$p/cmdline" 2>/dev/null | grep -qF -- "$KM_REAPER_DIR"; then kill -9 "$pid" 2>/dev/null; fi
done
rm -rf -- "$KM_REAPER_DIR"`
	// dir travels in the environment, not the command line, so that ProcessesUnder never
	// counts the reaper itself.
	cmd := exec.Command("/bin/sh", "-c", script, "km-reaper", strconv.Itoa(os.Getpid()))
	cmd.Env = append(os.Environ(), "KM_REAPER_DIR="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start reaper: %w", err)
	}
	go func() { _ = cmd.Wait() }()
	return nil
}

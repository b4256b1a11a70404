package cluster

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
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

// component is one control-plane process the harness started itself.
type component struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	logFile *os.File
	done    chan struct{}
	waitErr error
}

// startComponent starts bin with args, its output going to logDir/name.log. The process
// gets its own process group (so a Ctrl-C in the terminal reaches the harness first, which
// then stops everything in order) and SIGKILL when the harness dies (Pdeathsig), so a
// crashed test binary leaves nothing behind.
func startComponent(name, bin string, args []string, logDir string) (*component, error) {
	logPath := filepath.Join(logDir, name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("create log for %s: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout = f
	cmd.Stderr = f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	c := &component{name: name, cmd: cmd, logPath: logPath, logFile: f, done: make(chan struct{})}
	go func() {
		c.waitErr = cmd.Wait()
		_ = f.Close()
		close(c.done)
	}()
	return c, nil
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
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(grace):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitHealthy polls url until it answers 200, the component exits, or ctx ends. A health
// endpoint has no watch, so this is the one place the harness polls (every 100 ms).
func waitHealthy(ctx context.Context, c *component, url string) error {
	client := &http.Client{
		Timeout:   time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // loopback health check of a self-signed test component
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		resp, err := client.Get(url)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not healthy at %s: %w", c.name, url, ctx.Err())
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

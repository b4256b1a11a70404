// Package cluster starts a real, local Kubernetes control plane on loopback for tests and
// the demo: etcd and kube-apiserver through controller-runtime's envtest, then
// kube-controller-manager (its disruption controller computes PDB status), kube-scheduler
// and kwok (simulated kubelets driven by Stage objects, with node heartbeats). Every binary
// is built by the project from pinned sources (hack/build-tools.sh). Start returns when
// every component is healthy; Stop ends every process it started, by PID.
package cluster

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

//go:embed stages.yaml
var stagesTemplate string

// Options configures a local cluster. The zero value is usable.
type Options struct {
	// BinDir holds etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl
	// and kwok. Empty: $KM_TOOLS_DIR, else built (once per machine) by hack/build-tools.sh.
	BinDir string
	// PodReadyDelay is how long kwok waits before a scheduled pod becomes Ready. A pod can
	// override it with the annotation pod-ready.stage.kwok.x-k8s.io/delay (e.g. "3s").
	PodReadyDelay time.Duration
	// PodDeleteDelay is how long a terminating pod stays before kwok removes it. A pod can
	// override it with the annotation pod-delete.stage.kwok.x-k8s.io/delay.
	PodDeleteDelay time.Duration
	// StartTimeout bounds the whole start-up. Default 2 minutes.
	StartTimeout time.Duration
	// ExtraArgs are flags appended to a component's command line, by component name
	// (kube-apiserver, kube-controller-manager, kube-scheduler, kwok), as "--name=value".
	// A later flag wins, so they override the harness's own. For large clusters (the
	// bench's fleet profile): client QPS of the controllers, kwok's lease duration.
	ExtraArgs map[string][]string
	// Logf receives progress lines (start-up time, memory, log tails on failure).
	// Default: discard.
	Logf func(format string, args ...any)
}

// Cluster is a running local control plane.
type Cluster struct {
	// Dir holds the kubeconfig, certificates, etcd data, stages and component logs.
	Dir string
	// Kubeconfig is the path of an admin (system:masters) kubeconfig for the cluster.
	Kubeconfig string
	// Config is the admin REST config, with QPS and burst raised for test fixtures.
	Config *rest.Config
	// Client is an admin clientset built from Config.
	Client kubernetes.Interface
	// StartupTime is how long Start took, binaries already built.
	StartupTime time.Duration
	// BinDir holds the pinned binaries the cluster runs, and the pinned kubectl.
	BinDir string

	env      *envtest.Environment
	logFiles []*os.File
	logf     func(string, ...any)

	// mu guards components, which fault injection replaces on a restart.
	mu sync.Mutex
	// components are the processes besides etcd, in start order: kube-apiserver (adopted
	// from envtest, or restarted by the harness), kube-controller-manager, kube-scheduler,
	// kwok.
	components []*component
	// stopSupervisor ends the goroutine that restarts components that exit by themselves
	// and waits for it.
	stopSupervisor func()
}

// Start builds (if needed) and starts a local cluster, and waits until every component is
// healthy. On any failure it stops what it started and returns an error that carries the
// tail of every component log.
func Start(ctx context.Context, opts Options) (c *Cluster, err error) {
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 2 * time.Minute
	}
	logf := opts.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	binDir := opts.BinDir
	if binDir == "" {
		if binDir, err = Binaries(ctx); err != nil {
			return nil, err
		}
	}
	dir, err := os.MkdirTemp("", "km-cluster-")
	if err != nil {
		return nil, fmt.Errorf("create cluster dir: %w", err)
	}
	if err := startReaper(dir); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	c = &Cluster{Dir: dir, BinDir: binDir, logf: logf}
	defer func() {
		if err != nil {
			err = fmt.Errorf("%w\n%s", err, c.logTails(25))
			c.Stop()
		}
	}()
	began := time.Now()
	ctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()

	if err := c.startAPIServer(binDir, opts.ExtraArgs["kube-apiserver"]); err != nil {
		return c, err
	}
	certDir := filepath.Join(dir, "apiserver")
	kubeconfig := c.Kubeconfig
	common := []string{"--kubeconfig", kubeconfig, "--authentication-kubeconfig", kubeconfig,
		"--authorization-kubeconfig", kubeconfig, "--bind-address", "127.0.0.1"}

	kcmPort, err := freePort()
	if err != nil {
		return c, err
	}
	kcm, err := c.start("kube-controller-manager", filepath.Join(binDir, "kube-controller-manager"), append(append(common,
		"--secure-port", strconv.Itoa(kcmPort), "--cert-dir", filepath.Join(dir, "kcm"),
		"--service-account-private-key-file", filepath.Join(certDir, "sa-signer.key"),
		"--use-service-account-credentials=false", "--leader-elect=false", "--controllers=*"),
		opts.ExtraArgs["kube-controller-manager"]...))
	if err != nil {
		return c, err
	}
	schedPort, err := freePort()
	if err != nil {
		return c, err
	}
	sched, err := c.start("kube-scheduler", filepath.Join(binDir, "kube-scheduler"), append(append(common,
		"--secure-port", strconv.Itoa(schedPort), "--cert-dir", filepath.Join(dir, "scheduler"), "--leader-elect=false"),
		opts.ExtraArgs["kube-scheduler"]...))
	if err != nil {
		return c, err
	}
	stages := strings.NewReplacer(
		"__POD_READY_DELAY_MS__", strconv.FormatInt(opts.PodReadyDelay.Milliseconds(), 10),
		"__POD_DELETE_DELAY_MS__", strconv.FormatInt(opts.PodDeleteDelay.Milliseconds(), 10),
	).Replace(stagesTemplate)
	stagesPath := filepath.Join(dir, "kwok-stages.yaml")
	if err := os.WriteFile(stagesPath, []byte(stages), 0o600); err != nil {
		return c, fmt.Errorf("write kwok stages: %w", err)
	}
	kwokPort, err := freePort()
	if err != nil {
		return c, err
	}
	kwok, err := c.start("kwok", filepath.Join(binDir, "kwok"), append([]string{
		"--kubeconfig", kubeconfig, "--manage-all-nodes=true", "--config", stagesPath,
		"--server-address", "127.0.0.1:" + strconv.Itoa(kwokPort), "--node-lease-duration-seconds", "40"},
		opts.ExtraArgs["kwok"]...))
	if err != nil {
		return c, err
	}
	kcm.health = fmt.Sprintf("https://127.0.0.1:%d/healthz", kcmPort)
	sched.health = fmt.Sprintf("https://127.0.0.1:%d/healthz", schedPort)
	kwok.health = fmt.Sprintf("http://127.0.0.1:%d/healthz", kwokPort)
	for _, comp := range []*component{kcm, sched, kwok} {
		if err := waitHealthy(ctx, comp); err != nil {
			return c, err
		}
	}
	c.StartupTime = time.Since(began)
	c.supervise()
	logf("local cluster: started in %s (dir %s)", c.StartupTime.Round(time.Millisecond), dir)
	logf("local cluster: memory %s", c.MemoryReport())
	return c, nil
}

// startAPIServer starts etcd and kube-apiserver through envtest and writes an admin kubeconfig.
func (c *Cluster) startAPIServer(binDir string, extra []string) error {
	env := &envtest.Environment{BinaryAssetsDirectory: binDir}
	cp := &env.ControlPlane
	api := cp.GetAPIServer()
	api.CertDir = filepath.Join(c.Dir, "apiserver")
	if err := os.MkdirAll(api.CertDir, 0o700); err != nil {
		return fmt.Errorf("create apiserver dir: %w", err)
	}
	etcdDir := filepath.Join(c.Dir, "etcd")
	if err := os.MkdirAll(etcdDir, 0o700); err != nil {
		return fmt.Errorf("create etcd dir: %w", err)
	}
	logDir := filepath.Join(c.Dir, "logs")
	if err := os.MkdirAll(logDir, 0o700); err != nil {
		return fmt.Errorf("create log dir: %w", err)
	}
	etcdLog, err := os.Create(filepath.Join(logDir, "etcd.log"))
	if err != nil {
		return fmt.Errorf("create etcd log: %w", err)
	}
	apiLog, err := os.Create(filepath.Join(logDir, "kube-apiserver.log"))
	if err != nil {
		return fmt.Errorf("create kube-apiserver log: %w", err)
	}
	c.logFiles = append(c.logFiles, etcdLog, apiLog)
	env.ControlPlane.Etcd = &envtest.Etcd{DataDir: etcdDir, Out: etcdLog, Err: etcdLog}
	api.Out, api.Err = apiLog, apiLog
	// Profiling and the debug socket are of no use here; keep the logs quiet.
	args := api.Configure().Set("profiling", "false").Set("v", "1")
	for _, a := range extra {
		k, v, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		args.Set(k, v)
	}
	c.env = env
	if _, err := env.Start(); err != nil {
		return fmt.Errorf("start etcd and kube-apiserver: %w", err)
	}
	user, err := cp.AddUser(envtest.User{Name: "km-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return fmt.Errorf("add admin user: %w", err)
	}
	kc, err := user.KubeConfig()
	if err != nil {
		return fmt.Errorf("render admin kubeconfig: %w", err)
	}
	c.Kubeconfig = filepath.Join(c.Dir, "kubeconfig")
	if err := os.WriteFile(c.Kubeconfig, kc, 0o600); err != nil {
		return fmt.Errorf("write kubeconfig: %w", err)
	}
	cfg := rest.CopyConfig(user.Config())
	cfg.QPS, cfg.Burst = 200, 400
	c.Config = cfg
	if c.Client, err = kubernetes.NewForConfig(cfg); err != nil {
		return fmt.Errorf("build client: %w", err)
	}
	return c.adoptAPIServer()
}

func (c *Cluster) start(name, bin string, args []string) (*component, error) {
	logDir := filepath.Join(c.Dir, "logs")
	if err := os.MkdirAll(logDir, 0o700); err != nil {
		return nil, fmt.Errorf("create log dir: %w", err)
	}
	comp, err := startComponent(name, bin, args, logDir)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.components = append(c.components, comp)
	c.mu.Unlock()
	return comp, nil
}

// Stop ends every component (SIGTERM, then SIGKILL), stops envtest, kills any process that
// still mentions the cluster directory, and removes the directory. Safe to call twice.
func (c *Cluster) Stop() {
	if c.stopSupervisor != nil {
		c.stopSupervisor() // first: it must not restart what Stop ends
		c.stopSupervisor = nil
	}
	c.mu.Lock()
	comps := c.components
	c.components = nil
	c.mu.Unlock()
	for i := len(comps) - 1; i >= 0; i-- {
		comps[i].stop(10 * time.Second)
	}
	if c.env != nil {
		if err := c.env.Stop(); err != nil {
			c.logf("local cluster: stop envtest: %v", err)
		}
		c.env = nil
	}
	for _, f := range c.logFiles {
		_ = f.Close()
	}
	c.logFiles = nil
	if c.Dir == "" {
		return
	}
	if pids, _ := ProcessesUnder(c.Dir); len(pids) > 0 {
		for _, pid := range pids {
			if p, err := os.FindProcess(pid); err == nil {
				_ = p.Kill()
			}
		}
		c.logf("local cluster: killed %d leftover processes: %v", len(pids), pids)
	}
	if keep := os.Getenv("KM_KEEP_LOGS"); keep != "" {
		// Keep the components' logs for a post-mortem: KM_KEEP_LOGS=DIR.
		dst := filepath.Join(keep, filepath.Base(c.Dir))
		if err := os.MkdirAll(keep, 0o755); err == nil && os.Rename(filepath.Join(c.Dir, "logs"), dst) == nil {
			c.logf("local cluster: logs kept in %s", dst)
		}
	}
	_ = os.RemoveAll(c.Dir)
}

// Running lists the PIDs of processes that belong to this cluster (see ProcessesUnder).
func (c *Cluster) Running() ([]int, error) { return ProcessesUnder(c.Dir) }

// MemoryReport gives the resident memory of each running component, e.g.
// "etcd 44 MiB, kube-apiserver 270 MiB, ...".
func (c *Cluster) MemoryReport() string { return c.memory(false) }

// PeakMemoryReport gives each component's peak resident memory so far (VmHWM).
func (c *Cluster) PeakMemoryReport() string { return c.memory(true) }

func (c *Cluster) memory(peak bool) string {
	pids, err := c.Running()
	if err != nil {
		return err.Error()
	}
	var parts []string
	total := 0.0
	for _, pid := range pids {
		mib, err := rssMiB(pid, peak)
		if err != nil {
			continue
		}
		total += mib
		parts = append(parts, fmt.Sprintf("%s %.0f MiB", processName(pid), mib))
	}
	sort.Strings(parts)
	return fmt.Sprintf("%s; total %.0f MiB", strings.Join(parts, ", "), total)
}

// LogPath is the log file of the named component (etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler, kwok).
func (c *Cluster) LogPath(name string) string { return filepath.Join(c.Dir, "logs", name+".log") }

// logTails returns the last n lines of every component log, for failure reports.
func (c *Cluster) logTails(n int) string {
	var b strings.Builder
	for _, name := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"} {
		p := c.LogPath(name)
		if _, err := os.Stat(p); err == nil {
			fmt.Fprintf(&b, "--- %s (%s), last %d lines:\n%s\n", name, p, n, tail(p, n))
		}
	}
	return b.String()
}

// Package manager owns the controller process: one controller-runtime manager, with
// leader election, probes and metrics, that runs the NodePool reconciler
// (nodepool/reconciler), the Maintenance runs (maintenance.Setup) and, on request, the
// NodePools' auto-rollout (operation.AutoRollout). It checks once at start that the
// controller may make every call it makes. The commands "controller" and "pool
// controller" (cmd/cli) fill its Config; it never prints (Config.Started and Config.Warn
// are the caller's).
package manager

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kubectl-maintenance/kubectl-maintenance/access"
	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance"
	"github.com/kubectl-maintenance/kubectl-maintenance/metrics"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/reconciler"
	"github.com/kubectl-maintenance/kubectl-maintenance/operation"
)

// Config is the controller's settings (the controller commands' flags), its REST config,
// scheme and clientset, and what it runs besides the pool reconciler.
type Config struct {
	REST   *rest.Config
	Scheme *runtime.Scheme
	// Kube is the clientset the runs use (the engine's evictions, cordons, records).
	Kube kubernetes.Interface
	// LeaderElect elects a leader (Lease LeaseName, default LeaderElectionID, in
	// LeaderNamespace).
	LeaderElect     bool
	LeaderNamespace string
	LeaseName       string
	// LeaseDuration, when positive, replaces controller-runtime's lease timings with it,
	// RenewDeadline and RetryPeriod.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// ProbeAddr serves /healthz and /readyz ("0": none); MetricsAddr the metrics ("0": none).
	ProbeAddr, MetricsAddr string
	// Only restricts the controller to these pools (every pool when empty).
	Only []string
	// Rollout rolls held-back NoExecute taints out (AutoRollout).
	Rollout bool
	// Maintenances runs the Maintenance objects too (maintenance.SetupObserved) on the
	// same manager, after the pool reconciler, and serves their metrics.
	Maintenances bool
	// Started is called once the controller is set up, before it runs.
	Started func()
	// Warn, when set, is told one line per permission the controller lacks (asked at
	// start: access.Controller) and about a check that could not be made.
	Warn func(line string)
}

// PoolLeaseName names the pool controller's leader election Lease ("pool controller").
const PoolLeaseName = "kubectl-maintenance-nodepools"

// Run runs the pool reconciler and, with Maintenances, the Maintenance runs as a
// long-running controller on cfg.Kube until ctx ends: a controller-runtime manager with
// leader election, probes, metrics and, with Rollout, the auto-rollout.
func Run(ctx context.Context, cfg Config) error {
	if cfg.Kube == nil {
		return errors.New("manager: a clientset is required")
	}
	ctrl.SetLogger(klog.NewKlogr())
	checkPermissions(ctx, cfg.Kube, cfg.Warn)
	if cfg.Maintenances {
		checkAdmission(ctx, cfg.Kube, cfg.Warn)
	}
	lease := cfg.LeaseName
	if lease == "" {
		lease = PoolLeaseName
	}
	opts := ctrl.Options{
		Scheme:                  cfg.Scheme,
		LeaderElection:          cfg.LeaderElect,
		LeaderElectionID:        lease,
		LeaderElectionNamespace: cfg.LeaderNamespace,
		// A clean stop (SIGTERM: a rolling update, a drained node) gives the Lease up at
		// once, after the runs have stopped (the manager cancels its runnables first), so
		// the standby leads within its retry period instead of after the lease expires.
		LeaderElectionReleaseOnCancel: true,
		HealthProbeBindAddress:        cfg.ProbeAddr,
		Metrics:                       metricsserver.Options{BindAddress: cfg.MetricsAddr},
		Cache:                         cache.Options{DefaultTransform: cache.TransformStripManagedFields()},
	}
	if cfg.LeaseDuration > 0 {
		opts.LeaseDuration, opts.RenewDeadline, opts.RetryPeriod = &cfg.LeaseDuration, &cfg.RenewDeadline, &cfg.RetryPeriod
	}
	mgr, err := ctrl.NewManager(cfg.REST, opts)
	if err != nil {
		return fmt.Errorf("create controller manager: %w", err)
	}
	r := &reconciler.Reconciler{Client: mgr.GetClient(), Kube: cfg.Kube}
	if len(cfg.Only) > 0 {
		r.Only = map[string]bool{}
		for _, p := range cfg.Only {
			r.Only[p] = true
		}
	}
	if cfg.Rollout {
		auto := (&operation.Operator{Kube: cfg.Kube, Pools: mgr.GetClient()}).AutoRollout(klog.NewKlogr().WithName("rollout"))
		r.AutoRollout = auto
		if err := mgr.Add(auto); err != nil {
			return fmt.Errorf("set up the rollouts: %w", err)
		}
	}
	if err := r.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("set up the pool controller: %w", err)
	}
	if cfg.Maintenances {
		// The runs' events and the objects feed the kubectl_maintenance_* metrics, served
		// on the manager's metrics endpoint (package metrics).
		rec := metrics.NewRecorder(nil)
		if err := metrics.Register(metrics.Registry, rec, mgr.GetCache()); err != nil {
			return fmt.Errorf("register the metrics: %w", err)
		}
		if err := maintenance.SetupObserved(rec, ctx)(mgr, cfg.Kube); err != nil {
			return err
		}
	}
	if cfg.ProbeAddr != "0" {
		_ = mgr.AddHealthzCheck("healthz", healthz.Ping)
		_ = mgr.AddReadyzCheck("readyz", healthz.Ping)
	}
	if cfg.Started != nil {
		cfg.Started()
	}
	err = mgr.Start(ctx)
	if err != nil && ctx.Err() == nil && strings.Contains(err.Error(), "leader election lost") {
		// controller-runtime cannot campaign again with the same manager: the process
		// exits (1) and its supervisor starts a fresh one (docs/operations.md).
		return fmt.Errorf("%w: the Lease %s/%s could not be renewed in time (is the API server reachable?); every run stopped, the nodes keep their records, and this process exits so that a fresh one campaigns again: run it under a supervisor that restarts it (the Deployment in config/manager does)",
			ErrLeaseLost, cfg.LeaderNamespace, lease)
	}
	return err
}

// ErrLeaseLost is the error of a controller that lost its Lease (it could not renew it
// within the renew deadline, usually because the API server did not answer): it exits
// and is to be started again.
var ErrLeaseLost = errors.New("leader election lost")

// RequesterPolicy names the ValidatingAdmissionPolicy (and its binding) that refuses a
// Maintenance whose requester may not make the calls it asks the controller to make
// (config/admission, the chart's files/admission).
const RequesterPolicy = "kubectl-maintenance-requester-rights"

// checkAdmission warns when the requester policy's binding is not in the cluster: without
// it, anyone who may create a Maintenance has the controller cordon, drain and evict with
// the controller's own rights (a local controller runs with its user's). A controller
// that may not read bindings (the in-cluster one: its role does not grant it) says
// nothing: the install that made it installed the policy too.
func checkAdmission(ctx context.Context, kube kubernetes.Interface, warn func(string)) {
	if warn == nil {
		return
	}
	_, err := kube.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Get(ctx, RequesterPolicy, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		warn(fmt.Sprintf("no admission policy checks who asks for a Maintenance (ValidatingAdmissionPolicyBinding %s not found): "+
			"anyone who may create a Maintenance has this controller act with its rights; install it with "+
			"`kubectl maintenance install --controller` or `kubectl apply -f config/admission/` (docs/security.md)", RequesterPolicy))
	}
}

// checkPermissions asks the API server, once at start, for every call the controller
// makes (access.Controller) and names each one it may not make, one line each: a
// controller without a permission it needs would otherwise fail (or, for Events, record
// nothing) in silence.
func checkPermissions(ctx context.Context, kube kubernetes.Interface, warn func(string)) {
	if warn == nil {
		return
	}
	k := &access.Checker{Client: kube}
	missing, err := k.Missing(ctx, access.Controller())
	if err != nil {
		warn(fmt.Sprintf("could not check the controller's permissions: %v", err))
		return
	}
	for _, c := range missing {
		warn(fmt.Sprintf("the controller may not %s: grant it (config/rbac/rbac.yaml has every rule it needs)", c))
	}
}

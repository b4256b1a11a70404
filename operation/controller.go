package operation

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kubectl-maintenance/kubectl-maintenance/access"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/reconciler"
)

// ControllerConfig is the controller's settings (the controller commands' flags), its
// REST config and scheme, and the controllers it runs besides the pool reconciler.
type ControllerConfig struct {
	REST   *rest.Config
	Scheme *runtime.Scheme
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
	// Controllers are set up on the same manager after the pool reconciler, each given
	// the manager and the operator's clientset (e.g. maintenance.Setup: the Maintenances).
	Controllers []func(mgr ctrl.Manager, kube kubernetes.Interface) error
	// Started is called once the controller is set up, before it runs.
	Started func()
	// Warn, when set, is told one line per permission the controller lacks (asked at
	// start: access.Controller) and about a check that could not be made.
	Warn func(line string)
}

// LeaderElectionID names the pool controller's leader election Lease.
const LeaderElectionID = "kubectl-maintenance-nodepools"

// ControllerLeaseID names the leader election Lease of the controller that runs NodePools
// and Maintenances in one manager ("kubectl maintenance controller").
const ControllerLeaseID = "kubectl-maintenance-controller"

// RunController runs the pool reconciler and cfg's Controllers as a long-running
// controller on the operator's clientset until ctx ends: a controller-runtime manager with
// leader election, probes, metrics and, with Rollout, the auto-rollout.
func (o *Operator) RunController(ctx context.Context, cfg ControllerConfig) error {
	ctrl.SetLogger(klog.NewKlogr())
	o.checkPermissions(ctx, cfg.Warn)
	lease := cfg.LeaseName
	if lease == "" {
		lease = LeaderElectionID
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
	r := &reconciler.Reconciler{Client: mgr.GetClient(), Kube: o.Kube}
	if len(cfg.Only) > 0 {
		r.Only = map[string]bool{}
		for _, p := range cfg.Only {
			r.Only[p] = true
		}
	}
	if cfg.Rollout {
		auto := (&Operator{Kube: o.Kube, Pools: mgr.GetClient()}).AutoRollout(klog.NewKlogr().WithName("rollout"))
		r.AutoRollout = auto
		if err := mgr.Add(auto); err != nil {
			return fmt.Errorf("set up the rollouts: %w", err)
		}
	}
	if err := r.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("set up the pool controller: %w", err)
	}
	for _, setup := range cfg.Controllers {
		if err := setup(mgr, o.Kube); err != nil {
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
	return mgr.Start(ctx)
}

// checkPermissions asks the API server, once at start, for every call the controller
// makes (access.Controller) and names each one it may not make, one line each: a
// controller without a permission it needs would otherwise fail (or, for Events, record
// nothing) in silence.
func (o *Operator) checkPermissions(ctx context.Context, warn func(string)) {
	if warn == nil {
		return
	}
	k := &access.Checker{Client: o.Kube}
	missing, err := k.Missing(ctx, access.Controller())
	if err != nil {
		warn(fmt.Sprintf("could not check the controller's permissions: %v", err))
		return
	}
	for _, c := range missing {
		warn(fmt.Sprintf("the controller may not %s: grant it (config/rbac/rbac.yaml has every rule it needs)", c))
	}
}

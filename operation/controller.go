package operation

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool"
)

// ControllerConfig is the pool controller's settings (pool controller's flags) and its
// REST config and scheme.
type ControllerConfig struct {
	REST   *rest.Config
	Scheme *runtime.Scheme
	// LeaderElect elects a leader (Lease LeaderElectionID in LeaderNamespace).
	LeaderElect     bool
	LeaderNamespace string
	// ProbeAddr serves /healthz and /readyz ("0": none); MetricsAddr the metrics ("0": none).
	ProbeAddr, MetricsAddr string
	// Only restricts the controller to these pools (every pool when empty).
	Only []string
	// Rollout rolls held-back NoExecute taints out (AutoRollout).
	Rollout bool
	// Started is called once the controller is set up, before it runs.
	Started func()
}

// LeaderElectionID names the pool controller's leader election Lease.
const LeaderElectionID = "kubectl-maintenance-nodepools"

// RunController runs the pool reconciler as a long-running controller on the
// operator's clientset until ctx ends: a controller-runtime manager with leader election,
// probes, metrics and, with Rollout, the auto-rollout.
func (o *Operator) RunController(ctx context.Context, cfg ControllerConfig) error {
	ctrl.SetLogger(klog.NewKlogr())
	mgr, err := ctrl.NewManager(cfg.REST, ctrl.Options{
		Scheme:                  cfg.Scheme,
		LeaderElection:          cfg.LeaderElect,
		LeaderElectionID:        LeaderElectionID,
		LeaderElectionNamespace: cfg.LeaderNamespace,
		HealthProbeBindAddress:  cfg.ProbeAddr,
		Metrics:                 metricsserver.Options{BindAddress: cfg.MetricsAddr},
		Cache:                   cache.Options{DefaultTransform: cache.TransformStripManagedFields()},
	})
	if err != nil {
		return fmt.Errorf("create controller manager: %w", err)
	}
	r := &nodepool.Reconciler{Client: mgr.GetClient(), Kube: o.Kube}
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
	if cfg.ProbeAddr != "0" {
		_ = mgr.AddHealthzCheck("healthz", healthz.Ping)
		_ = mgr.AddReadyzCheck("readyz", healthz.Ping)
	}
	if cfg.Started != nil {
		cfg.Started()
	}
	return mgr.Start(ctx)
}

package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/completion"
	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/manager"
	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance"
)

// controllerOptions are the flags of "controller" and "pool controller".
type controllerOptions struct {
	leaderElect                               bool
	leaderNamespace, probeAddr, metricsAddr   string
	only                                      []string
	rollout                                   bool
	leaseDuration, renewDeadline, retryPeriod time.Duration
}

// newCmdController builds "kubectl maintenance controller" (maintenances true: NodePools
// and Maintenances in one manager) or "pool controller" (NodePools only, its own Lease).
func newCmdController(c *Common, maintenances bool) *cobra.Command {
	o := &controllerOptions{}
	short := "Run the pool reconciler as a long-running controller (with leader election), e.g. in-cluster (see config/)"
	long := `Run the pool reconciler as a long-running controller. It reads pools, RuntimeClasses and
nodes from its informers' cache, and reconciles a pool when the pool changes or when one of
its nodes changes in a way that matters (role labels, the pool's labels, taints, ownership
records, schedulability): heartbeats cost nothing. --pools restricts it to some pools.

With --rollout, a NoExecute taint it holds back (ordinary pods on the node don't tolerate
it) is rolled out by the controller itself, as pool sync POOL --rollout does: node by node
at the pool's maxUnavailable, each node drained of those pods through the drain engine
(DaemonSet pods stay; the taint removes them), with the RolloutProgressing condition.`
	leaseID := manager.PoolLeaseName
	if maintenances {
		short = "Run the controller: NodePools and Maintenances (maintenance run in the cluster), with leader election"
		long = `Run the controller: one manager that reconciles NodePools (as "pool controller" does) and
runs Maintenances (maintenance.kubectl-maintenance.io/v1alpha1): each object that is not
paused, finished or waiting is one run of the operations layer, its progress written to the
object's status at most every few seconds. A node is in at most one run at a time; an
object that wants a node another holds waits (condition WaitingForNodes naming it).
Only the leader (Lease kubectl-maintenance-controller in --leader-election-namespace)
runs anything; a new leader resumes every Running object from the nodes' records.
It runs in the cluster (config/manager) or as a local process with a kubeconfig.

` + long[strings.Index(long, "With --rollout"):]
		leaseID = maintenance.LeaseName
	}
	cmd := &cobra.Command{
		Use:   "controller",
		Short: short,
		Long:  long,
		Args:  noArgsUsage,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := c.RESTConfig()
			if err != nil {
				return err
			}
			cs, err := c.Client()
			if err != nil {
				return err
			}
			what := "pool controller"
			cc := manager.Config{Kube: cs,
				REST: cfg, Scheme: Scheme(), LeaderElect: o.leaderElect, LeaderNamespace: o.leaderNamespace,
				LeaseName: leaseID, ProbeAddr: o.probeAddr, MetricsAddr: o.metricsAddr, Only: o.only, Rollout: o.rollout,
				LeaseDuration: o.leaseDuration, RenewDeadline: o.renewDeadline, RetryPeriod: o.retryPeriod,
				Started: func() { fmt.Fprintf(c.ErrOut, "%s running; Ctrl-C to stop\n", what) },
			}
			if maintenances {
				cc.Maintenances = true
				cc.Warn = func(line string) { fmt.Fprintf(c.ErrOut, "Warning: %s\n", line) }
				what = "controller (NodePools, Maintenances)"
			}
			return manager.Run(cmd.Context(), cc)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.leaderElect, "leader-elect", true, "elect a leader so that only one replica reconciles")
	f.StringVar(&o.leaderNamespace, "leader-election-namespace", "kube-system", "namespace of the leader election Lease")
	f.StringVar(&o.probeAddr, "health-probe-bind-address", "0", `address of /healthz and /readyz, e.g. :8081 ("0", the default: none, so that replicas on one machine don't collide; config/manager sets :8081)`)
	f.StringVar(&o.metricsAddr, "metrics-bind-address", "0", `address of the metrics endpoint, e.g. :8080 (/metrics: the kubectl_maintenance_* families, see docs/reference/metrics.md, and client-go's rest_client_requests_total; "0": none)`)
	f.StringSliceVar(&o.only, "pools", nil, "reconcile only these pools (default: every pool)")
	f.BoolVar(&o.rollout, "rollout", false, "roll held-back NoExecute taints out by itself (drains through the engine, PDB-aware)")
	if maintenances {
		f.DurationVar(&o.leaseDuration, "leader-election-lease-duration", 0, "how long a replica waits before taking over a Lease not renewed (0: controller-runtime's 15s)")
		f.DurationVar(&o.renewDeadline, "leader-election-renew-deadline", 10*time.Second, "how long the leader tries to renew before giving up (with --leader-election-lease-duration)")
		f.DurationVar(&o.retryPeriod, "leader-election-retry-period", 2*time.Second, "how often replicas try to take or renew the Lease (with --leader-election-lease-duration)")
	}
	_ = cmd.RegisterFlagCompletionFunc("pools", completion.Pools(c.PoolClient))
	return cmd
}

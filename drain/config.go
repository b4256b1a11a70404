package drain

import (
	"context"
	"time"

	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
	"github.com/kubectl-maintenance/kubectl-maintenance/surge"
)

// Config configures an Engine. Client and Events are required; NewEngine fills the
// wiring's zero values with their defaults (the clock, the rate limiter, the ledger, ...).
// The settings come whole, validated by a front end (Settings.Validate); NewEngine
// asserts them and takes the zeros the settings define as "the default" from
// DefaultSettings (Settings.withZeroDefaults).
type Config struct {
	// Client talks to the API server. Configure it with DisableEvictionRetries so that
	// every refused eviction comes back to the engine.
	Client kubernetes.Interface
	// Events receives every event of the drain, in order. The engine never closes it.
	Events chan<- event.Event
	// Clock drives backoff, Retry-After and timeouts. Default: the real clock.
	Clock clock.WithTicker
	// RateLimiter bounds retries per pod (exponential) and overall (token bucket).
	RateLimiter workqueue.TypedRateLimiter[string]
	// Logger receives diagnostics (never user-facing progress).
	Logger klog.Logger
	// EventClient posts the node Events (RecordEvents). Give it a rate limiter of its own
	// (its own clientset) so that no Event waits in front of a cordon or an eviction: at
	// 100 nodes the Events of the cordons alone are 100 requests. Default: Client.
	EventClient kubernetes.Interface
	// ClientBurst is how many requests Client sends at once (its rate limiter's burst):
	// the cordons of a batch, independent patches, go that many at a time. Default 8.
	ClientBurst int
	// PaceMargin is how long a budget's disruptedPods entry may outlive its pod before
	// the disruption controller counts as behind. Default DefaultPaceMargin. Negative
	// turns the pace and the hold guard off (pods that keep their names neither go first
	// nor wait for the controller): only to measure what they prevent.
	PaceMargin time.Duration

	// Settings are the user's drain settings (settings.go): the rest of Config is wiring.
	Settings
	// Origin is the run recorded on every node the drain holds: its ID (NewEngine makes
	// one when empty), command line (or "maintenance/<name>") and user.
	Origin noderecord.Run

	// Only, when set, further restricts the pods evicted to those it accepts, after
	// kubectl's filters (a pool's NoExecute rollout evicts only the pods the taint would
	// remove).
	Only func(*corev1.Pod) bool
	// Rolling, when set, makes the drain a sliding window (drain --pool): no node is
	// cordoned up front; each is cordoned just before its drain starts, once a slot of
	// MaxParallelNodes is free and Rolling admits it, so a node that waits long on a
	// budget holds one slot, not the start of every later node.
	Rolling Admitter
	// Steps, when set, are the caller's own steps around each node's drain (a pool
	// move's record and relabel, a NoExecute rollout's taint). Only with Rolling.
	Steps NodeSteps
	// Workers is how many eviction requests may be in flight at once.
	Workers int
	// RecordEvents writes Kubernetes Events on each node (cordon, drain start, blocked,
	// drained).
	RecordEvents bool

	// ProbeInterval is how often a running drain checks that the API server answers
	// (GET /version). Default 10 s.
	ProbeInterval time.Duration
	// StaleAfter is how long a PDB's status may go on counting as disrupted a pod that is
	// gone before the budget's status is called stale. Default 30 s.
	StaleAfter time.Duration
	// Probe checks that the API server answers. Default: GET /version.
	Probe func(ctx context.Context) error

	// Diagnosis and wait lines (rules.go, diagnose.go).
	//
	// WaitInterval is how often a wait that has not changed is said again, with how
	// long it has lasted. Default 30 s.
	WaitInterval time.Duration
	// DiagnoseInterval is how often the pods of a budget that holds pods back are listed
	// again to tell why (one List per budget, from the watch cache). Default 10 s.
	DiagnoseInterval time.Duration
	// Surge, when set (--surge), moves a pod whose budget never allows a disruption by
	// surging its one-replica Deployment (surge.go).
	Surge Surger

	// AfterCordon, when set, is called once the run has cordoned its batch and before its
	// first eviction, with no lock held; the run waits for it to return, and it returns
	// at once when ctx is done. A Rolling run calls it first with a done context: it
	// cordons as it goes and waits for no one. The controller holds the runs of objects admitted together there until every
	// one has cordoned, so that the replacements of the first pods evicted do not land on
	// nodes another run is about to drain.
	AfterCordon func(ctx context.Context)
	// Ledger, when set, is the view of the budgets this engine's runs share with the
	// other engines of the process (ledger.go): give every engine of a controller or a
	// dashboard the same one, so that a pod whose budget another run's evictions have
	// taken the room of is not asked. Default: one of the engine's own.
	Ledger *Ledger

	// Permit, when set, is asked once the plan is made and before anything changes, with
	// what the run will change besides nodes and evictions; an error ends the run there,
	// nothing changed (the command checks the user's permissions for it).
	Permit func(ctx context.Context, p Permits) error
}

// Permits is what a run will change besides its nodes and its evictions.
type Permits struct {
	// SurgeNamespaces are the namespaces of the Deployments --surge will scale, sorted.
	SurgeNamespaces []string
}

// DefaultRateLimiter is exponential per pod (200 ms doubling up to 30 s) combined with an
// overall token bucket of 20 retries a second (burst 50), as client-go controllers do.
func DefaultRateLimiter() workqueue.TypedRateLimiter[string] {
	return workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](200*time.Millisecond, 30*time.Second),
		&workqueue.TypedBucketRateLimiter[string]{Limiter: rate.NewLimiter(rate.Limit(20), 50)},
	)
}

// Validate checks the configuration without calling the API: the settings
// (Settings.Validate, the one validation of each setting) and the wiring that goes
// together.
func (cfg Config) Validate() error {
	if err := cfg.wiringError(); err != nil {
		return err
	}
	return cfg.Settings.Validate()
}

// wiringError checks the wiring that goes together.
func (cfg Config) wiringError() error {
	if cfg.Steps != nil && cfg.Rolling == nil {
		return &UsageError{msg: "node steps need a rolling drain"}
	}
	return nil
}

// origin is the run recorded on the nodes (NewEngine gives it an ID).
func (cfg *Config) origin() *noderecord.Run {
	o := cfg.Origin
	return &o
}

// Admitter decides when the next node of a rolling drain may start (Config.Rolling): a
// NodePool's maxUnavailable, counting its members out of service.
type Admitter interface {
	// Room says why the admission's node may not start now ("" when it may), from a
	// fresh look at the pool.
	Room(ctx context.Context, a Admission) (wait string, err error)
	// Wait returns at the first change since the last Room's look that could make room
	// (a watch, never polling), or with ctx's error.
	Wait(ctx context.Context) error
	// Unavailable reports whether node was out of service at the last look (no API
	// call: the engine asks it under its lock). Such a node starts first: taking it makes
	// nothing less available, and while it waits it counts against the others.
	Unavailable(node string) bool
}

// Admission is what the engine knows when a node asks to start.
type Admission struct {
	Node string
	// Running are the run's nodes in progress (cordoned, not finished).
	Running []string
	// Done are the run's nodes drained or given up (--on-blocked=skip): they stay
	// cordoned but no longer count. A node of the run that failed still counts while it
	// is out of service.
	Done []string
}

// NodeSteps are a caller's own steps around each node of a rolling drain (Config.Steps):
// a pool move records the move before the cordon and relabels the node once it is
// drained; a NoExecute rollout taints it. The engine calls them outside its lock, at most
// once at a time per node.
type NodeSteps interface {
	// Before is called once the node is admitted, before its cordon. An error fails the
	// node (one from the API server that asking again may change is retried).
	Before(ctx context.Context, node string) error
	// After is called once the node is drained and its state recorded, before it counts
	// as finished and frees its slot (a moved node is uncordoned then, not at the end of
	// the run). The events it returns follow the node's node.drained. An error from the
	// API server that asking again may change is retried; any other fails the node, and
	// the run's error wraps the first such error.
	After(ctx context.Context, node string) ([]event.Event, error)
}

// Surger moves a pod whose budget never allows a disruption by surging its one-replica
// Deployment (--surge). *surge.Surger implements it; Config.Surge nil means no surge.
type Surger interface {
	// Starts reports whether new surges may be started (--surge); when false the drain
	// only finishes and restores the surges an earlier run left.
	Starts() bool
	// Check decides whether pod, under budget b that never allows a disruption, can be
	// surged; a *surge.RefusedError says why not. It changes nothing.
	Check(ctx context.Context, pod *corev1.Pod, b *policyv1.PodDisruptionBudget) (*surge.Target, error)
	// Start records the count and scales the Deployment to one more; it returns the count.
	Start(ctx context.Context, t *surge.Target, now time.Time) (int32, error)
	// WaitReady waits for a Ready pod of the Deployment on another node.
	WaitReady(ctx context.Context, t *surge.Target) (pod, node string, err error)
	// Restore brings the Deployment back to its recorded count and removes the record.
	Restore(ctx context.Context, namespace, name string) (surge.Restored, error)
	// Unwind restores a surge whose move did not finish, first evicting the Ready pods
	// the restore would make the ReplicaSet delete; it returns the pods it evicted.
	Unwind(ctx context.Context, namespace, name string) (surge.Restored, []string, error)
	// Pending lists the surges an earlier run left for pods of nodes.
	Pending(ctx context.Context, nodes []string) ([]*surge.Target, error)
	// PodAlive reports whether the pod a surge moves is still there, not terminating.
	PodAlive(ctx context.Context, t *surge.Target) (bool, error)
}

// blockedAfter is the blocked clock's limit: ForceAfter under force, else BlockedAfter.
func (c *Config) blockedAfter() time.Duration {
	if c.OnBlocked == OnBlockedForce {
		return c.ForceAfter
	}
	return c.BlockedAfter
}

package drain

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kubectl-maintenance/kubectl-maintenance/drainrule"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// DryRun is the --dry-run mode.
type DryRun string

// Dry-run modes, as kubectl names them.
const (
	DryRunNone   DryRun = "none"
	DryRunClient DryRun = "client"
	DryRunServer DryRun = "server"
)

// Defaults.
const (
	// DefaultMaxParallelNodes is how many nodes drain at once unless told otherwise.
	DefaultMaxParallelNodes = 5
	// DefaultWorkers is how many eviction requests may be in flight at once.
	DefaultWorkers = 16
	// DefaultChunkSize is kubectl drain's list page size.
	DefaultChunkSize = 500
	// DefaultProbeInterval is how often a drain checks that the API server answers.
	DefaultProbeInterval = 10 * time.Second
	// DefaultStaleAfter is how long a gone pod may stay in a PDB's disruptedPods before
	// the budget's status is called stale.
	DefaultStaleAfter = 30 * time.Second
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
	// the disruption controller counts as behind. Default DefaultPaceMargin.
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

// Engine drains nodes. Build it with NewEngine; one Engine runs one drain at a time.
type Engine struct {
	cfg Config
	out *outbox // the events of the Run in progress
	// rules are the drain rules of the plan or run in progress (order.go).
	rules atomic.Pointer[drainrule.Set]
	// hooks let unit tests wait on the engine's own steps instead of sleeping.
	hooks testHooks
}

// testHooks are called, when set, outside any lock.
type testHooks struct {
	// started receives the run once its goroutines are started.
	started func(r *run)
	// handled is called after a worker handled a queue key.
	handled func(key string)
	// pdbHandled is called after the PDB handler handled a budget's change.
	pdbHandled func(key, resourceVersion string)
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

// NewEngine checks the wiring, asserts the settings (validated by their front end:
// Settings.AssertValid), fills the wiring's defaults and returns an Engine.
func NewEngine(cfg Config) (*Engine, error) {
	if cfg.Client == nil || cfg.Events == nil {
		return nil, &ConfigError{msg: "a client and an events channel are required"}
	}
	if err := cfg.wiringError(); err != nil {
		return nil, err
	}
	if err := cfg.AssertValid(); err != nil {
		return nil, err
	}
	cfg.Settings = cfg.withZeroDefaults()
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.RateLimiter == nil {
		cfg.RateLimiter = DefaultRateLimiter()
	}
	if cfg.Ledger == nil {
		cfg.Ledger = NewLedger()
	}
	if cfg.Logger.GetSink() == nil {
		cfg.Logger = klog.Background()
	}
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultWorkers
	}
	if cfg.ProbeInterval <= 0 {
		cfg.ProbeInterval = DefaultProbeInterval
	}
	if cfg.StaleAfter <= 0 {
		cfg.StaleAfter = DefaultStaleAfter
	}
	if cfg.EventClient == nil {
		cfg.EventClient = cfg.Client
	}
	if cfg.Probe == nil {
		cfg.Probe = versionProbe(cfg.Client)
	}
	cfg.diagnoseDefaults()
	cfg.Origin = cfg.Origin.WithID()
	return &Engine{cfg: cfg}, nil
}

// ConfigError is an invalid configuration (a usage error).
type ConfigError = UsageError

// UsageError is input to fix: a setting, a node name, a request that cannot be carried out
// as given (nothing was changed). It is the one usage-error type of the engines and the
// operations layer (operation.UsageError and nodepool.UsageError are this type); the
// commands exit 2 for it.
type UsageError struct {
	msg string
	// Mistakes are the invalid settings, one each, when the error is Settings.Validate's
	// (a front end may say them in its own names: the CLI names its flags).
	Mistakes []Mistake
}

func (e *UsageError) Error() string { return e.msg }

// Usage marks a UsageError as the user's input to fix.
func (e *UsageError) Usage() bool { return true }

// Usagef builds a UsageError.
func Usagef(format string, args ...any) error { return &UsageError{msg: fmt.Sprintf(format, args...)} }

// NodeNotFoundError is a node name that does not exist (a usage error).
type NodeNotFoundError struct{ Name string }

func (e *NodeNotFoundError) Error() string { return fmt.Sprintf("node %q not found", e.Name) }

// Usage marks NodeNotFoundError as the user's input to fix.
func (e *NodeNotFoundError) Usage() bool { return true }

// PreflightError means some node can't be drained with the flags given (DaemonSet pods
// without --ignore-daemonsets, pods with local storage without --delete-emptydir-data,
// pods with no controller without --force). Nothing was changed.
type PreflightError struct{ Problems []string }

func (e *PreflightError) Error() string {
	return "nothing was changed: " + strings.Join(e.Problems, "; ")
}

// Blocked marks a PreflightError as blocked by policy.
func (e *PreflightError) Blocked() bool { return true }

// PodFailedError is an eviction the API server refused for good (RBAC, an admission
// webhook, an invalid request): waiting does not help.
type PodFailedError struct {
	Pod    string
	Reason string
}

func (e *PodFailedError) Error() string {
	return fmt.Sprintf("cannot evict pod %s: %s", e.Pod, e.Reason)
}

// TimeoutError is a drain that reached its timeout with pods still waiting.
type TimeoutError struct {
	Timeout  time.Duration
	Blockers []event.Blocker
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("drain timed out after %s; still waiting: %s", e.Timeout, describeBlockers(e.Blockers))
}

// Unwrap lets errors.Is(err, context.DeadlineExceeded) hold.
func (e *TimeoutError) Unwrap() error { return errDeadline }

// ErrPaused is the cause (context.WithCancelCause) with which a run's context is
// cancelled to pause it: the nodes it holds stay as they are (draining, its record and
// heartbeat), for the caller to keep holding (noderecord.RenewHeartbeat) until a run
// under the same identity resumes them. Any other end of the context lets them go
// (noderecord.StateFailed).
var ErrPaused = errors.New("paused")

// InterruptedError is a drain stopped by its context (Ctrl-C). The nodes keep their
// state annotations; running the same command again finishes the job.
type InterruptedError struct{ Blockers []event.Blocker }

func (e *InterruptedError) Error() string {
	if len(e.Blockers) == 0 {
		return "drain interrupted; run the same command again to finish"
	}
	return fmt.Sprintf("drain interrupted with pods still waiting (%s); run the same command again to finish", describeBlockers(e.Blockers))
}

// Unwrap lets errors.Is(err, context.Canceled) hold.
func (e *InterruptedError) Unwrap() error { return errCanceled }

func describeBlockers(bs []event.Blocker) string {
	if len(bs) == 0 {
		return "nothing"
	}
	var parts []string
	for i, b := range bs {
		if i == 5 {
			parts = append(parts, fmt.Sprintf("and %d more", len(bs)-5))
			break
		}
		parts = append(parts, fmt.Sprintf("pod %s on %s: %s", b.Pod, b.Node, b.Message))
	}
	return strings.Join(parts, "; ")
}

var (
	errDeadline = context.DeadlineExceeded
	errCanceled = context.Canceled
)

// IsUsage reports whether err is the user's input to fix.
func IsUsage(err error) bool {
	var u interface{ Usage() bool }
	return errors.As(err, &u) && u.Usage()
}

// origin is the run recorded on the nodes (NewEngine gives it an ID).
func (cfg *Config) origin() *noderecord.Run {
	o := cfg.Origin
	return &o
}

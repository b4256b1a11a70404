package drain

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
	"github.com/kubectl-maintenance/kubectl-maintenance/surge"
)

// The node-side parts' state: each part's struct and the narrow interface it asks of the
// run, below the files of their methods.

// fastStart is what the run remembers of its cordons. It has its own lock: cordons run
// concurrently, outside the run's.
type fastStart struct {
	mu         sync.Mutex
	cordonedAt map[string]time.Time
}

// nodeHolds keeps the node records this run holds: it takes a node (waiting for
// another run's hold to end), renews its heartbeat, writes its state and lets it go,
// and notices a node another run took over (leave.go). Its per-node state is in
// nodeState.pol, guarded by the core's lock.
// Its Locked methods are called with the lock held; they make no API call and send on no
// channel: effects go through core.later, events to the outbox (doc.go).
type nodeHolds struct {
	c   *core
	run holdRun
}

// holdRun is what nodeHolds needs of the run: its context and nodes, its deadline, and
// how a node starts, fails, is stopped, let go or gone.
type holdRun interface {
	context() context.Context
	nodeLocked(name string) *nodeState
	nodesLocked() map[string]*nodeState
	deadline() (<-chan time.Time, func())
	mayStartLocked() (reason, msg string)
	notStartedLocked(nodes []event.NodePlan, reason, msg string)
	failNodeLocked(ns *nodeState, msg string)
	stoppedLocked(b event.Blocker)
	endFailedLocked(ns *nodeState, msg, reason string)
	nodeGone(name string)
	justCordoned(node string, now time.Time) bool
}

// pacing applies the pacer (pace.go) to the run: the pace of each eviction, what an
// accepted eviction, a pod gone and a budget's status teach it, and the pace said when
// it changes. Guarded by the core's lock.
// Its Locked methods are called with the lock held; they make no API call and send on no
// channel: effects go through core.later, events to the outbox (doc.go).
type pacing struct {
	c   *core
	run paceRun
	*pacer
}

// paceRun is what pacing needs of the run: a pod asked for again, and a budget as last
// seen.
type paceRun interface {
	add(key string)
	budgetLocked(key string) *pdb.Budget
}

// preflight is what event.Plan learns before anything is touched.
type preflight struct {
	plan  *event.Plan
	nodes map[string]*corev1.Node
	// pods to evict, per node, as kubectl's filters chose them.
	pods map[string][]*corev1.Pod
	// daemonSets answers kubectl's filters from one list, for the plan and the run.
	daemonSets *daemonSets
	// permits is what the run will change besides nodes and evictions (see Permit).
	permits Permits
	// listed are the pods of the plan's nodes from its one list of every pod, at
	// resourceVersion listedRV, and under "" every other pod, trimmed (nil when the plan
	// listed node by node).
	listed   map[string][]any
	listedRV string
}

// sharedPods is the run's informer over every pod, started by the first node's drain.
type sharedPods struct {
	once sync.Once
	inf  cache.SharedIndexInformer
	err  error
	// synced is the informer's indexer once its first list is in (for readers that do not
	// start it: the diagnosis), nil before.
	synced atomic.Pointer[cache.Indexer]
}

// nodeView is the shared informer's store seen from one node: List holds the node's pods
// only, and GetByKey finds a pod only while it is bound to that node.
type nodeView struct {
	cache.Indexer
	node string
}

// podsFrom is a clientset whose pod list answers, without a request, with the given pods
// (the ones of the node kubectl's helper asks for), filtered by the label selector. It
// lets kubectl's own filters run over pods the engine already holds.
type podsFrom struct {
	kubernetes.Interface
	pods []any
}

type podsFromCore struct {
	corev1client.CoreV1Interface
	pods []any
}

type podsFromPods struct {
	corev1client.PodInterface
	pods []any
}

// recorder records Kubernetes Events (events.k8s.io/v1) on nodes through client-go's
// events broadcaster and recorder, for one run. The recorder builds each Event (name,
// reporting controller and instance, the node as "regarding"); the broadcaster delivers
// it to one watcher that writes it to the API server. client-go's own sink
// (StartRecordingToSink) writes from a goroutine per event and retries for minutes, which
// could be neither waited for nor flushed before Run returns, so the watcher writes here,
// one event at a time, and stop waits until every event posted is written.
//
// Recording is best effort: a failure never fails the drain. A user who may not create
// Events gets one warning (warn), and nothing more is tried.
type recorder struct {
	b    events.EventBroadcaster
	rec  events.EventRecorder
	sink events.EventSink
	log  klog.Logger
	warn func(message string)

	ctx    context.Context // the writes'; cancelled by stop
	cancel context.CancelFunc

	mu      sync.Mutex
	seen    map[string]bool // events already posted this run (no repeats)
	posted  int             // events handed to the broadcaster
	handled int             // events the watcher is done with
	denied  bool            // creating Events is forbidden: skip the rest
	closing bool
	idle    chan struct{} // closed when closing and handled == posted
	active  sync.WaitGroup
}

// roller drives a rolling drain (Config.Rolling): the admission of each node, the soak
// after it, the next node and when no node may start. Its Locked methods are called
// with the core's lock held; they make no API call and send on no channel: effects go
// through core.later, events to the outbox (doc.go).
type roller struct {
	c   *core
	run rollHost
	// nodes are the plan's nodes, in its order; known the nodes as the plan read them.
	// Both are the plan's, read only.
	nodes []event.NodePlan
	known map[string]*corev1.Node
}

// rollHost is what the roller needs of the run: its nodes, the budgets as last seen and
// the pods parked on them, whether a node may still start and what is done when one will
// not, fails or starts, and the run's --not-after timer.
type rollHost interface {
	nodeLocked(name string) *nodeState
	nodesLocked() map[string]*nodeState
	budgetLocked(key string) *pdb.Budget
	parkedOnLocked(key string) int
	mayStartLocked() (reason, msg string)
	notStartedLocked(nodes []event.NodePlan, reason, msg string)
	failNodeLocked(ns *nodeState, msg string)
	rollingLocked(w *rolling)
	deadline() (<-chan time.Time, func())
	startNode(ctx context.Context, name string) bool
	drainNode(ctx context.Context, ns *nodeState)
}

// rolling is the state drainRolling shares with admit: a slot freed and the run halted
// (--not-after passed, --on-blocked=fail stopped it) wake a wait for room.
type rolling struct {
	freed    chan struct{} // a node of the run finished (buffered 1, never blocks)
	halt     chan struct{} // closed once no node may start
	haltOnce sync.Once
}

type rule int

// ruleSink collects, during a plan, the pods Karpenter's annotation protects and the pods
// drain rules keep (skip, wait-completed).
type ruleSink struct {
	doNotDisrupt []*corev1.Pod
	kept         []*corev1.Pod
}

// nodeSteps runs the caller's own steps around each node (Config.Steps) and keeps the
// first step's error for the run's result. Its field is guarded by the core's lock.
// Its Locked methods are called with the lock held; they make no API call and send on no
// channel: effects go through core.later, events to the outbox (doc.go).
type nodeSteps struct {
	c        *core
	run      stepsRun
	firstErr error // the first error of a caller's node step
}

// stepsRun is what nodeSteps needs of the run: its nodes, failing one, and how many
// failed of how many planned.
type stepsRun interface {
	nodeLocked(name string) *nodeState
	failNodeLocked(ns *nodeState, msg string)
	failedOfLocked() (failed, planned int)
}

// surger runs --surge: a replacement started before a pod is evicted, and the
// workload restored once it is done, including those an earlier run left. Its field is
// guarded by run.mu.
// Its Locked methods are called with run.mu held; they make no API call and send on no
// channel: effects go through run.later, events to the outbox (doc.go).
type surger struct {
	c     *core
	run   surgeRun
	byUID map[string]*surgeState // by the moved pod's UID
}

// surgeRun is what surger needs of the run: its context and nodes, a pod asked for
// again, and parking a pod on a budget.
type surgeRun interface {
	context() context.Context
	plannedNodes() []string
	add(key string)
	parkLocked(st *podState, budgets []*pdb.Budget, reason, message string)
}

// surgeState is a surge of this run, by the UID of the pod it moves. Guarded by run.mu.
type surgeState struct {
	target    *surge.Target // set once checked (or resumed)
	refused   bool          // Check or Start failed: the pod waits like any never-allowed one
	ready     bool          // the new pod is Ready elsewhere
	restoring bool
}

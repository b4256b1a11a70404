package drain

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain/diagnose"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

// The budgets part's state (budgets_part.go is its face): the types of its four concerns
// and the two reads every one of them makes (a budget by key, a pod's turn). They sit
// below every file that uses them, so that a file of the part calls only what is under
// it (doc.go, "Files and layers").

// blockedClock runs --blocked-after: each node's clock of no progress, restarted by a
// move, a budget found not current or an outage, and what is done when it runs out. Its
// state is in run.pol and nodeState.pol, guarded by run.mu.
// Its Locked methods are called with run.mu held; they make no API call and send on no
// channel: effects go through run.later, events to the outbox (doc.go).
type blockedClock struct {
	b *budgets // the budgets part it belongs to (budgets_part.go)
}

// budgetBook is the run's bookkeeping of the PodDisruptionBudgets: the namespaces'
// indexes of them, the pods parked on each and the allowances reserved on each. Its
// fields are guarded by run.mu.
// Its Locked methods are called with run.mu held; they make no API call and send on no
// channel: effects go through run.later, events to the outbox (doc.go).
type budgetBook struct {
	b        *budgets                        // the budgets part it belongs to (budgets_part.go)
	pdbs     cache.Indexer                   // the PDB informer's store
	parked   map[string]map[string]*podState // pdb key -> pods waiting on it
	reserved map[string]map[string]bool      // pdb key -> pods whose accepted eviction its status does not show yet
	index    map[string]*pdb.Index           // namespace -> its budgets, rebuilt on a change
	// ledger is the process's view of the budgets, shared with its other runs (ledger.go):
	// reserved above are this run's part of it; sub is the run's subscription to it.
	ledger *Ledger
	sub    int
}

func before(a, b *podState) bool {
	if a.wave != b.wave {
		return a.wave < b.wave
	}
	return a.key < b.key
}

func (bk *budgetBook) indexLocked(ns string) *pdb.Index {
	ix := bk.index[ns]
	if ix == nil {
		objs, _ := bk.pdbs.ByIndex(cache.NamespaceIndex, ns)
		pdbs := make([]*policyv1.PodDisruptionBudget, 0, len(objs))
		for _, o := range objs {
			pdbs = append(pdbs, o.(*policyv1.PodDisruptionBudget))
		}
		ix = pdb.NewIndex(pdbs)
		bk.index[ns] = ix
	}
	return ix
}

func (bk *budgetBook) budgetLocked(key string) *pdb.Budget {
	ns, _, _ := cache.SplitMetaNamespaceKey(key)
	return bk.indexLocked(ns).Get(key)
}

// budgets is the run's one budgets part: the book of reservations and parked pods
// (budgets.go), the watch of whether a status is current (watchdog.go), the blocked
// clocks of --blocked-after (blockedclock.go) and the diagnosis of the waits
// (diagnose.go, waitmsg.go). Its parts call each other through it, never through the
// run; what they need of the node side they ask the host, a narrow interface the run
// implements. Its state is guarded by the core's lock (doc.go).
//
// The run asks it through its face only (budgets_part.go): a budget's change in order
// changedLocked, statusSeenLocked, takenInLocked (called by the run's pdbChanged,
// face.go), and for a pod its budgets, room, reservation, park, release and wait line.
// The run never reaches the book, the watch, the diagnosis or the clocks directly.
type budgets struct {
	*core
	host budgetsHost

	book    budgetBook   // reservations and the pods parked on each budget (budgets.go)
	watch   budgetWatch  // whether a budget's status is current (watchdog.go)
	diag    waitDiag     // causes of the waits, wait lines, drain rules (diagnose.go, rules.go)
	blocked blockedClock // --blocked-after's clocks (blockedclock.go)
}

// budgetsHost is what the budgets part needs of the run: the node side's pods and
// nodes, its queue and policy state. Each method is called with the lock held, unless
// its doc says otherwise.
type budgetsHost interface {
	// context is the run's context (nil before it runs); any goroutine.
	context() context.Context
	// podsLocked and nodesLocked are the run's pods and nodes by key and name; the
	// caller does not change the maps.
	podsLocked() map[string]*podState
	nodesLocked() map[string]*nodeState
	// policyLocked is the run's policy state (blocked.go): apiDown, notCurrent, endless.
	policyLocked() *runPolicy
	// currentLocked is st's pod as its node's informer has it now.
	currentLocked(st *podState) (*corev1.Pod, bool)
	// addAfter queues a pod for a worker after d, once the lock is released;
	// backoffLocked after its rate limiter's backoff.
	addAfter(key string, d time.Duration)
	backoffLocked(key string)
	// movedLocked restarts the node's blocked clock; giveUpLocked skips or forces a
	// blocked node (force.go); stopOnNeverLocked stops the run on a wait that cannot end
	// (--on-blocked=fail).
	movedLocked(node string)
	giveUpLocked(ns *nodeState)
	stopOnNeverLocked(st *podState, reason, message string)
	// recordEvent records a node Event; outside the lock (an effect).
	recordEvent(node, eventType, reason, message string)
	// budgetPods lists the pods a budget selects; outside the lock.
	budgetPods(ctx context.Context, namespace string, sel labels.Selector) ([]*corev1.Pod, error)
	// podIndexer is the shared pod informer's store (nil: none).
	podIndexer() cache.Indexer
	// deadline fires at --not-after (nil: none); stop releases its timer.
	deadline() (<-chan time.Time, func())
	// waitCompletedWhy and doNotDisruptWhy say why a drain rule holds a pod (rules.go).
	waitCompletedWhy(p *corev1.Pod, node string) (cause, remedy string)
	doNotDisruptWhy(p *corev1.Pod) (cause, remedy string)
}

// waitDiag says why pods wait: the diagnosis of a budget's wait, the wait lines, the
// pods held by drain rules and those stuck terminating. Its fields are guarded by
// run.mu.
// Its Locked methods are called with run.mu held; they make no API call and send on no
// channel: effects go through run.later, events to the outbox (doc.go).
type waitDiag struct {
	b *budgets // the budgets part it belongs to (budgets_part.go)
	diagState
}

// diagState is what a run knows to explain its waits. Guarded by run.mu.
type diagState struct {
	selected map[string]*selection // pdb key -> the pods it selects, as last listed
	holds    map[string]time.Time  // "pdb key/pod name" -> the end of a hold already said (holds.go)
	tracker  diagnose.Tracker      // since when each budget's status disagrees with its pods
	waits    map[string]*waitLine  // pod key -> its current wait
	held     map[string]*heldPod   // pod key -> held on its node by a drain rule
	stuck    map[string]*waitLine  // pod key -> evicted, still terminating, said
	// nodes is each node's readiness as a List last read it (diagnose.go): read again
	// after DiagnoseInterval. Only the wait lines' goroutine (waitLines) touches it.
	nodes map[string]nodeSeen
	// clearRefused: the server refused to let the run remove a hold's entry
	// (holdclear.go); it waits holds out from then on.
	clearRefused bool
}

// nodeSeen is a node's readiness as a List of a budget's pods last read it: the pods
// stuck terminating on one node are many, and each budget's List would otherwise read
// their node again (2,600 reads of nodes in a 100-node drain of the fleet bench).
type nodeSeen struct {
	ready bool
	at    time.Time
}

type selection struct {
	pods     []*corev1.Pod   // as last listed (never nil once listed)
	notReady map[string]bool // nodes found NotReady
	at       time.Time       // of the last List (zero: never listed)
	listing  bool
	// due: the blocked clock asks for a List before it gives a node up (blockedclock.go);
	// failed is when the last List failed (the clock does not wait for a List it cannot get).
	due    bool
	failed time.Time
}

type waitLine struct {
	since, said time.Time
	ev          event.Event // as last said
	sig         string      // the diagnosis last said (see signature)
}

// budgetWatch tells whether a budget's status is current: when this run last saw each
// budget change, the pods gone and when, and the budgets found stale. Its fields are
// guarded by run.mu.
// Its Locked methods are called with run.mu held; they make no API call and send on no
// channel: effects go through run.later, events to the outbox (doc.go).
type budgetWatch struct {
	b       *budgets             // the budgets part it belongs to (budgets_part.go)
	stale   map[string]staleMark // pdb key -> why its status is stale
	movedAt map[string]time.Time // pdb key -> when this run last saw it change
	goneAt  map[string]time.Time // pod key -> when it left, for staleness
}

// staleMark is why a budget's status was called stale.
type staleMark struct {
	why      string // as said, and as its pods' block
	rv       string // the budget's resourceVersion then: only a newer one can clear it
	fromPods bool   // called so from its disagreement with its pods (a fresh list that agrees clears it)
}

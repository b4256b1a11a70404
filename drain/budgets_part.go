package drain

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
)

// budgets is the run's one budgets part: the book of reservations and parked pods
// (budgets.go), the watch of whether a status is current (watchdog.go), the blocked
// clocks of --blocked-after (blockedclock.go) and the diagnosis of the waits
// (diagnose.go, waitmsg.go). Its parts call each other through it, never through the
// run; what they need of the node side they ask the host, a narrow interface the run
// implements. Its state is guarded by the core's lock (doc.go).
//
// A budget's change reaches it through its face to the run, in order: changedLocked,
// statusSeenLocked, takenInLocked (budgets.go, called by the run's pdbChanged). The run
// still reaches the parts' own methods elsewhere (queue.go, force.go, track.go, ...);
// those calls are to move behind this face.
type budgets struct {
	*core
	host budgetsHost

	book    budgetBook   // reservations and the pods parked on each budget (budgets.go)
	watch   budgetWatch  // whether a budget's status is current (watchdog.go)
	diag    waitDiag     // causes of the waits, wait lines, drain rules (diagnose.go, rules.go)
	blocked blockedClock // --blocked-after's clocks (blockedclock.go)
}

// newBudgets is the budgets part of a run sharing c, on the process's ledger l (nil:
// one of its own).
func newBudgets(c *core, host budgetsHost, l *Ledger) *budgets {
	bs := &budgets{core: c, host: host, book: newBudgetBook(l), watch: newBudgetWatch()}
	bs.book.b, bs.watch.b, bs.diag.b, bs.blocked.b = bs, bs, bs, bs
	return bs
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

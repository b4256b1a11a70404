// Package drain is the PDB-aware drain engine: it cordons a batch of nodes (the resume
// record written in the same patch as the cordon), then evicts their pods only through
// the policy/v1 Eviction API (with a UID precondition) from at most MaxParallelNodes
// nodes at a time, acting on each node's live pods (a per-node informer and kubectl's own
// filters), classifies every answer as v1.36's eviction handler gives it, and waits on the
// blocking PodDisruptionBudget's status through a watch instead of a timer.
//
// Concurrency: the run's state is guarded by one lock. Code that holds it decides and
// records; API calls and workqueue adds are queued as effects that run once the lock is
// released, and events go to an ordered outbox whose own goroutine delivers them. Run
// returns only after every goroutine it started has ended and every event is delivered.
// Every method whose name ends in Locked is called with the lock held; it makes no API
// call and sends on no channel: its effects go through run.later, its events to the
// outbox. The run coordinates; its concerns keep their own state, guarded by the same
// lock, and their methods under this contract: the budgets' bookkeeping (budgetBook,
// budgets.go), whether a budget's status is current (budgetWatch, watchdog.go), why pods
// wait (waitDiag, diagnose.go), the node records held (nodeHolds, hold.go), the pace
// (pacing, pace_run.go), --blocked-after (blockedClock), a rolling drain (roller) and
// --surge (surger).
//
// Budgets: an eviction reserves one of its budget's allowances from its request until
// there is evidence (the request failed, the status lists the pod in disruptedPods or is
// the first seen after the answer, or the pod is gone); a status change wakes only as
// many waiting pods as the budget has room for. The engines of one process share a
// Ledger (ledger.go; Config.Ledger): the room a run sees is the allowance less every
// run's reservations, none while another run has seen a newer status or at a status the
// server refused at; its lock is taken after a run's and nothing is called under it, and
// a run that gives an allowance back tells the others once its own lock is released.
//
// Drain order (order.go): a node's pods to evict are queued by order group (package
// drainrule: the pod's cluster.x-k8s.io/drain label, the run's rules, Cluster API's
// MachineDrainRules), each group once every pod of the groups before it is gone; critical
// pods after the ordinary ones. Pods a rule keeps (skip, wait-completed) and pods
// karpenter.sh/do-not-disrupt protects (for ever, or for a duration from their start) are
// never evicted (rules.go, donotdisrupt.go).
//
// When a node is drained (quiet.go): once its last pod is gone, not before Settle since
// its cordon and a last look at its pods from the API server (a pod bound late is
// evicted), and, with WaitForVolumeDetach, once no VolumeAttachment of the node refers to
// a volume of a pod the run removed. Pods already deleting are waited for, never evicted
// (track.go); under force, a node's blocked pods go at the deadline whatever their tier,
// with a grace of at least 1 s (force.go).
//
// Files and layers: the package's files form a layering with no file using one above it
// (hack/filedeps counts the references that point up; it finds none). At the bottom are
// the settings, errors and leaf helpers (settings.go, errors.go, ledger.go, outbox.go,
// core.go), then the state types (podstate.go, nodestate.go, budgetstate.go, parts.go,
// runstate.go); above them the plan (plan.go, order.go, rules.go, deadnode.go) and the
// budgets part (budgets.go, watchdog.go, diagnose.go, waitmsg.go, blockedclock.go, with
// its face budgets_part.go); then a pod's handling (track.go, force.go, queue.go), a
// node's (look.go, quiet.go, blocked.go, podwatch.go, lifecycle.go) and the run's entry
// (run.go, face.go). A function that would call up moves down to the layer of what it
// calls, or up to its callers'.
//
// It never prints and never imports a UI package; progress is a typed event stream.
package drain

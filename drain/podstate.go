package drain

import (
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

// A pod of the run: its state from the plan to its end, and the small types that name a
// pod's wait (its order group, a held pod, a planned force). Below every file that
// handles pods.

// pendingPod is what nodeBlocked needs to know of a pod not gone yet.
type pendingPod struct {
	terminating bool // evicted, not gone yet
	parked      bool // waits on a budget
	heldBack    bool // held back until the pods of earlier order groups are gone
}

// plannedState is the run's state of dead nodes, gone nodes and forced pods (deadnode.go,
// this file). Guarded by run.mu.
type plannedState struct {
	// dead names the dead nodes of the plan (Ready Unknown or False), with why.
	dead map[string]string
	// never is Policy.NeverForce as a set.
	never map[string]bool
	// forcing are the pods whose DELETE is decided or in flight; forced those deleted.
	forcing map[string]bool
	forced  map[string]bool
}

// group is a pod's place in its node's eviction order.
type group struct {
	critical bool
	order    int32
}

func (g group) less(o group) bool {
	if g.critical != o.critical {
		return !g.critical
	}
	return g.order < o.order
}

// String names the group in wait messages: "order group -5".
func (g group) String() string {
	s := "order group " + strconv.Itoa(int(g.order))
	if g.critical {
		s = "critical pods of " + s
	}
	return s
}

type podPhase int

const (
	// waiting: to be evicted (queued, or parked on a budget).
	waiting podPhase = iota
	// terminating: the eviction was accepted; waiting for the pod to be gone.
	terminating
	// finished: gone from the node.
	finished
)

// podState is one pod the drain must evict. Guarded by run.mu.
type podState struct {
	pod  *corev1.Pod // as first seen; its UID is the one to evict
	key  string      // namespace/name
	node string
	wave int

	phase    podPhase
	attempts int
	// notBefore is the earliest time of the next request (backoff, Retry-After).
	notBefore time.Time
	// parkedOn are the budgets the pod waits on (nil: not parked).
	parkedOn []string
	// reservedOn is the budget whose allowance the pod's eviction holds.
	reservedOn string
	block      blockKey // budgets and class of the last wait emitted
	blockMsg   string   // its message
	blockPDB   string   // budgets of the last 500 (several budgets)
	acceptedAt time.Time
	stuckSaid  bool
	// reforced: deleted again with a shorter grace under --on-blocked=force (track.go).
	reforced bool
	// wokenAt is when a budget change woke the pod (zero otherwise).
	wokenAt time.Time
	// Drain order (planned maintenance).
	//
	// group is the pod's order group on its node (order.go); waitsFor the group it was
	// last said to wait for (waitsForSaid), while held back.
	group        group
	waitsFor     group
	waitsForSaid bool
}

// eviction is a request decided under the lock, sent outside it.
type eviction struct {
	st       *podState
	pod      *corev1.Pod
	attempt  int
	budgets  []*pdb.Budget
	rvBefore map[string]string
	budget   string    // the budget whose allowance it takes ("" for none)
	sentAt   time.Time // when the request was sent
}

// attachment is one VolumeAttachment that holds a node.
type attachment struct{ pv, name string }

// heldPod is a pod a rule keeps on a node the run waits for. Guarded by run.mu.
type heldPod struct {
	node, key, reason string
	since, said       time.Time
	pod               *corev1.Pod
	// woken: a do-not-disrupt duration's end is awaited (wakeAt).
	woken bool
}

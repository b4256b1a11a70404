package drain

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
)

// A node of the run and its policy state: the types every node-side file reads, below
// all of them.

// runPolicy is the run's policy state. Guarded by run.mu.
type runPolicy struct {
	skipped    []BlockedNode
	notStarted []string
	stopped    []event.Blocker   // --on-blocked=fail: what stopped the run
	numbers    map[string]string // pdb key -> its status numbers last seen
	// apiDown: the watchdog's last probe of the API server failed (an outage: it does
	// not count toward --blocked-after).
	apiDown bool
	// notCurrent: budgets whose status was last found not current (blockedclock.go).
	notCurrent map[string]bool
	// endless: budgets said to be waited on with no --timeout (endless.go).
	endless map[string]bool
}

// nodePolicy is a node's policy state. Guarded by run.mu.
type nodePolicy struct {
	// movedAt is the last time the node's drain made progress: it started, one of its
	// pods was evicted or left, or a budget one of its pods waits on changed its numbers.
	movedAt time.Time
	// cordonedHere: this run cordoned the node (it was schedulable).
	cordonedHere bool
	// held: the node's record names this run, with its heartbeat (hold.go).
	held bool
	// beatAt is when this run last wrote the node's heartbeat (with its cordon, or renewed).
	beatAt time.Time
	// heldBy is the other run last said to hold the node (said once per holder), and
	// heldMsg what was said: a run that ends while it waits names the holder.
	heldBy     string
	heldMsg    string
	skipping   bool
	skipped    bool
	notStarted bool
}

// nodeState is one node of the run. Guarded by run.mu.
type nodeState struct {
	name string
	plan event.NodePlan

	store     cache.Store // the node's live pods, once its drain started
	started   bool        // its pods are registered
	remaining int         // registered pods not gone yet
	heldBack  []*podState // held back until the pods of earlier order groups are gone (order.go)
	byUID     map[types.UID]*podState
	// ignored are live pods kubectl's filters keep (DaemonSet, mirror pods, ...).
	ignored map[types.UID]bool
	// returned are replacements that came back to the node (said once, not evicted).
	returned map[types.UID]bool
	// tolerating maps the controller UID of each evicted pod that tolerates the cordon
	// to the toleration, to recognise its replacement coming back.
	tolerating map[types.UID]string

	looking, lookAgain, finishing bool
	// failing: its failed state is being written (failNodeLocked).
	failing bool
	// cordoning: a rolling drain admitted the node; it counts as in progress from then on.
	cordoning bool
	// soaking: drained, its slot held for Policy.Soak (rolling.go soak).
	soaking          bool
	finished, failed bool
	finishedCh       chan struct{}
	pol              nodePolicy
	// Drain order (planned maintenance).
	//
	// expired are pods whose do-not-disrupt duration ended while they were left out:
	// looked at again once (donotdisrupt.go expiredLocked).
	expired map[types.UID]bool
	// When it is drained (quiet.go): startedAt is when its drain started (after its
	// cordon); quieting while the settle and the volume wait run; quiet once they ended
	// with nothing left, taken by the finish that follows.
	startedAt       time.Time
	quieting, quiet bool
}

// cordonToleration describes p's toleration of node.kubernetes.io/unschedulable:NoSchedule
// ("" when it has none): such a pod's replacement may be scheduled back onto the node.
func cordonToleration(p *corev1.Pod) string {
	taint := corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}
	for _, t := range p.Spec.Tolerations {
		if corev1helpers.TolerationsTolerateTaint(klog.Background(), []corev1.Toleration{t}, &taint, false) {
			if t.Key == "" {
				return "tolerates every taint (operator Exists, no key)"
			}
			return fmt.Sprintf("toleration %s %s", t.Key, t.Operator)
		}
	}
	return ""
}

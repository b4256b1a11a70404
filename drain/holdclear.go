package drain

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

// The opt-in remedy for a hold (Settings.ClearHolds, --clear-disruption-holds, a
// Maintenance's spec.drain.clearDisruptionHolds): when the run sees a hold on a budget
// (holds.go), it removes the hold's entry from the budget's status.disruptedPods, so the
// disruption controller counts the replacement by its readiness at its next sync (which
// the status write itself queues) instead of two minutes later.
//
// Why it is safe: the entry (name, t) is for a pod the API server accepted an eviction of
// at t; the pod that now has that name was created in a later second and is not
// deleting, and a name belongs to one pod at a time, so the pod the entry was for is
// gone: the entry only says that a pod which is no longer there was disrupted, and the
// controller, matching by name, applies it to the replacement. The update carries the
// budget's resourceVersion as read, so an eviction that writes a new entry meanwhile (of
// the replacement itself) makes it fail with a conflict: the run reads both again and
// decides again. The pod is read after the budget, so an entry written for the
// replacement before that read is seen as one (its time is not before the pod's
// creation) and kept.
//
// Two margins cover what the run cannot see: the entry must be clearAfterEntry old and
// the replacement clearAfterReplaced. The controller decides from its own informer
// cache: should that cache still show the evicted pod (Ready, not deleting) when the
// entry goes, it would count that pod as healthy and allow one disruption too many; the
// replacement's age is the time the cache has had to see the pod go and the new one
// come. And an eviction accepted but not yet carried out (its handler stalled between
// the status write and the delete, which is by name) could delete the replacement after
// the entry went; the entry's age bounds that stall. A hold lasts two minutes from the
// entry, so the remedy still saves most of it. When it is not safe: API servers whose
// clocks disagree by more than a second (the entry's time is the writing server's, the
// pod's creation another's), a kube-controller-manager whose informers lag by more than
// the margins, or another writer that reuses the status map for its own ends.

const (
	// ReasonHoldCleared says the run removed a hold's entry (Settings.ClearHolds).
	ReasonHoldCleared = "DisruptionControllerHoldCleared"
	// ReasonHoldNotCleared says the run could not remove it (the server refused the
	// status update, say for want of update on poddisruptionbudgets/status); said once a
	// run, after which the run waits holds out.
	ReasonHoldNotCleared = "DisruptionControllerHoldNotCleared"
)

const (
	// clearAfterEntry is how old a hold's entry must be before it is removed, and
	// clearAfterReplaced how old the replacement (see above).
	clearAfterEntry    = 30 * time.Second
	clearAfterReplaced = 10 * time.Second
	// clearTries is how many times a clear is tried at once when its update conflicts;
	// clearRetry how soon it is tried again after a failure, until the hold ends.
	clearTries = 3
	clearRetry = 5 * time.Second
	// clearTimeout bounds one try (its reads and its update).
	clearTimeout = 10 * time.Second
)

// errStatusWrite marks the failure of the status update itself (not of its reads): only
// its refusal says the run may not write budgets' status.
var errStatusWrite = errors.New("update the status")

// clearHoldLocked starts, when the settings ask for it, the removal of h's entry from the
// status of the budget of key: on a goroutine of its own (the caller lists budgets' pods
// for the wait lines), once the margins have passed, tried again after a failure until
// the hold ends or the run does.
func (bs *budgets) clearHoldLocked(key string, h pdb.Hold) {
	if !bs.cfg.ClearHolds || bs.cfg.DryRun != DryRunNone || bs.diag.clearRefused {
		return
	}
	ctx := bs.host.context()
	if ctx == nil {
		return
	}
	bs.goroutine(func() { bs.clearHold(ctx, key, h) })
}

// clearHold removes h's entry from the status of the budget of key, if it is still a
// hold, and says what it did. Called without the lock.
func (bs *budgets) clearHold(ctx context.Context, key string, h pdb.Hold) {
	ns, name, _ := strings.Cut(key, "/")
	wait := clearAfterEntry - bs.now().Sub(h.Since)
	for {
		if wait > 0 {
			select {
			case <-ctx.Done():
				return
			case <-bs.cfg.Clock.After(wait):
			}
		}
		var (
			at, created time.Time
			cleared     bool
			err         error
		)
		for range clearTries {
			cctx, cancel := context.WithTimeout(ctx, clearTimeout)
			at, created, cleared, err = clearStaleEntry(cctx, bs.cfg.Client, ns, name, h.Pod, bs.now())
			cancel()
			if !apierrors.IsConflict(err) {
				break
			}
		}
		now := bs.now()
		switch {
		case err == nil && cleared:
			bs.saidCleared(key, h.Pod, at)
			return
		case err == nil && !created.IsZero():
			// A hold, too young to remove yet.
			wait = max(clearAfterEntry-now.Sub(at), clearAfterReplaced-now.Sub(created), time.Millisecond)
			continue
		case err == nil:
			return // no hold any more: the controller dropped the entry, or the name moved on
		case errors.Is(err, errStatusWrite) && (apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err)):
			bs.saidRefused(key, h.Pod, err)
			return
		}
		bs.cfg.Logger.V(1).Info("could not remove a hold's entry; trying again", "pdb", key, "pod", h.Pod, "err", err)
		if !now.Add(clearRetry).Before(h.Until) {
			return // the controller drops it first
		}
		wait = clearRetry
	}
}

// saidCleared says once that the run removed pod's entry from the budget of key.
func (bs *budgets) saidCleared(key, pod string, at time.Time) {
	ns, _, _ := strings.Cut(key, "/")
	bs.lock()
	defer bs.unlock()
	bs.emit(event.Event{Type: event.EventWarning, Pod: ns + "/" + pod, PDB: key, Reason: ReasonHoldCleared,
		Message: fmt.Sprintf("pdb %s: removed the disruptedPods entry of %s (written %s, before the pod now named so was created): the disruption controller counts that pod by its readiness again (--clear-disruption-holds)",
			key, pod, at.UTC().Format("15:04:05Z"))})
}

// saidRefused says, once a run, that the server refused the run's status update; the run
// waits holds out from then on.
func (bs *budgets) saidRefused(key, pod string, err error) {
	ns, _, _ := strings.Cut(key, "/")
	bs.lock()
	defer bs.unlock()
	if bs.diag.clearRefused {
		return
	}
	bs.diag.clearRefused = true
	bs.emit(event.Event{Type: event.EventWarning, Pod: ns + "/" + pod, PDB: key, Reason: ReasonHoldNotCleared,
		Message: "pdb " + key + ": could not remove the disruptedPods entry of " + pod + " that holds it (--clear-disruption-holds): " + err.Error() + "; the drain waits the holds out (update on poddisruptionbudgets/status is needed)"})
}

// clearStaleEntry removes pod's entry from the status.disruptedPods of the budget
// namespace/budget when the pod that now carries the name replaced the one the entry was
// written for (pdb.Replaced), the entry is clearAfterEntry old and the pod
// clearAfterReplaced at now: a status update guarded by the resourceVersion of the budget
// as read, so a conflict means someone wrote the budget meanwhile and the caller may try
// again. It returns the entry's time, the replacement's creation (zero when the name
// carries no replacement) and whether it removed the entry; no entry, no pod by that
// name (the controller drops that entry itself), an entry the pod does not succeed, or
// one too young, is left, with no error.
func clearStaleEntry(ctx context.Context, c kubernetes.Interface, namespace, budget, pod string, now time.Time) (at, created time.Time, cleared bool, err error) {
	b, err := c.PolicyV1().PodDisruptionBudgets(namespace).Get(ctx, budget, metav1.GetOptions{})
	if err != nil {
		return at, created, false, fmt.Errorf("read pdb %s/%s: %w", namespace, budget, err)
	}
	entry, ok := b.Status.DisruptedPods[pod]
	if !ok {
		return at, created, false, nil
	}
	at = entry.Time
	p, err := c.CoreV1().Pods(namespace).Get(ctx, pod, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return at, created, false, nil
	}
	if err != nil {
		return at, created, false, fmt.Errorf("read pod %s/%s: %w", namespace, pod, err)
	}
	if !pdb.Replaced(at, pdb.StateOf(p)) {
		return at, created, false, nil
	}
	created = p.CreationTimestamp.Time
	if now.Sub(at) < clearAfterEntry || now.Sub(created) < clearAfterReplaced {
		return at, created, false, nil
	}
	b = b.DeepCopy()
	delete(b.Status.DisruptedPods, pod)
	if _, err := c.PolicyV1().PodDisruptionBudgets(namespace).UpdateStatus(ctx, b, metav1.UpdateOptions{}); err != nil {
		return at, created, false, fmt.Errorf("%w of pdb %s/%s: %w", errStatusWrite, namespace, budget, err)
	}
	return at, created, true, nil
}

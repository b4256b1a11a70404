package drain

import (
	"context"
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
// creation) and kept. When it is not safe: API servers whose clocks disagree by more
// than a second (the entry's time is the writing server's, the pod's creation another's),
// or another writer that reuses the status map for its own ends.

const (
	// ReasonHoldCleared says the run removed a hold's entry (Settings.ClearHolds).
	ReasonHoldCleared = "DisruptionControllerHoldCleared"
	// ReasonHoldNotCleared says the run could not remove it (the server refused the
	// status update, say for want of update on poddisruptionbudgets/status); said once a
	// run, after which the run waits holds out.
	ReasonHoldNotCleared = "DisruptionControllerHoldNotCleared"
)

const (
	// clearTries is how many times a clear is tried when its update conflicts.
	clearTries = 3
	// clearTimeout bounds one clear (its reads and its update).
	clearTimeout = 10 * time.Second
)

// clearHoldLocked queues, when the settings ask for it, the removal of h's entry from the
// status of the budget of key, once the lock is released.
func (bs *budgets) clearHoldLocked(key string, h pdb.Hold) {
	if !bs.cfg.ClearHolds || bs.cfg.DryRun != DryRunNone || bs.diag.clearRefused {
		return
	}
	bs.later(func() { bs.clearHold(key, h) })
}

// clearHold removes h's entry from the status of the budget of key, if it is still a
// hold, and says what it did. Called without the lock.
func (bs *budgets) clearHold(key string, h pdb.Hold) {
	ctx := bs.host.context()
	if ctx == nil {
		return
	}
	ns, name, _ := strings.Cut(key, "/")
	var (
		at      time.Time
		cleared bool
		err     error
	)
	for range clearTries {
		cctx, cancel := context.WithTimeout(ctx, clearTimeout)
		at, cleared, err = clearStaleEntry(cctx, bs.cfg.Client, ns, name, h.Pod)
		cancel()
		if !apierrors.IsConflict(err) {
			break
		}
	}
	bs.lock()
	defer bs.unlock()
	pod := ns + "/" + h.Pod
	switch {
	case err != nil && (apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err)):
		if bs.diag.clearRefused {
			return
		}
		bs.diag.clearRefused = true
		bs.emit(event.Event{Type: event.EventWarning, Pod: pod, PDB: key, Reason: ReasonHoldNotCleared,
			Message: "pdb " + key + ": could not remove the disruptedPods entry of " + h.Pod + " that holds it (--clear-disruption-holds): " + err.Error() + "; the drain waits the holds out (update on poddisruptionbudgets/status is needed)"})
	case err != nil:
		bs.cfg.Logger.V(1).Info("could not remove a hold's entry; the drain waits it out", "pdb", key, "pod", h.Pod, "err", err)
	case cleared:
		bs.emit(event.Event{Type: event.EventWarning, Pod: pod, PDB: key, Reason: ReasonHoldCleared,
			Message: fmt.Sprintf("pdb %s: removed the disruptedPods entry of %s (written %s, before the pod now named so was created): the disruption controller counts that pod by its readiness again (--clear-disruption-holds)",
				key, h.Pod, at.UTC().Format("15:04:05Z"))})
	}
}

// clearStaleEntry removes pod's entry from the status.disruptedPods of the budget
// namespace/budget when the pod that now carries the name replaced the one the entry was
// written for (pdb.Replaced): a status update guarded by the resourceVersion of the
// budget as read, so a conflict means someone wrote the budget meanwhile and the caller
// may try again. It returns the entry's time and whether it removed it; no entry, no pod
// by that name (the controller drops that entry itself) or an entry the pod does not
// succeed is left, with no error.
func clearStaleEntry(ctx context.Context, c kubernetes.Interface, namespace, budget, pod string) (time.Time, bool, error) {
	b, err := c.PolicyV1().PodDisruptionBudgets(namespace).Get(ctx, budget, metav1.GetOptions{})
	if err != nil {
		return time.Time{}, false, fmt.Errorf("read pdb %s/%s: %w", namespace, budget, err)
	}
	at, ok := b.Status.DisruptedPods[pod]
	if !ok {
		return time.Time{}, false, nil
	}
	p, err := c.CoreV1().Pods(namespace).Get(ctx, pod, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return at.Time, false, nil
	}
	if err != nil {
		return at.Time, false, fmt.Errorf("read pod %s/%s: %w", namespace, pod, err)
	}
	if !pdb.Replaced(at.Time, pdb.StateOf(p)) {
		return at.Time, false, nil
	}
	b = b.DeepCopy()
	delete(b.Status.DisruptedPods, pod)
	if _, err := c.PolicyV1().PodDisruptionBudgets(namespace).UpdateStatus(ctx, b, metav1.UpdateOptions{}); err != nil {
		return at.Time, false, fmt.Errorf("update the status of pdb %s/%s: %w", namespace, budget, err)
	}
	return at.Time, true, nil
}

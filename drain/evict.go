package drain

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// outcome classifies the API server's answer to an eviction, as v1.36's eviction
// handler (pkg/registry/core/pod/storage/eviction.go) gives it.
type outcome int

const (
	// accepted: 201, the pod is being deleted.
	accepted outcome = iota
	// gone: 404, the pod no longer exists.
	gone
	// conflict: 409. The UID precondition failed (a new pod of that name), the PDB's
	// status kept conflicting, or a Pending pod's resourceVersion moved. It proves
	// nothing: the pod is asked again after a backoff, and the node's informer (by UID)
	// decides whether the pod we meant is gone.
	conflict
	// refusedByPDB: 429 with a DisruptionBudget cause, or 403 from the budget itself
	// (disruptionsAllowed below zero, too many disrupted pods not yet confirmed): the pod
	// waits for that budget's status to change.
	refusedByPDB
	// multiplePDBs: 500, the pod is under more than one budget (a blocker).
	multiplePDBs
	// fatal: 403 from RBAC or an admission webhook, 400, 422: asking again never helps;
	// the node fails at once with the server's reason.
	fatal
	// throttled: 429 without a budget cause (API priority and fairness).
	throttled
	// failed: anything else (network, 5xx, a terminating namespace, ...): backoff.
	failed
)

// answer is a classified eviction answer.
type answer struct {
	outcome outcome
	// pdb is the name (not namespaced) of the refusing budget, when the server named it.
	pdb string
	// retryAfter is the wait the server asked for (details.retryAfterSeconds).
	retryAfter time.Duration
	// message is the server's most specific sentence (the cause, else the status).
	message string
	err     error
}

var budgetName = regexp.MustCompile(`^The disruption budget (\S+) `)

// classify reads an eviction error before anything wraps it.
func classify(err error) answer {
	if err == nil {
		return answer{outcome: accepted}
	}
	a := answer{outcome: failed, err: err, message: err.Error()}
	if d, ok := apierrors.SuggestsClientDelay(err); ok {
		a.retryAfter = time.Duration(d) * time.Second
	}
	var details *metav1.StatusDetails
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		details = status.Status().Details
	}
	terminating := false
	if details != nil {
		for _, c := range details.Causes {
			switch c.Type {
			case policyv1.DisruptionBudgetCause:
				a.message = c.Message
				if m := budgetName.FindStringSubmatch(c.Message); m != nil {
					a.pdb = m[1]
				}
			case corev1.NamespaceTerminatingCause:
				terminating = true
			}
		}
	}
	switch {
	case apierrors.IsNotFound(err):
		a.outcome = gone
	case apierrors.IsConflict(err):
		a.outcome = conflict
	case apierrors.IsTooManyRequests(err) && a.pdb != "":
		a.outcome = refusedByPDB
	case apierrors.IsTooManyRequests(err):
		a.outcome = throttled
	case apierrors.IsInternalError(err) && strings.Contains(err.Error(), "more than one PodDisruptionBudget"):
		a.outcome = multiplePDBs
	case apierrors.IsForbidden(err) && details != nil && details.Kind == "poddisruptionbudget" && details.Name != "":
		a.outcome, a.pdb = refusedByPDB, details.Name
	case apierrors.IsForbidden(err) && terminating:
		a.outcome = failed
	case apierrors.IsForbidden(err), apierrors.IsBadRequest(err), apierrors.IsInvalid(err):
		a.outcome = fatal
	}
	return a
}

// evictionTimeout bounds one eviction call. Calls in flight are allowed to finish after an
// interrupt, so they run on a context that is not cancelled with the drain's.
const evictionTimeout = 30 * time.Second

// evict posts a policy/v1 Eviction for pod with its UID as precondition, so that a pod
// recreated under the same name (a StatefulSet's) is never evicted by a stale request.
func (e *Engine) evict(ctx context.Context, pod *corev1.Pod, dryRun bool) error {
	return e.evictGrace(ctx, pod, dryRun, e.cfg.GracePeriodSeconds)
}

// evictGrace is evict with the grace period given (negative: the pod's own).
func (e *Engine) evictGrace(ctx context.Context, pod *corev1.Pod, dryRun bool, grace int) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), evictionTimeout)
	defer cancel()
	opts := &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr.To(pod.UID)}}
	if grace >= 0 {
		opts.GracePeriodSeconds = ptr.To(int64(grace))
	}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	return e.cfg.Client.PolicyV1().Evictions(pod.Namespace).Evict(ctx, &policyv1.Eviction{
		ObjectMeta:    metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace},
		DeleteOptions: opts,
	})
}

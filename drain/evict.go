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

// outcome classifies the API server's answer to an eviction.
type outcome int

const (
	// accepted: 201, the pod is being deleted.
	accepted outcome = iota
	// gone: 404 (the pod no longer exists) or 409 (the UID precondition failed: the pod
	// of that name is a new one, and the one we meant is gone).
	gone
	// refusedByPDB: 429 with a DisruptionBudget cause naming the budget.
	refusedByPDB
	// multiplePDBs: 500, the pod is under more than one budget.
	multiplePDBs
	// forbidden: 403 (negative budget, too many disrupted pods, terminating namespace).
	forbidden
	// throttled: 429 without a budget cause (API priority and fairness).
	throttled
	// failed: anything else (network, 5xx, ...).
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
	var status apierrors.APIStatus
	if errors.As(err, &status) && status.Status().Details != nil {
		for _, c := range status.Status().Details.Causes {
			if c.Type == policyv1.DisruptionBudgetCause {
				a.message = c.Message
				if m := budgetName.FindStringSubmatch(c.Message); m != nil {
					a.pdb = m[1]
				}
			}
		}
	}
	switch {
	case apierrors.IsNotFound(err), apierrors.IsConflict(err):
		a.outcome = gone
	case apierrors.IsTooManyRequests(err) && a.pdb != "":
		a.outcome = refusedByPDB
	case apierrors.IsTooManyRequests(err):
		a.outcome = throttled
	case apierrors.IsInternalError(err) && strings.Contains(err.Error(), "more than one PodDisruptionBudget"):
		a.outcome = multiplePDBs
	case apierrors.IsForbidden(err):
		a.outcome = forbidden
	}
	return a
}

// evictionTimeout bounds one eviction call. Calls in flight are allowed to finish after an
// interrupt, so they run on a context that is not cancelled with the drain's.
const evictionTimeout = 30 * time.Second

// evict posts a policy/v1 Eviction for pod with its UID as precondition, so that a pod
// recreated under the same name (a StatefulSet's) is never evicted by a stale request.
func (e *Engine) evict(ctx context.Context, pod *corev1.Pod, dryRun bool) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), evictionTimeout)
	defer cancel()
	opts := &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr.To(pod.UID)}}
	if e.cfg.GracePeriodSeconds >= 0 {
		opts.GracePeriodSeconds = ptr.To(int64(e.cfg.GracePeriodSeconds))
	}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	return e.cfg.Client.PolicyV1().Evictions(pod.Namespace).Evict(ctx, &policyv1.Eviction{
		ObjectMeta:    metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace},
		DeleteOptions: opts,
	})
}

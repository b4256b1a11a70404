package drain

import (
	"errors"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// refusal builds the 429 the API server sends for a budget, as eviction.go does.
func refusal(retryAfter int, cause string) error {
	err := apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", retryAfter)
	if cause != "" {
		err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{Type: policyv1.DisruptionBudgetCause, Message: cause})
	}
	return err
}

func multiple() error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusInternalServerError,
		Reason:  metav1.StatusReasonInternalError,
		Message: "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."}}
}

func webhookDenial() error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusForbidden,
		Reason: metav1.StatusReasonForbidden, Message: `admission webhook "deny.example.com" denied the request: no evictions on Fridays`}}
}

func terminatingNamespace() error {
	err := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "p", errors.New("namespace ns is being terminated"))
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{Type: corev1.NamespaceTerminatingCause, Message: "ns"})
	return err
}

func TestClassify(t *testing.T) {
	pods := schema.GroupResource{Resource: "pods"}
	tests := []struct {
		name       string
		err        error
		want       outcome
		pdb        string
		retryAfter time.Duration
	}{
		{"201 is accepted", nil, accepted, "", 0},
		{"404 means the pod is gone", apierrors.NewNotFound(pods, "p"), gone, "", 0},
		{"409 for a UID precondition proves nothing", apierrors.NewConflict(pods, "p", errors.New("the UID in the precondition does not match")), conflict, "", 0},
		{"409 for a Pending pod's resourceVersion proves nothing", apierrors.NewConflict(pods, "p", errors.New("the ResourceVersion in the precondition (1) does not match")), conflict, "", 0},
		{"429 for an exhausted budget names it", refusal(0, "The disruption budget web needs 2 healthy pods and has 2 currently"), refusedByPDB, "web", 0},
		{"429 for a stale budget names it and asks for 10 s", refusal(10, "The disruption budget web is still being processed by the server."), refusedByPDB, "web", 10 * time.Second},
		{"429 for a failed sync names it", refusal(0, "The disruption budget web does not allow evicting pods currently because it failed sync: boom"), refusedByPDB, "web", 0},
		{"429 without a budget cause is throttling", apierrors.NewTooManyRequests("slow down", 3), throttled, "", 3 * time.Second},
		{"500 for two budgets", multiple(), multiplePDBs, "", 0},
		{"403 for a negative budget parks on it", apierrors.NewForbidden(schema.GroupResource{Group: "policy", Resource: "poddisruptionbudget"}, "web", errors.New("pdb disruptions allowed is negative")), refusedByPDB, "web", 0},
		{"403 for too many disrupted pods parks on it", apierrors.NewForbidden(schema.GroupResource{Group: "policy", Resource: "poddisruptionbudget"}, "web", errors.New("DisruptedPods map too big - too many evictions not confirmed by PDB controller")), refusedByPDB, "web", 0},
		{"403 from RBAC fails at once", apierrors.NewForbidden(schema.GroupResource{Resource: "pods/eviction"}, "p", errors.New(`User "x" cannot create resource "pods/eviction"`)), fatal, "", 0},
		{"403 from a webhook fails at once", webhookDenial(), fatal, "", 0},
		{"403 in a terminating namespace waits", terminatingNamespace(), failed, "", 0},
		{"400 fails at once", apierrors.NewBadRequest("name mismatch"), fatal, "", 0},
		{"422 fails at once", apierrors.NewInvalid(schema.GroupKind{Group: "policy", Kind: "Eviction"}, "p", nil), fatal, "", 0},
		{"504 after PDB conflicts backs off", apierrors.NewTimeoutError(`couldn't update PodDisruptionBudget "web" due to conflicts`, 10), failed, "", 10 * time.Second},
		{"anything else failed", errors.New("connection reset"), failed, "", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := classify(tc.err)
			if a.outcome != tc.want || a.pdb != tc.pdb || a.retryAfter != tc.retryAfter {
				t.Errorf("classify = {outcome %d, pdb %q, retryAfter %s}, want {%d, %q, %s}", a.outcome, a.pdb, a.retryAfter, tc.want, tc.pdb, tc.retryAfter)
			}
		})
	}
}

func apierrorsForbidden(gr schema.GroupResource) error {
	return apierrors.NewForbidden(gr, "p1", errors.New(`User "dev" cannot create resource "pods/eviction" in API group "" in the namespace "ns"`))
}

func apierrors409() error {
	return apierrors.NewConflict(schema.GroupResource{Resource: "Pod"}, "p1", errors.New("the UID in the precondition does not match"))
}

func badRequest() error { return apierrors.NewBadRequest("eviction name does not match the pod") }

func invalid() error {
	return apierrors.NewInvalid(schema.GroupKind{Group: "policy", Kind: "Eviction"}, "p1", nil)
}

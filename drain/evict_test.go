package drain

import (
	"errors"
	"net/http"
	"testing"
	"time"

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
		{"409 means the UID changed: the pod we meant is gone", apierrors.NewConflict(pods, "p", errors.New("the UID in the precondition does not match")), gone, "", 0},
		{"429 for an exhausted budget names it", refusal(0, "The disruption budget web needs 2 healthy pods and has 2 currently"), refusedByPDB, "web", 0},
		{"429 for a stale budget names it and asks for 10 s", refusal(10, "The disruption budget web is still being processed by the server."), refusedByPDB, "web", 10 * time.Second},
		{"429 for a failed sync names it", refusal(0, "The disruption budget web does not allow evicting pods currently because it failed sync: boom"), refusedByPDB, "web", 0},
		{"429 without a budget cause is throttling", apierrors.NewTooManyRequests("slow down", 3), throttled, "", 3 * time.Second},
		{"500 for two budgets", multiple(), multiplePDBs, "", 0},
		{"403 for a negative budget", apierrors.NewForbidden(schema.GroupResource{Group: "policy", Resource: "poddisruptionbudget"}, "web", errors.New("pdb disruptions allowed is negative")), forbidden, "", 0},
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

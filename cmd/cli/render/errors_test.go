package render

import (
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A refusal says who refused: RBAC, or the admission policy that checks a Maintenance's
// requester.
func TestErrorLineNamesWhoRefused(t *testing.T) {
	gr := schema.GroupResource{Group: "maintenance.kubectl-maintenance.io", Resource: "maintenances"}
	tests := map[string]struct {
		err  error
		want string
	}{
		"RBAC": {apierrors.NewForbidden(gr, "m", errors.New(`User "jane" cannot create resource`)), "not allowed (RBAC): "},
		"the admission policy": {apierrors.NewForbidden(gr, "m", errors.New("ValidatingAdmissionPolicy 'kubectl-maintenance-requester-rights' with binding 'kubectl-maintenance-requester-rights' denied request: you may not patch nodes")),
			"not allowed (admission policy): "},
		"anything else": {errors.New("boom"), "boom"},
	}
	for name, tc := range tests {
		if got := ErrorLine(tc.err); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: %q, want it to start %q", name, got, tc.want)
		}
	}
}

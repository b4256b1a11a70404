package render

import (
	"errors"
	"net"
	"net/url"
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
		"an unreachable server, named": {&url.Error{Op: "Get", URL: "https://10.0.0.1:6443/api", Err: &net.OpError{Op: "dial", Net: "tcp",
			Addr: &net.TCPAddr{IP: net.ParseIP("10.0.0.1"), Port: 6443}, Err: errors.New("connect: connection refused")}},
			"cannot reach the API server at 10.0.0.1:6443 (connect: connection refused): check --kubeconfig"},
		"no kubeconfig: client-go's default server": {&net.OpError{Op: "dial", Net: "tcp",
			Addr: &net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 8080}, Err: errors.New("connect: connection refused")},
			"cannot reach the API server at 127.0.0.1:8080 (connect: connection refused): no kubeconfig was found?"},
	}
	for name, tc := range tests {
		if got := ErrorLine(tc.err); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: %q, want it to start %q", name, got, tc.want)
		}
	}
}

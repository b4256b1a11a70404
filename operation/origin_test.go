package operation

import (
	"context"
	"testing"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// The user recorded on the nodes is the requester's when a run is made on someone's
// behalf (a Maintenance), with the user the process acts as after "via".
func TestWithOriginNamesTheRequester(t *testing.T) {
	const controller = "system:serviceaccount:kube-system:kubectl-maintenance-controller"
	tests := []struct {
		name        string
		action      Action
		requestedBy string
		want        string
	}{
		{"a CLI run records its own user", Drain, "", controller},
		{"a Maintenance's drain records its requester via the controller", Drain, "alice", "alice (via " + controller + ")"},
		{"a Maintenance's cordon too", Cordon, "alice", "alice (via " + controller + ")"},
		{"a requester who is the process's user is named once", Move, controller, controller},
		{"an uncordon records nothing (it removes the record)", Uncordon, "alice", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := &Operator{User: controller} // no client: whoAmI falls back to User
			req := Request{Action: tc.action, Drain: drain.Settings{DryRun: drain.DryRunNone}, Command: "maintenance/m", RunID: "maintenance-uid", RequestedBy: tc.requestedBy}
			o.withOrigin(context.Background(), &req)
			if got := req.origin.User; got != tc.want {
				t.Errorf("user %q, want %q", got, tc.want)
			}
			if tc.want != "" && (req.origin.Command != "maintenance/m" || req.origin.ID != "maintenance-uid") {
				t.Errorf("origin %+v, want the command and run ID kept", req.origin)
			}
			if tc.want == "" && req.origin != (noderecord.Run{}) {
				t.Errorf("origin %+v, want none", req.origin)
			}
		})
	}
}

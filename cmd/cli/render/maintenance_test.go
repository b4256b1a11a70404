package render

import (
	"bytes"
	"testing"

	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance"
	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// A followed Maintenance's changes: a state on stdout (a failure on stderr), then each
// new blocker on stderr with its cause.
func TestMaintenanceChangeLines(t *testing.T) {
	var out, errOut bytes.Buffer
	MaintenanceChange(&out, &errOut, maintenance.NodeChange{StateChanged: true,
		Node:     mntv1.NodeStatus{Name: "n1", State: maintenance.NodeDraining, PodsLeft: 2},
		Blockers: []mntv1.Blocker{{Pod: "ns/a", Message: "pdb ns/web allows 0", Cause: "its replacement is not Ready"}}})
	MaintenanceChange(&out, &errOut, maintenance.NodeChange{StateChanged: true, Node: mntv1.NodeStatus{Name: "n2", State: maintenance.NodeFailed, Message: "boom"}})
	if want := "node/n1 draining (2 pod(s) left)\n"; out.String() != want {
		t.Errorf("stdout %q, want %q", out.String(), want)
	}
	if want := "node/n1: pod ns/a waits: pdb ns/web allows 0 (its replacement is not Ready)\nerror: node/n2: boom\n"; errOut.String() != want {
		t.Errorf("stderr %q, want %q", errOut.String(), want)
	}
}

// A blocker whose message already says its cause says it once; a node taken from the run
// says so with who or what.
func TestMaintenanceChangeSaysEachCauseOnce(t *testing.T) {
	var out, errOut bytes.Buffer
	MaintenanceChange(&out, &errOut, maintenance.NodeChange{
		Node:     mntv1.NodeStatus{Name: "n1", State: maintenance.NodeDraining},
		Blockers: []mntv1.Blocker{{Pod: "ns/a", Message: "pdb ns/web allows 0: its replacement is not Ready", Cause: "its replacement is not Ready"}}})
	MaintenanceChange(&out, &errOut, maintenance.NodeChange{StateChanged: true,
		Node: mntv1.NodeStatus{Name: "n2", State: maintenance.NodeReleased, Message: "uncordoned by someone else at 2026-11-28T02:00:00Z"}})
	want := "node/n1: pod ns/a waits: pdb ns/web allows 0: its replacement is not Ready\nnode/n2 left the run: uncordoned by someone else at 2026-11-28T02:00:00Z\n"
	if errOut.String() != want {
		t.Errorf("stderr %q, want %q", errOut.String(), want)
	}
}

func TestWaitTextSaysEachPartOnce(t *testing.T) {
	tests := map[string]struct {
		b    mntv1.Blocker
		want string
	}{
		"message and another cause": {mntv1.Blocker{Message: "pdb ns/web allows 0", Cause: "its replacement is not Ready"}, "pdb ns/web allows 0 (its replacement is not Ready)"},
		"the cause repeats the message": {mntv1.Blocker{Message: "pdb ns/web allows 0", Cause: "pdb ns/web allows 0: ns/web-2 is unschedulable"},
			"pdb ns/web allows 0: ns/web-2 is unschedulable"},
		"the message holds the cause": {mntv1.Blocker{Message: "pdb ns/web allows 0: not Ready", Cause: "not Ready"}, "pdb ns/web allows 0: not Ready"},
		"no cause":                    {mntv1.Blocker{Message: "pdb ns/web allows 0"}, "pdb ns/web allows 0"},
		"the message says the cause without the numbers": {mntv1.Blocker{
			Message: "pdb ns/web needs 5 healthy pods, has 5, allows 0; cause: its status is stale: kube-controller-manager is down",
			Cause:   "pdb ns/web needs 5 healthy pods, has 5, allows 0: its status is stale: kube-controller-manager is down"},
			"pdb ns/web needs 5 healthy pods, has 5, allows 0; cause: its status is stale: kube-controller-manager is down"},
	}
	for name, tc := range tests {
		if got := waitText(tc.b); got != tc.want {
			t.Errorf("%s: %q, want %q", name, got, tc.want)
		}
	}
}

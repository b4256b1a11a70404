package maintenance

import (
	"testing"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
)

// The engine's sentences that reach a Maintenance's status name its spec's fields, not
// the CLI's flags; what names no flag (kubectl logs --previous) is left as it is.
func TestSpecWordingNamesTheSpecFields(t *testing.T) {
	tests := map[string]struct{ in, want string }{
		"a node given up": {"blocked (--on-blocked=fail): pod ns/db-0: pdb ns/db allows 0",
			"blocked (policy.onBlocked: fail): pod ns/db-0: pdb ns/db allows 0"},
		"a run stopped": {"stopped (--on-blocked=fail), no new node started: ns/db-0",
			"stopped (policy.onBlocked: fail), no new node started: ns/db-0"},
		"not started": {"not started: --not-after 2020-01-01T00:00:00Z has passed",
			"not started: policy.notAfter 2020-01-01T00:00:00Z has passed"},
		"timed out": {"the run timed out (--timeout 3s) before the node was drained",
			"the run timed out (drain.timeout 3s) before the node was drained"},
		"the remedy of a budget that never allows": {
			"relax pdb ns/db (maxUnavailable 1, or minAvailable below the pods it expects), scale the workload up, drain with --surge (a one-replica Deployment), or --on-blocked=skip to leave the node cordoned and go on",
			"relax pdb ns/db (maxUnavailable 1, or minAvailable below the pods it expects), scale the workload up, set policy.surge (a one-replica Deployment), or policy.onBlocked: skip to leave the node cordoned and go on"},
		"the remedy of a pod stuck terminating": {
			"check its node's kubelet (it confirms the deletion), or raise --skip-wait-for-delete-timeout to stop waiting for it",
			"check its node's kubelet (it confirms the deletion), or raise drain.skipWaitForDeleteTimeoutSeconds to stop waiting for it"},
		"the endless wait": {
			"pdb ns/db never allows a disruption: with no --timeout this run waits until the budget changes; stop it with Ctrl-C (running the same command again resumes), or run it with --timeout or --on-blocked=skip",
			"pdb ns/db never allows a disruption: with no drain.timeout this run waits until the budget changes; pause or cancel the Maintenance (kubectl maintenance pause|cancel), or set drain.timeout or policy.onBlocked: skip"},
		"kubectl's filter errors": {"cannot delete Pods that declare no controller (use --force to override): ns/p",
			"cannot delete Pods that declare no controller (use drain.force to override): ns/p"},
		"a drain rule": {"remove the annotation, let the pod finish, or drain with --ignore-do-not-disrupt",
			"remove the annotation, let the pod finish, or set drain.ignoreDoNotDisrupt"},
		"another run's command line, as typed": {
			"node n1 is held by run r1 by jane (kubectl maintenance drain n1 --ignore-daemonsets --timeout 5m) on h1 (pid 7); with --on-blocked=skip (kubectl-maintenance drain n2 --force) --force",
			"node n1 is held by run r1 by jane (kubectl maintenance drain n1 --ignore-daemonsets --timeout 5m) on h1 (pid 7); with policy.onBlocked: skip (kubectl-maintenance drain n2 --force) drain.force"},
		"a quoted command with a selector's parentheses": {
			"held by run r1 (kubectl maintenance drain -l 'rack in (a,b)' --force) since now; --force",
			"held by run r1 (kubectl maintenance drain -l 'rack in (a,b)' --force) since now; drain.force"},
		"no flag": {"fix the crashing container (kubectl logs --previous shows why it exits)",
			"fix the crashing container (kubectl logs --previous shows why it exits)"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := SpecWording(tc.in); got != tc.want {
				t.Errorf("SpecWording\n %q\n= %q\nwant\n %q", tc.in, got, tc.want)
			}
		})
	}
}

// The status the controller writes says the spec's words: a blocker's message, cause and
// remedy, and a node's message.
func TestTrackerWritesSpecWords(t *testing.T) {
	tr := newTracker(nil, []string{"n1", "n2"}, "Drain")
	tr.apply(event.Event{Type: event.EventEvictionBlocked, Node: "n1", Pod: "ns/a", Message: "waits (--on-blocked=skip after 2s)",
		Cause: "never allows", Remedy: "or --on-blocked=skip to go on"})
	tr.apply(event.Event{Type: event.EventNodeBlocked, Node: "n2", Message: "gave up (--on-blocked=skip)"})
	nodes := tr.take()
	if b := nodes[0].Blockers[0]; b.Message != "waits (policy.onBlocked: skip after 2s)" || b.Remedy != "or policy.onBlocked: skip to go on" {
		t.Errorf("blocker %+v, want the spec's words", b)
	}
	if m := nodes[1].Message; m != "gave up (policy.onBlocked: skip)" {
		t.Errorf("node message %q, want the spec's words", m)
	}
}

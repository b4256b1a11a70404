// Package planverdict owns the verdict of a drain plan under the run's policy: which
// blocked nodes the policy still ends (--on-blocked=force or skip) and, when nodes cannot
// be drained as things stand, the error that makes plan exit 3.
package planverdict

import (
	"fmt"

	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/render"
	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
)

// Check returns an error that means blocked (exit 3) when the plan shows a node that
// can't be drained and whose blockers the policy onBlocked does not end; nil otherwise.
func Check(plan *event.Plan, onBlocked drain.OnBlocked) error {
	bad := 0
	for _, n := range plan.Nodes {
		if render.NodeVerdict(n) != render.VerdictReady && !policyEnds(n, plan, onBlocked) {
			bad++
		}
	}
	if bad > 0 {
		return &planBlockedError{nodes: bad}
	}
	return nil
}

// planBlockedError is returned (exit 3) when the plan shows a node that can't be drained.
type planBlockedError struct{ nodes int }

func (e *planBlockedError) Error() string {
	return fmt.Sprintf("%d node(s) cannot be drained as things stand", e.nodes)
}
func (e *planBlockedError) Blocked() bool { return true }

// policyEnds reports whether the run's policy ends every blocker of a blocked node, so
// that the node's drain ends: under --on-blocked=force each pod that can never be
// evicted as things stand is one the plan would force (event.Plan.WouldForce), under
// --on-blocked=skip each waits on a budget (the node is given up). A node with errors
// (refused by kubectl's filters) is never ended by a policy.
func policyEnds(n event.NodePlan, plan *event.Plan, onBlocked drain.OnBlocked) bool {
	if len(n.Errors) > 0 {
		return false
	}
	forced := map[string]bool{}
	for _, b := range plan.WouldForce {
		forced[b.Node+"/"+b.Pod] = true
	}
	for _, s := range n.Steps {
		if s.Wave != 0 {
			continue
		}
		switch onBlocked {
		case drain.OnBlockedForce:
			if !forced[n.Name+"/"+s.Pod.Namespace+"/"+s.Pod.Name] {
				return false
			}
		case drain.OnBlockedSkip:
			if len(s.Decision.Budgets) == 0 {
				return false
			}
		default:
			return false
		}
	}
	return true
}

package planverdict

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

// The plan's exit code follows the policy: a blocked node counts as ending when the policy
// ends each of its pods that can never go.
func TestPolicyEnds(t *testing.T) {
	never := func(name string, budgets int) pdb.Step {
		s := pdb.Step{Pod: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name}}, Wave: 0}
		for range budgets {
			s.Decision.Budgets = append(s.Decision.Budgets, &pdb.Budget{})
		}
		return s
	}
	node := event.NodePlan{Name: "n1", Steps: []pdb.Step{never("ledger", 1), {Wave: 1}}}
	forced := &event.Plan{WouldForce: []event.Blocker{{Node: "n1", Pod: "shop/ledger"}}}
	for name, tc := range map[string]struct {
		node   event.NodePlan
		plan   *event.Plan
		policy drain.OnBlocked
		want   bool
	}{
		"force ends a pod it would force":                {node, forced, drain.OnBlockedForce, true},
		"force does not end a pod it would not force":    {node, &event.Plan{}, drain.OnBlockedForce, false},
		"skip ends a pod that waits on a budget":         {node, &event.Plan{}, drain.OnBlockedSkip, true},
		"skip does not end a pod with nowhere to go":     {event.NodePlan{Name: "n1", Steps: []pdb.Step{never("orphan", 0)}}, &event.Plan{}, drain.OnBlockedSkip, false},
		"wait ends nothing":                              {node, forced, drain.OnBlockedWait, false},
		"a node kubectl's filters refuse is never ended": {event.NodePlan{Name: "n1", Errors: []string{"local storage"}, Steps: node.Steps}, forced, drain.OnBlockedForce, false},
	} {
		t.Run(name, func(t *testing.T) {
			if got := policyEnds(tc.node, tc.plan, tc.policy); got != tc.want {
				t.Errorf("policyEnds = %v, want %v", got, tc.want)
			}
		})
	}
}

package drain

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain/diagnose"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

// maxPlanLists bounds the budgets whose pods a plan lists to explain them.
const maxPlanLists = 50

// unplaceableRemedy is the remedy of a budget the plan finds cannot recover because the
// replacements have no node outside the drained ones.
const unplaceableRemedy = "give the replacements a node outside the ones being drained (uncordon or add a node that fits their nodeSelector, affinity and taints), or drain fewer nodes at once"

// explainPlan gives each step that waits on a budget, or never goes, its cause and
// remedy: a budget that never allows, two budgets, and, for a budget that allows nothing
// now, why (its replacements not Ready, pods stuck terminating, an earlier run's
// eviction record, a stale status), from one List of the pods it selects.
func (e *Engine) explainPlan(ctx context.Context, plans map[string]*event.NodePlan, pdbs []*policyv1.PodDisruptionBudget) {
	ix := pdb.NewIndex(pdbs)
	listed := map[string][]*corev1.Pod{}
	now := e.cfg.Clock.Now()
	for _, np := range plans {
		for i := range np.Steps {
			s := &np.Steps[i]
			if s.Cause != "" || len(s.Decision.Budgets) == 0 {
				continue
			}
			b := s.Decision.Budget()
			exhausted := b != nil && (b.Allowed() <= 0 || b.Stale())
			if s.Wave == 1 && !exhausted || s.Decision.Verdict == pdb.IgnoresPDB || s.Decision.Verdict == pdb.Unhealthy {
				continue
			}
			in := diagnose.Input{Pod: s.Pod, Budgets: s.Decision.Budgets, Now: now}
			if b != nil && exhausted {
				pods, ok := listed[b.Key()]
				if !ok && len(listed) < maxPlanLists {
					pods = e.selectedPods(ctx, ix.Get(b.Key()))
					listed[b.Key()] = pods
				}
				in.Selected = pods
			}
			d := diagnose.Diagnose(in)
			if d.Kind == diagnose.Exhausted && s.Wave == 0 {
				// The simulation's own finding: replacements with nowhere to run.
				d.Cause, d.Remedy = s.Blocker, unplaceableRemedy
			}
			if d.Kind == diagnose.Exhausted && s.Wave > 0 {
				continue // an ordinary wait: the waves say it
			}
			s.Cause, s.Remedy = d.Cause, d.Remedy
		}
	}
}

// selectedPods lists the pods b selects (from the watch cache); nil when it can't.
func (e *Engine) selectedPods(ctx context.Context, b *pdb.Budget) []*corev1.Pod {
	if b == nil {
		return nil
	}
	s, err := metav1.LabelSelectorAsSelector(b.PDB.Spec.Selector)
	if err != nil {
		return nil
	}
	l, err := e.cfg.Client.CoreV1().Pods(b.PDB.Namespace).List(ctx, metav1.ListOptions{LabelSelector: s.String(), ResourceVersion: "0"})
	if err != nil {
		return nil
	}
	out := make([]*corev1.Pod, len(l.Items))
	for i := range l.Items {
		out[i] = &l.Items[i]
	}
	return out
}

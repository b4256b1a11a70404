package maintenance

import (
	"github.com/kubectl-maintenance/kubectl-maintenance/drainrule"
	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// drainOrder turns spec.drain.order into the engine's drain rules (drain.Settings.Validate
// checks them and names a bad one).
func drainOrder(in []v1alpha1.DrainOrderRule) []drainrule.Rule {
	var out []drainrule.Rule
	for _, r := range in {
		out = append(out, drainrule.Rule{Name: r.Name, Selector: r.Selector, NamespaceSelector: r.NamespaceSelector,
			Order: r.Order, Behavior: drainrule.Behavior(r.Behavior)})
	}
	return out
}

// SpecOrder is the inverse of drainOrder: the run's drain rules as spec.drain.order
// (drain --server-side --drain-order).
func SpecOrder(in []drainrule.Rule) []v1alpha1.DrainOrderRule {
	var out []v1alpha1.DrainOrderRule
	for _, r := range in {
		out = append(out, v1alpha1.DrainOrderRule{Name: r.Name, Selector: r.Selector, NamespaceSelector: r.NamespaceSelector,
			Order: r.Order, Behavior: string(r.Behavior)})
	}
	return out
}

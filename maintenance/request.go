package maintenance

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
	"github.com/kubectl-maintenance/kubectl-maintenance/operation"
)

// OriginPrefix starts the origin command recorded on the nodes a Maintenance touches:
// "maintenance/<name>" (noderecord's MaintenanceCommandPrefix).
const OriginPrefix = noderecord.MaintenanceCommandPrefix

// AnnotationRequestedBy names the user who created a Maintenance: the CLI sets it to the
// user's name, and the admission policy (config/admission) refuses any other name and any
// change. The controller records it on the nodes as the run's user, "<requester> (via
// <controller>)". An object without it (created by plain kubectl) records the controller
// alone.
const AnnotationRequestedBy = "maintenance.kubectl-maintenance.io/requested-by"

// Origin is what a run of m records on its nodes as the command that started the work.
func Origin(name string) string { return OriginPrefix + name }

// RunID is the stable identity of m's runs, recorded on the nodes they hold: every leader
// runs m under it, so the next leader takes m's nodes over at once (a record held by any
// other identity is still respected until its heartbeat expires).
func RunID(m *v1alpha1.Maintenance) string { return "maintenance-" + string(m.UID) }

// Request turns m's spec into the operations layer's request, its drain settings by
// SettingsFromSpec. The CRD's rules have refused what can never run; Request checks
// again the names it relies on (an object stored before a rule existed), and validates
// the settings: the controller's one Settings.Validate, after SettingsFromSpec.
func Request(m *v1alpha1.Maintenance) (operation.Request, error) {
	s := m.Spec
	// Command and RunID are the origin operation records on the nodes (it decides the
	// origin, once: operation.Request.Origin).
	req := operation.Request{Nodes: s.Nodes, Selector: s.Selector, Pool: s.Pool, Surge: s.Policy.Surge, To: s.To,
		Command: Origin(m.Name), RunID: RunID(m), IncludeDisrupting: s.Drain.IncludeDisrupting,
		RequestedBy: m.Annotations[AnnotationRequestedBy], RecordEvents: true}
	if err := checkNames(s); err != nil {
		return req, err
	}
	switch s.Action {
	case v1alpha1.ActionDrain:
		req.Action = operation.Drain
	case v1alpha1.ActionCordon:
		req.Action = operation.Cordon
	case v1alpha1.ActionUncordon:
		req.Action, req.Force = operation.Uncordon, s.Drain.Force
	case v1alpha1.ActionMove:
		req.Action = operation.Move
		if s.To == "" {
			return req, fmt.Errorf("spec.to: a Move needs its target pool")
		}
	default:
		return req, fmt.Errorf("spec.action: unknown action %q", s.Action)
	}
	set, err := SettingsFromSpec(s) // settings.go
	if err != nil {
		return req, err
	}
	if err := set.Validate(); err != nil { // the settings' one validation, in the spec's names
		return req, err
	}
	if s.Pool == "" && set.MaxParallelNodes == 0 {
		set.MaxParallelNodes = drain.DefaultSettings().MaxParallelNodes // a pool's 0 is its maxUnavailable
	}
	req.Drain = set
	return req, nil
}

// remaining is what is left of the drain's timeout for a run resumed at now of an object
// started at start (a new leader, a resume after a pause): the timeout bounds the whole
// Maintenance, not each run of it. ok is false once nothing is left.
func remaining(timeout time.Duration, start, now time.Time) (left time.Duration, ok bool) {
	if timeout == 0 || start.IsZero() {
		return timeout, true
	}
	left = timeout - now.Sub(start)
	return left, left > 0
}

// checkNames refuses node names and selectors that can never select a node (an object
// stored before the CRD's rules refused them): that object fails alone, with the reason.
func checkNames(s v1alpha1.MaintenanceSpec) error {
	for i, n := range s.Nodes {
		if errs := validation.IsDNS1123Subdomain(n); len(errs) > 0 {
			return fmt.Errorf("spec.nodes[%d]: %q is not a node name: %s", i, n, errs[0])
		}
	}
	if s.Selector != "" {
		if _, err := labels.Parse(s.Selector); err != nil {
			return fmt.Errorf("spec.selector: %w", err)
		}
	}
	return nil
}

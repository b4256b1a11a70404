package pdb

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// Verdict is what the API server would answer to an eviction of a pod right now.
type Verdict string

// Verdicts, in the order the API server's eviction handler decides them.
const (
	// IgnoresPDB: a Pending, Succeeded or Failed pod, or one already terminating, is
	// deleted without any budget check (even under several PDBs).
	IgnoresPDB Verdict = "IgnoresPDB"
	// NoPDB: no budget selects the pod.
	NoPDB Verdict = "NoPDB"
	// Multiple: more than one budget selects the pod; the server answers 500.
	Multiple Verdict = "MultiplePDBs"
	// Unhealthy: the pod is not Ready and the budget lets it go without consuming an
	// allowance (unhealthyPodEvictionPolicy AlwaysAllow, or IfHealthyBudget while the
	// budget has its desired healthy pods).
	Unhealthy Verdict = "UnhealthyAllowed"
	// Stale: the budget's status has not observed its latest spec; 429, Retry-After 10.
	Stale Verdict = "StaleStatus"
	// Never: the budget can never allow a disruption; waiting does not help.
	Never Verdict = "NeverAllows"
	// Exhausted: the budget allows no disruption now; it will after pods become healthy.
	Exhausted Verdict = "Exhausted"
	// Negative: disruptionsAllowed is below 0; the server answers 403.
	Negative Verdict = "NegativeBudget"
	// Allowed: the budget allows a disruption now; the eviction consumes one.
	Allowed Verdict = "Allowed"
)

// Decision is the verdict for one pod, with the budgets involved and a sentence a person
// understands.
type Decision struct {
	Verdict Verdict
	// Budgets that select the pod.
	Budgets []*Budget
	// Reason explains the verdict, naming the PDB and its numbers.
	Reason string
}

// Goes reports whether an eviction would be accepted now.
func (d Decision) Goes() bool {
	switch d.Verdict {
	case IgnoresPDB, NoPDB, Unhealthy, Allowed:
		return true
	}
	return false
}

// Consumes reports whether an accepted eviction uses up one of the budget's allowances.
func (d Decision) Consumes() bool { return d.Verdict == Allowed }

// Blocks reports whether the pod can never be evicted as things stand (waiting on the
// budget's status does not help; someone must change a PDB).
func (d Decision) Blocks() bool { return d.Verdict == Never || d.Verdict == Multiple }

// Budget returns the single budget of the decision, or nil.
func (d Decision) Budget() *Budget {
	if len(d.Budgets) == 1 {
		return d.Budgets[0]
	}
	return nil
}

// Decide mirrors the API server's eviction handler (pkg/registry/core/pod/storage/
// eviction.go) for pod under the given budgets, as their statuses stand.
func Decide(pod *corev1.Pod, budgets []*Budget) Decision {
	d := Decision{Budgets: budgets}
	name := pod.Namespace + "/" + pod.Name
	switch {
	case IgnoresBudgets(pod):
		d.Verdict, d.Reason = IgnoresPDB, fmt.Sprintf("pod %s is %s: deleted without a budget check", name, phaseWord(pod))
		return d
	case len(budgets) == 0:
		d.Verdict, d.Reason = NoPDB, fmt.Sprintf("pod %s has no PodDisruptionBudget", name)
		return d
	case len(budgets) > 1:
		d.Verdict = Multiple
		d.Reason = fmt.Sprintf("pod %s is selected by %s: the Eviction API refuses pods under more than one PodDisruptionBudget (500); make the selectors disjoint", name, Keys(budgets))
		return d
	}
	b := budgets[0]
	if !PodReady(pod) {
		if b.AlwaysAllowsUnhealthy() {
			d.Verdict, d.Reason = Unhealthy, fmt.Sprintf("pod %s is not Ready and pdb %s has unhealthyPodEvictionPolicy AlwaysAllow", name, b.Key())
			return d
		}
		st := b.PDB.Status
		if st.CurrentHealthy >= st.DesiredHealthy && st.DesiredHealthy > 0 {
			d.Verdict, d.Reason = Unhealthy, fmt.Sprintf("pod %s is not Ready and pdb %s has its %d healthy pods", name, b.Key(), st.DesiredHealthy)
			return d
		}
	}
	if never, why := b.NeverAllows(); never {
		d.Verdict, d.Reason = Never, why
		return d
	}
	switch {
	case b.Stale():
		d.Verdict, d.Reason = Stale, fmt.Sprintf("pdb %s is still being processed by the disruption controller (observedGeneration %d < generation %d)", b.Key(), b.PDB.Status.ObservedGeneration, b.PDB.Generation)
	case b.Allowed() < 0:
		d.Verdict, d.Reason = Negative, fmt.Sprintf("pdb %s allows %d disruptions (below zero: more pods are disrupted than it permits)", b.Key(), b.Allowed())
	case b.Allowed() == 0:
		d.Verdict, d.Reason = Exhausted, fmt.Sprintf("pdb %s %s", b.Key(), b.Numbers())
	default:
		d.Verdict, d.Reason = Allowed, fmt.Sprintf("pdb %s %s", b.Key(), b.Numbers())
	}
	return d
}

// IgnoresBudgets reports whether the eviction API deletes pod without a budget check:
// Pending, Succeeded or Failed, or already terminating.
func IgnoresBudgets(pod *corev1.Pod) bool {
	switch pod.Status.Phase {
	case corev1.PodPending, corev1.PodSucceeded, corev1.PodFailed:
		return true
	}
	return pod.DeletionTimestamp != nil
}

// PodReady reports the pod's Ready condition, the server's notion of healthy.
func PodReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func phaseWord(pod *corev1.Pod) string {
	if pod.DeletionTimestamp != nil {
		return "already terminating"
	}
	return string(pod.Status.Phase)
}

package pdb

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Budget is a PodDisruptionBudget with its parsed selector.
type Budget struct {
	// PDB is the budget as last seen. NEVER modify it: it is shared with an informer store.
	PDB      *policyv1.PodDisruptionBudget
	selector labels.Selector
}

// Key is "namespace/name".
func (b *Budget) Key() string { return b.PDB.Namespace + "/" + b.PDB.Name }

// Stale reports whether the status has not caught up with the spec yet; the API server
// then refuses evictions with 429 and Retry-After 10.
func (b *Budget) Stale() bool { return b.PDB.Status.ObservedGeneration < b.PDB.Generation }

// Allowed is the number of disruptions the status allows now.
func (b *Budget) Allowed() int32 { return b.PDB.Status.DisruptionsAllowed }

// Steady is what the budget allows once every pod it expects is healthy again
// (expectedPods - desiredHealthy): the allowance a drain gets back after each wave of
// replacements becomes Ready.
func (b *Budget) Steady() int32 {
	s := b.PDB.Status
	return max(0, s.ExpectedPods-s.DesiredHealthy)
}

// NeverAllows tells whether the budget can never allow a disruption, however healthy its
// pods are, and why: maxUnavailable 0 or 0%, minAvailable 100%, or minAvailable at or
// above the number of pods it expects.
func (b *Budget) NeverAllows() (bool, string) {
	spec, st := b.PDB.Spec, b.PDB.Status
	if mu := spec.MaxUnavailable; mu != nil && isZero(*mu) {
		return true, fmt.Sprintf("pdb %s has maxUnavailable %s: it never allows a disruption", b.Key(), mu.String())
	}
	if ma := spec.MinAvailable; ma != nil && ma.Type == intstr.String && ma.StrVal == "100%" {
		return true, fmt.Sprintf("pdb %s has minAvailable 100%%: it never allows a disruption", b.Key())
	}
	if !b.Stale() && st.ExpectedPods > 0 && st.DesiredHealthy >= st.ExpectedPods {
		return true, fmt.Sprintf("pdb %s needs %d healthy pods and expects only %d: it never allows a disruption (scale the workload up or relax the budget)",
			b.Key(), st.DesiredHealthy, st.ExpectedPods)
	}
	return false, ""
}

func isZero(v intstr.IntOrString) bool {
	if v.Type == intstr.Int {
		return v.IntVal == 0
	}
	s := strings.TrimSuffix(strings.TrimSpace(v.StrVal), "%")
	return s == "0"
}

// AlwaysAllowsUnhealthy reports unhealthyPodEvictionPolicy: AlwaysAllow.
func (b *Budget) AlwaysAllowsUnhealthy() bool {
	p := b.PDB.Spec.UnhealthyPodEvictionPolicy
	return p != nil && *p == policyv1.AlwaysAllow
}

// Numbers renders the status the way the server's 429 message does:
// "needs 2 healthy pods and has 2".
func (b *Budget) Numbers() string {
	s := b.PDB.Status
	return fmt.Sprintf("needs %d healthy pods, has %d, allows %d", s.DesiredHealthy, s.CurrentHealthy, s.DisruptionsAllowed)
}

// Index finds the budgets that select a pod.
type Index struct {
	byNS  map[string][]*Budget
	byKey map[string]*Budget
}

// NewIndex indexes pdbs. A PDB with an invalid selector is skipped, as the API server
// skips it when it decides an eviction.
func NewIndex(pdbs []*policyv1.PodDisruptionBudget) *Index {
	ix := &Index{byNS: map[string][]*Budget{}, byKey: map[string]*Budget{}}
	for _, p := range pdbs {
		sel, err := metav1.LabelSelectorAsSelector(p.Spec.Selector)
		if err != nil {
			continue
		}
		b := &Budget{PDB: p, selector: sel}
		ix.byNS[p.Namespace] = append(ix.byNS[p.Namespace], b)
		ix.byKey[b.Key()] = b
	}
	for _, bs := range ix.byNS {
		sort.Slice(bs, func(i, j int) bool { return bs[i].PDB.Name < bs[j].PDB.Name })
	}
	return ix
}

// For returns the budgets that select pod, sorted by name.
func (ix *Index) For(pod *corev1.Pod) []*Budget {
	var out []*Budget
	set := labels.Set(pod.Labels)
	for _, b := range ix.byNS[pod.Namespace] {
		if b.selector.Matches(set) {
			out = append(out, b)
		}
	}
	return out
}

// Get returns the budget with key "namespace/name", or nil.
func (ix *Index) Get(key string) *Budget { return ix.byKey[key] }

// All returns every indexed budget, sorted by key.
func (ix *Index) All() []*Budget {
	out := make([]*Budget, 0, len(ix.byKey))
	for _, b := range ix.byKey {
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key() < out[j].Key() })
	return out
}

// JoinKeys returns the keys of budgets joined with commas ("ns/a,ns/b"), for machine
// output and comparisons.
func JoinKeys(bs []*Budget) string {
	keys := make([]string, len(bs))
	for i, b := range bs {
		keys[i] = b.Key()
	}
	return strings.Join(keys, ",")
}

// Keys returns the keys of budgets, joined for messages: "ns/a and ns/b".
func Keys(bs []*Budget) string {
	keys := make([]string, len(bs))
	for i, b := range bs {
		keys[i] = "pdb " + b.Key()
	}
	switch len(keys) {
	case 0:
		return ""
	case 1:
		return keys[0]
	}
	return strings.Join(keys[:len(keys)-1], ", ") + " and " + keys[len(keys)-1]
}

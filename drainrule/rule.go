package drainrule

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Behavior is what a drain does with a pod a rule matches (Cluster API's
// MachineDrainRuleDrainBehavior).
type Behavior string

// Behaviors.
const (
	// Drain evicts the pod, in its rule's order group.
	Drain Behavior = "Drain"
	// Skip leaves the pod on the node; the node's drain does not wait for it.
	Skip Behavior = "Skip"
	// WaitCompleted never evicts the pod; the node counts as drained once it has
	// completed (Succeeded or Failed) or is gone.
	WaitCompleted Behavior = "WaitCompleted"
)

// LabelDrain is Cluster API's pod label: its value (case-insensitive) "skip" or
// "wait-completed" ("waitcompleted" too) wins over every rule.
const LabelDrain = "cluster.x-k8s.io/drain"

// Rule is one drain rule in the shape of a Maintenance's spec.drain.order and of
// --drain-order-file: the pods Selector and NamespaceSelector both match (nil or empty
// matches all) are drained in group Order, or handled as Behavior says.
type Rule struct {
	// Name names the rule in plans and messages (optional).
	Name string `json:"name,omitempty"`
	// Selector selects pods by their labels; nil or empty selects every pod.
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
	// NamespaceSelector selects pods by their namespace's labels; nil or empty selects
	// every namespace.
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`
	// Order is the pod's order group when Behavior is Drain (default 0): groups go in
	// ascending order, each once every pod of the groups before it is gone.
	Order *int32 `json:"order,omitempty"`
	// Behavior is Drain (the default), Skip or WaitCompleted.
	Behavior Behavior `json:"behavior,omitempty"`
}

// PodSelector is one entry of a MachineDrainRule's spec.pods: both selectors must match.
type PodSelector struct {
	Selector, NamespaceSelector labels.Selector
}

// compiled is a rule ready to match.
type compiled struct {
	source   string // "rule NAME", "MachineDrainRule NAME"
	pods     []PodSelector
	behavior Behavior
	order    int32
}

// Verdict is what the rules say of one pod.
type Verdict struct {
	// Behavior is Drain, Skip or WaitCompleted.
	Behavior Behavior
	// Order is the pod's order group (Drain only).
	Order int32
	// Source names what decided: the label, a rule, a MachineDrainRule; "" for the default.
	Source string
}

// Set is a compiled list of rules: the run's own rules, then the MachineDrainRules sorted
// by name. The zero Set (and a nil *Set) matches nothing: every pod is drained in order 0.
type Set struct {
	own, machine []compiled
	namespaces   map[string]labels.Set
}

// Compile validates rules (the run's own, in the order given) and returns their Set.
func Compile(rules []Rule) (*Set, error) {
	s := &Set{}
	for i, r := range rules {
		c, err := compile(r)
		if err != nil {
			name := r.Name
			if name == "" {
				name = fmt.Sprintf("#%d", i+1)
			}
			return nil, fmt.Errorf("drain order rule %s: %w", name, err)
		}
		s.own = append(s.own, c)
	}
	return s, nil
}

func compile(r Rule) (compiled, error) {
	c := compiled{source: "drain order rule", behavior: r.Behavior}
	if r.Name != "" {
		c.source += " " + r.Name
	}
	if c.behavior == "" {
		c.behavior = Drain
	}
	switch c.behavior {
	case Drain:
		if r.Order != nil {
			c.order = *r.Order
		}
	case Skip, WaitCompleted:
		if r.Order != nil {
			return c, fmt.Errorf("order %d with behavior %s: an order applies to behavior Drain only", *r.Order, c.behavior)
		}
	default:
		return c, fmt.Errorf("unknown behavior %q (want Drain, Skip or WaitCompleted)", r.Behavior)
	}
	sel, err := selector(r.Selector)
	if err != nil {
		return c, fmt.Errorf("selector: %w", err)
	}
	nsSel, err := selector(r.NamespaceSelector)
	if err != nil {
		return c, fmt.Errorf("namespaceSelector: %w", err)
	}
	c.pods = []PodSelector{{Selector: sel, NamespaceSelector: nsSel}}
	return c, nil
}

func selector(ls *metav1.LabelSelector) (labels.Selector, error) {
	if ls == nil {
		return labels.Everything(), nil
	}
	s, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		return nil, fmt.Errorf("%w", err)
	}
	return s, nil
}

// WithMachineDrainRules returns a copy of s that also holds the MachineDrainRules mdrs,
// sorted by name, after the run's own rules.
func (s *Set) WithMachineDrainRules(mdrs []MachineDrainRule) *Set {
	out := &Set{}
	if s != nil {
		*out = *s
	}
	sorted := append([]MachineDrainRule(nil), mdrs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	out.machine = nil
	for _, m := range sorted {
		out.machine = append(out.machine, compiled{source: "MachineDrainRule " + m.Name, pods: m.Pods, behavior: m.Behavior, order: m.Order})
	}
	return out
}

// WithNamespaces returns a copy of s that matches namespace selectors against these
// namespaces' labels (a namespace not in the map has only its
// kubernetes.io/metadata.name label, as the API server sets it).
func (s *Set) WithNamespaces(nss []corev1.Namespace) *Set {
	out := &Set{}
	if s != nil {
		*out = *s
	}
	out.namespaces = make(map[string]labels.Set, len(nss))
	for _, ns := range nss {
		out.namespaces[ns.Name] = labels.Set(ns.Labels)
	}
	return out
}

// Empty reports whether s holds no rule (every pod is drained in order 0, unless its label
// says otherwise).
func (s *Set) Empty() bool { return s == nil || len(s.own)+len(s.machine) == 0 }

// NeedsNamespaces reports whether some rule selects namespaces by their labels (the caller
// then lists namespaces once and passes them to WithNamespaces).
func (s *Set) NeedsNamespaces() bool {
	if s == nil {
		return false
	}
	for _, c := range append(append([]compiled(nil), s.own...), s.machine...) {
		for _, p := range c.pods {
			if !p.NamespaceSelector.Empty() {
				return true
			}
		}
	}
	return false
}

// LabelBehavior reads the cluster.x-k8s.io/drain label's value as Cluster API reads it:
// case-insensitive, "skip", "wait-completed" or "waitcompleted". ok is false for any
// other value (the label then says nothing).
func LabelBehavior(v string) (b Behavior, ok bool) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "skip":
		return Skip, true
	case "wait-completed", "waitcompleted":
		return WaitCompleted, true
	}
	return "", false
}

// Match returns what the rules say of pod: its label first, then the run's own rules in
// order, then the MachineDrainRules by name; the first match wins; Drain in order 0 when
// nothing matches.
func (s *Set) Match(pod *corev1.Pod) Verdict {
	if b, ok := LabelBehavior(pod.Labels[LabelDrain]); ok {
		return Verdict{Behavior: b, Source: "label " + LabelDrain + "=" + pod.Labels[LabelDrain]}
	}
	if s.Empty() {
		return Verdict{Behavior: Drain}
	}
	nsLabels, ok := s.namespaces[pod.Namespace]
	if !ok {
		nsLabels = labels.Set{corev1.LabelMetadataName: pod.Namespace}
	}
	for _, list := range [][]compiled{s.own, s.machine} {
		for _, c := range list {
			if c.matches(labels.Set(pod.Labels), nsLabels) {
				return Verdict{Behavior: c.behavior, Order: c.order, Source: c.source}
			}
		}
	}
	return Verdict{Behavior: Drain}
}

// matches: no pod selector matches every pod; else one whose both selectors match.
func (c compiled) matches(pod, ns labels.Set) bool {
	if len(c.pods) == 0 {
		return true
	}
	for _, p := range c.pods {
		if p.Selector.Matches(pod) && p.NamespaceSelector.Matches(ns) {
			return true
		}
	}
	return false
}

// String says a verdict in a plan: "order -5", "wait-completed", "skip".
func (v Verdict) String() string {
	switch v.Behavior {
	case Skip:
		return "skip"
	case WaitCompleted:
		return "wait-completed"
	}
	return fmt.Sprintf("order %d", v.Order)
}

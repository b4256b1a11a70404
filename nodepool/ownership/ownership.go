package ownership

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
)

// RecordAnnotationPrefix + pool name is the node annotation in which a pool records exactly
// which labels and taints it applied (as Cluster API does), so that removing the pool
// removes those and nothing another owner set.
const RecordAnnotationPrefix = "nodepool.kubectl-maintenance.io/"

// Record is what one pool applied to one node.
type Record struct {
	Labels map[string]string `json:"labels,omitempty"`
	Taints []corev1.Taint    `json:"taints,omitempty"`
}

// RecordAnnotation is the annotation key of pool's record.
func RecordAnnotation(pool string) string { return RecordAnnotationPrefix + pool }

// Records returns every pool record on the node, by pool name.
func Records(n *corev1.Node) (map[string]Record, error) {
	out := map[string]Record{}
	for k, v := range n.Annotations {
		pool, ok := strings.CutPrefix(k, RecordAnnotationPrefix)
		if !ok || pool == "" {
			continue
		}
		var r Record
		if err := json.Unmarshal([]byte(v), &r); err != nil {
			return nil, fmt.Errorf("node %s: annotation %s is not a pool record: %w", n.Name, k, err)
		}
		out[pool] = r
	}
	return out, nil
}

// Desired is a node's labels, taints and annotations after a change; Changed says whether
// anything differs from the node.
type Desired struct {
	Labels      map[string]string
	Taints      []corev1.Taint
	Annotations map[string]*string // set, or nil to remove
	// Unschedulable, when set, is written too (a move's uncordon in the same patch).
	Unschedulable *bool
	Changed       bool
}

// ConflictError is a label or taint two owners want with different values.
type ConflictError struct {
	Node, Pool, Other, Key, Want, Have string
	// Recorded is the value the pool had applied, when the node's value was changed by
	// hand since: the key is no longer the pool's.
	Recorded *string
}

func (e *ConflictError) Error() string {
	if e.Recorded != nil {
		return fmt.Sprintf("node %s: %s was set to %q by pool %s and changed by hand to %q; the pool leaves it (it wants %q): set it back or change the pool",
			e.Node, e.Key, *e.Recorded, e.Pool, e.Have, e.Want)
	}
	if e.Other == "" {
		return fmt.Sprintf("node %s: pool %s wants %s=%s, but the node has %s=%s set outside any pool", e.Node, e.Pool, e.Key, e.Want, e.Key, e.Have)
	}
	return fmt.Sprintf("pools %s and %s conflict on node %s: %s wants %s=%s, %s applied %s=%s", e.Pool, e.Other, e.Node, e.Pool, e.Key, e.Want, e.Other, e.Key, e.Have)
}

// Usage marks a conflict as the user's input to fix.
func (e *ConflictError) Usage() bool { return true }

func taintID(t corev1.Taint) string { return t.Key + ":" + string(t.Effect) }

// PoolTaints converts the pool's taints to node taints.
func PoolTaints(p *v1alpha1.NodePool) []corev1.Taint {
	out := make([]corev1.Taint, 0, len(p.Spec.Taints))
	for _, t := range p.Spec.Taints {
		out = append(out, corev1.Taint{Key: t.Key, Value: t.Value, Effect: t.Effect})
	}
	return out
}

// PoolLabels is every label the pool puts on a member: its labels and its role label.
func PoolLabels(p *v1alpha1.NodePool) map[string]string {
	out := map[string]string{nodepool.RoleLabel(p.Name): ""}
	for k, v := range p.Spec.Labels {
		out[k] = string(v)
	}
	return out
}

// Compute returns the node as it must be after applying the pools in apply (full specs)
// and removing the pools named in remove. Only what a pool recorded is ever removed or
// changed; a label or taint set by hand or by another pool survives. Two owners wanting
// one key with different values is a ConflictError. Labels and taints are one algorithm
// over items (an id with a value: a label's key, a taint's key and effect).
func Compute(n *corev1.Node, apply []*v1alpha1.NodePool, remove []string) (*Desired, error) {
	recs, err := Records(n)
	if err != nil {
		return nil, err
	}
	c := &computation{node: n.Name, recs: recs, leaving: map[string]bool{},
		items: map[*kind]*items{labelKind: labelItems(n.Labels), taintKind: taintItems(n.Spec.Taints)}}
	for _, r := range remove {
		c.leaving[r] = true
	}
	d := &Desired{Annotations: map[string]*string{}}
	for _, pool := range remove {
		for _, k := range kinds {
			// Only what the pool recorded goes: a role label set before the pool existed
			// stays (its owner is whoever set it).
			c.drop(k, pool, nil)
		}
		if _, ok := n.Annotations[RecordAnnotation(pool)]; ok {
			d.Annotations[RecordAnnotation(pool)] = nil
		}
	}
	for _, p := range apply {
		var rec Record
		for _, k := range kinds {
			want := k.want(p)
			c.drop(k, p.Name, want)
			applied, err := c.apply(k, p.Name, want)
			if err != nil {
				return nil, err
			}
			k.record(&rec, applied)
		}
		b, err := json.Marshal(rec)
		if err != nil {
			return nil, fmt.Errorf("encode record of pool %s: %w", p.Name, err)
		}
		if s := string(b); n.Annotations[RecordAnnotation(p.Name)] != s {
			d.Annotations[RecordAnnotation(p.Name)] = &s
		}
	}
	d.Labels, d.Taints = c.items[labelKind].labels(), c.items[taintKind].taints()
	d.Changed = len(d.Annotations) > 0 || !sameLabels(n.Labels, d.Labels) || !sameTaints(n.Spec.Taints, d.Taints)
	return d, nil
}

// computation is one Compute: the node's items of each kind as they become, and the
// pools' records.
type computation struct {
	node    string
	recs    map[string]Record
	leaving map[string]bool
	items   map[*kind]*items
}

// drop removes what pool recorded of kind k and no longer wants, if still as it set it
// and no other pool that stays recorded it too.
func (c *computation) drop(k *kind, pool string, want map[string]item) {
	for id, v := range k.of(c.recs[pool]) {
		if _, still := want[id]; still {
			continue
		}
		if _, ov, ok := c.owner(k, id, pool); ok && ov == v.value {
			continue // kept by another pool
		}
		c.items[k].dropIf(id, v.value)
	}
}

// apply puts what pool wants of kind k on the node and returns what it applied (its
// record), or the conflict that stops it.
func (c *computation) apply(k *kind, pool string, want map[string]item) ([]item, error) {
	old := k.of(c.recs[pool])
	var applied []item
	for _, id := range sortedKeys(want) {
		w := want[id]
		other, ov, othersToo := c.owner(k, id, pool)
		if othersToo && ov != w.value {
			return nil, &ConflictError{Node: c.node, Pool: pool, Other: other, Key: k.key(id, false), Want: w.value, Have: ov}
		}
		cur, exists := c.items[k].get(id)
		recorded, ours := old[id]
		switch {
		case exists && !ours && k.firstOwner(id, pool):
			// The pool's own membership label was there before the pool applied anything
			// (any value): it stays whoever set it, and the pool never removes it.
			continue
		case ours && exists && cur.value != recorded.value:
			// The value the pool recorded was edited by hand: the item is no longer the
			// pool's (and a taint written next to it would be a duplicate the API
			// server refuses).
			rv := recorded.value
			return nil, &ConflictError{Node: c.node, Pool: pool, Key: k.key(id, true), Want: w.value, Have: cur.value, Recorded: &rv}
		case exists && !ours && !othersToo && cur.value != w.value:
			return nil, &ConflictError{Node: c.node, Pool: pool, Key: k.key(id, false), Want: w.value, Have: cur.value}
		case exists && !ours && !othersToo:
			continue // set by hand to the same value: it stays the hand's, not recorded
		}
		c.items[k].put(w)
		applied = append(applied, w)
	}
	return applied, nil
}

// owner is the first pool (by name) other than skip, and not leaving, that recorded id of
// kind k, with the value it recorded.
func (c *computation) owner(k *kind, id, skip string) (string, string, bool) {
	for _, pool := range sortedKeys(c.recs) {
		if pool == skip || c.leaving[pool] {
			continue
		}
		if v, ok := k.of(c.recs[pool])[id]; ok {
			return pool, v.value, true
		}
	}
	return "", "", false
}

func findTaint(ts []corev1.Taint, t corev1.Taint) (corev1.Taint, bool) {
	for _, x := range ts {
		if taintID(x) == taintID(t) {
			return x, true
		}
	}
	return corev1.Taint{}, false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func sameLabels(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if bv, ok := b[k]; !ok || bv != v {
			return false
		}
	}
	return true
}

func sameTaints(a, b []corev1.Taint) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if taintID(a[i]) != taintID(b[i]) || a[i].Value != b[i].Value {
			return false
		}
	}
	return true
}

// Diff renders the label and taint changes from n to d.
func Diff(n *corev1.Node, d *Desired) []string {
	var out []string
	for k, v := range n.Labels {
		if nv, ok := d.Labels[k]; !ok {
			out = append(out, fmt.Sprintf("-label %s=%s", k, v))
		} else if nv != v {
			out = append(out, fmt.Sprintf("~label %s=%s (was %s)", k, nv, v))
		}
	}
	for k, v := range d.Labels {
		if _, ok := n.Labels[k]; !ok {
			out = append(out, fmt.Sprintf("+label %s=%s", k, v))
		}
	}
	render := func(t corev1.Taint) string { return fmt.Sprintf("%s=%s:%s", t.Key, t.Value, t.Effect) }
	for _, t := range n.Spec.Taints {
		if x, ok := findTaint(d.Taints, t); !ok || x.Value != t.Value {
			out = append(out, "-taint "+render(t))
		}
	}
	for _, t := range d.Taints {
		if x, ok := findTaint(n.Spec.Taints, t); !ok || x.Value != t.Value {
			out = append(out, "+taint "+render(t))
		}
	}
	sort.Strings(out)
	return out
}

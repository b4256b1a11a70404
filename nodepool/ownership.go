package nodepool

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

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
	out := map[string]string{RoleLabel(p.Name): ""}
	for k, v := range p.Spec.Labels {
		out[k] = string(v)
	}
	return out
}

// Compute returns the node as it must be after applying the pools in apply (full specs)
// and removing the pools named in remove. Only what a pool recorded is ever removed or
// changed; a label or taint set by hand or by another pool survives. Two owners wanting
// one key with different values is a ConflictError.
func Compute(n *corev1.Node, apply []*v1alpha1.NodePool, remove []string) (*Desired, error) {
	recs, err := Records(n)
	if err != nil {
		return nil, err
	}
	d := &Desired{Labels: map[string]string{}, Annotations: map[string]*string{}}
	for k, v := range n.Labels {
		d.Labels[k] = v
	}
	d.Taints = append([]corev1.Taint(nil), n.Spec.Taints...)
	leaving := map[string]bool{}
	for _, r := range remove {
		leaving[r] = true
	}
	applying := map[string]bool{}
	for _, p := range apply {
		applying[p.Name] = true
	}
	// keptBy tells whether a pool that stays on the node (other than skip) recorded key=v.
	keptLabel := func(skip, key, v string) bool {
		for pool, r := range recs {
			if pool != skip && !leaving[pool] {
				if rv, ok := r.Labels[key]; ok && rv == v {
					return true
				}
			}
		}
		return false
	}
	keptTaint := func(skip string, t corev1.Taint) bool {
		for pool, r := range recs {
			if pool != skip && !leaving[pool] {
				for _, rt := range r.Taints {
					if taintID(rt) == taintID(t) && rt.Value == t.Value {
						return true
					}
				}
			}
		}
		return false
	}
	// dropOwned removes what a pool recorded and no longer wants, if still as it set it.
	dropOwned := func(pool string, old Record, wantLabels map[string]string, wantTaints map[string]corev1.Taint) {
		for k, v := range old.Labels {
			if _, still := wantLabels[k]; still {
				continue
			}
			if cur, ok := d.Labels[k]; ok && cur == v && !keptLabel(pool, k, v) {
				delete(d.Labels, k)
			}
		}
		for _, t := range old.Taints {
			if _, still := wantTaints[taintID(t)]; still || keptTaint(pool, t) {
				continue
			}
			d.Taints = removeTaint(d.Taints, t)
		}
	}
	for _, pool := range remove {
		// dropOwned removes the role label only if the pool recorded it: a role label
		// set before the pool existed stays (its owner is whoever set it).
		dropOwned(pool, recs[pool], nil, nil)
		if _, ok := n.Annotations[RecordAnnotation(pool)]; ok {
			d.Annotations[RecordAnnotation(pool)] = nil
		}
	}
	for _, p := range apply {
		old := recs[p.Name]
		want := PoolLabels(p)
		wantTaints := map[string]corev1.Taint{}
		for _, t := range PoolTaints(p) {
			wantTaints[taintID(t)] = t
		}
		dropOwned(p.Name, old, want, wantTaints)
		rec := Record{Labels: map[string]string{}}
		keys := sortedKeys(want)
		for _, k := range keys {
			v := want[k]
			if other, ov, ok := ownerOf(recs, k, p.Name, leaving); ok && ov != v {
				return nil, &ConflictError{Node: n.Name, Pool: p.Name, Other: other, Key: k, Want: v, Have: ov}
			}
			cur, exists := d.Labels[k]
			recorded, ours := old.Labels[k]
			_, othersToo := ownerOfAny(recs, k, p.Name, leaving)
			switch {
			case k == RoleLabel(p.Name) && exists && !ours:
				// The membership label was there before the pool applied anything
				// (any value): it stays whoever set it, and the pool never removes it.
				continue
			case ours && exists && cur != recorded:
				return nil, &ConflictError{Node: n.Name, Pool: p.Name, Key: "label " + k, Want: v, Have: cur, Recorded: &recorded}
			case exists && cur != v && !ours && !othersToo:
				return nil, &ConflictError{Node: n.Name, Pool: p.Name, Key: k, Want: v, Have: cur}
			case exists && cur == v && !ours && !othersToo:
				// Set by hand to the same value: it stays the hand's, not recorded.
				continue
			}
			d.Labels[k] = v
			rec.Labels[k] = v
		}
		for _, id := range sortedTaintIDs(wantTaints) {
			t := wantTaints[id]
			if other, ot, ok := taintOwnerOf(recs, t, p.Name, leaving); ok && ot.Value != t.Value {
				return nil, &ConflictError{Node: n.Name, Pool: p.Name, Other: other, Key: "taint " + id, Want: t.Value, Have: ot.Value}
			}
			cur, exists := findTaint(d.Taints, t)
			ours := hasTaint(old.Taints, t)
			_, _, othersToo := taintOwnerOf(recs, t, p.Name, leaving)
			if rv := old.taint(t).Value; ours && exists && cur.Value != rv {
				// The value the pool recorded was edited by hand: the taint is no longer
				// the pool's. Writing the pool's next to it would be a duplicate (key,
				// effect), which the API server refuses (422).
				return nil, &ConflictError{Node: n.Name, Pool: p.Name, Key: "taint " + id, Want: t.Value, Have: cur.Value, Recorded: &rv}
			}
			switch {
			case exists && cur.Value != t.Value && !ours && !othersToo:
				return nil, &ConflictError{Node: n.Name, Pool: p.Name, Key: "taint " + id, Want: t.Value, Have: cur.Value}
			case exists && cur.Value == t.Value && !ours && !othersToo:
				continue
			}
			if ours {
				d.Taints = removeTaint(d.Taints, old.taint(t)) // the value it had set
			}
			d.Taints = removeTaint(d.Taints, t)
			d.Taints = append(d.Taints, t)
			rec.Taints = append(rec.Taints, t)
		}
		b, err := json.Marshal(rec)
		if err != nil {
			return nil, fmt.Errorf("encode record of pool %s: %w", p.Name, err)
		}
		s := string(b)
		if n.Annotations[RecordAnnotation(p.Name)] != s {
			d.Annotations[RecordAnnotation(p.Name)] = &s
		}
	}
	d.Changed = len(d.Annotations) > 0 || !sameLabels(n.Labels, d.Labels) || !sameTaints(n.Spec.Taints, d.Taints)
	return d, nil
}

func ownerOf(recs map[string]Record, key, skip string, leaving map[string]bool) (string, string, bool) {
	for _, pool := range sortedKeys(recs) {
		if pool == skip || leaving[pool] {
			continue
		}
		if v, ok := recs[pool].Labels[key]; ok {
			return pool, v, true
		}
	}
	return "", "", false
}

func ownerOfAny(recs map[string]Record, key, skip string, leaving map[string]bool) (string, bool) {
	p, _, ok := ownerOf(recs, key, skip, leaving)
	return p, ok
}

func taintOwnerOf(recs map[string]Record, t corev1.Taint, skip string, leaving map[string]bool) (string, corev1.Taint, bool) {
	for _, pool := range sortedKeys(recs) {
		if pool == skip || leaving[pool] {
			continue
		}
		for _, rt := range recs[pool].Taints {
			if taintID(rt) == taintID(t) {
				return pool, rt, true
			}
		}
	}
	return "", corev1.Taint{}, false
}

func findTaint(ts []corev1.Taint, t corev1.Taint) (corev1.Taint, bool) {
	for _, x := range ts {
		if taintID(x) == taintID(t) {
			return x, true
		}
	}
	return corev1.Taint{}, false
}

func hasTaint(ts []corev1.Taint, t corev1.Taint) bool {
	_, ok := findTaint(ts, t)
	return ok
}

// removeTaint drops the taint with t's key and effect, if its value is t's.
func removeTaint(ts []corev1.Taint, t corev1.Taint) []corev1.Taint {
	out := ts[:0:0]
	for _, x := range ts {
		if taintID(x) == taintID(t) && x.Value == t.Value {
			continue
		}
		out = append(out, x)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func sortedTaintIDs(m map[string]corev1.Taint) []string { return sortedKeys(m) }

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

// taint returns the recorded taint with t's key and effect (t itself if none).
func (r Record) taint(t corev1.Taint) corev1.Taint {
	if x, ok := findTaint(r.Taints, t); ok {
		return x
	}
	return t
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

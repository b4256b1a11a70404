package ownership

import (
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
)

// item is one label or taint: its id (a label's key; a taint's key and effect) and its
// value; a taint keeps the taint itself (its timeAdded too).
type item struct {
	id, value string
	taint     corev1.Taint
}

// items are a node's labels or taints as a Compute changes them, in the node's order.
type items struct{ list []item }

func (s *items) get(id string) (item, bool) {
	for _, it := range s.list {
		if it.id == id {
			return it, true
		}
	}
	return item{}, false
}

// put sets an item, last (a pool's taint goes after the others, as it always has).
func (s *items) put(it item) {
	s.list = append(slices.DeleteFunc(s.list, func(x item) bool { return x.id == it.id }), it)
}

// dropIf removes the item id if its value is still value.
func (s *items) dropIf(id, value string) {
	s.list = slices.DeleteFunc(s.list, func(x item) bool { return x.id == id && x.value == value })
}

func labelItems(m map[string]string) *items {
	s := &items{}
	for _, k := range sortedKeys(m) {
		s.list = append(s.list, item{id: k, value: m[k]})
	}
	return s
}

func taintItems(ts []corev1.Taint) *items {
	s := &items{}
	for _, t := range ts {
		s.list = append(s.list, taintItem(t))
	}
	return s
}

func taintItem(t corev1.Taint) item { return item{id: taintID(t), value: t.Value, taint: t} }

func (s *items) labels() map[string]string {
	out := make(map[string]string, len(s.list))
	for _, it := range s.list {
		out[it.id] = it.value
	}
	return out
}

func (s *items) taints() []corev1.Taint {
	out := make([]corev1.Taint, 0, len(s.list))
	for _, it := range s.list {
		out = append(out, it.taint)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// kind is what differs between labels and taints; the algorithm is Compute's.
type kind struct {
	// of is what a record holds of the kind, by id.
	of func(Record) map[string]item
	// want is what a pool wants of the kind, by id.
	want func(*v1alpha1.NodePool) map[string]item
	// record writes what a pool applied into its record.
	record func(*Record, []item)
	// firstOwner reports an item that whoever set it before the pool keeps (a pool's
	// own role label).
	firstOwner func(id, pool string) bool
	// key names the item in a ConflictError (handEdited: a recorded value changed by hand).
	key func(id string, handEdited bool) string
}

var (
	labelKind = &kind{
		of: func(r Record) map[string]item {
			out := map[string]item{}
			for k, v := range r.Labels {
				out[k] = item{id: k, value: v}
			}
			return out
		},
		want: func(p *v1alpha1.NodePool) map[string]item {
			out := map[string]item{}
			for k, v := range PoolLabels(p) {
				out[k] = item{id: k, value: v}
			}
			return out
		},
		record: func(r *Record, applied []item) {
			for _, it := range applied {
				if r.Labels == nil {
					r.Labels = map[string]string{}
				}
				r.Labels[it.id] = it.value
			}
		},
		firstOwner: func(id, pool string) bool { return id == nodepool.RoleLabel(pool) },
		key: func(id string, handEdited bool) string {
			if handEdited {
				return "label " + id
			}
			return id
		},
	}
	taintKind = &kind{
		of: func(r Record) map[string]item {
			out := map[string]item{}
			for _, t := range r.Taints {
				out[taintID(t)] = taintItem(t)
			}
			return out
		},
		want: func(p *v1alpha1.NodePool) map[string]item {
			out := map[string]item{}
			for _, t := range PoolTaints(p) {
				out[taintID(t)] = taintItem(t)
			}
			return out
		},
		record: func(r *Record, applied []item) {
			for _, it := range applied {
				r.Taints = append(r.Taints, it.taint)
			}
		},
		firstOwner: func(string, string) bool { return false },
		key:        func(id string, _ bool) string { return "taint " + id },
	}
	kinds = []*kind{labelKind, taintKind}
)

package drain

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/drainrule"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

// Drain order groups (Cluster API's MachineDrainRule semantics): each pod to evict is in
// a group, its rule's order (default 0); a node's pods of a group are queued only once
// every pod of the groups before it is gone from the node. Critical pods (pdb.IsCritical)
// stay behind every ordinary pod of the node, each group of them in its order.

// ReasonOrderGroup is the Reason of the EventEvictionBlocked of a pod held back until an
// earlier order group is gone.
const ReasonOrderGroup = "OrderGroup"

// lowest is the first group of pending (ok false when none is pending).
func lowest(pending []group) (low group, ok bool) {
	for i, g := range pending {
		if i == 0 || g.less(low) {
			low = g
		}
	}
	return low, len(pending) > 0
}

// loadOrder compiles the run's drain rules: its own (Config.DrainOrder), then Cluster
// API's MachineDrainRules when the API server serves them (one discovery, one list; a
// refused list is a warning), and, when a rule selects namespaces, the namespaces' labels
// (one list).
func (e *Engine) loadOrder(ctx context.Context) (*drainrule.Set, string, error) {
	set, err := drainrule.Compile(e.cfg.DrainOrder)
	if err != nil {
		return nil, "", &ConfigError{msg: err.Error()}
	}
	var warning string
	if !e.cfg.IgnoreMachineDrainRules {
		mdrs, w, err := drainrule.LoadMachineDrainRules(ctx, e.cfg.Client.Discovery())
		if err != nil {
			return nil, "", fmt.Errorf("drain order: %w", err)
		}
		warning = w
		set = set.WithMachineDrainRules(mdrs)
	}
	if set.NeedsNamespaces() {
		l, err := e.cfg.Client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		switch {
		case apierrors.IsForbidden(err):
			// Each namespace then has only its name label (kubernetes.io/metadata.name).
			warning = strings.TrimPrefix(warning+"; ", "; ") + fmt.Sprintf("cannot list namespaces (%v): drain rules' namespace selectors see only each namespace's name label", err)
		case err != nil:
			return nil, "", fmt.Errorf("drain order: list namespaces: %w", err)
		default:
			set = set.WithNamespaces(l.Items)
		}
	}
	return set, warning, nil
}

// orderRules are the rules of the plan or run in progress (nil: none).
func (e *Engine) orderRules() *drainrule.Set { return e.rules.Load() }

// groupOf is st's pod's order group.
func (e *Engine) groupOf(st *podState) group {
	return group{critical: pdb.IsCritical(st.pod), order: e.orderRules().Match(st.pod).Order}
}

// releaseGroupsLocked queues the node's held-back pods of the lowest group any pod of the
// node still pending is in, and says, for each pod still held back, which group it waits
// for (once per group it waits for).
func (r *run) releaseGroupsLocked(ns *nodeState) {
	if len(ns.heldBack) == 0 {
		return
	}
	var pending []group
	for _, st := range ns.byUID {
		if st.phase != finished {
			pending = append(pending, st.group)
		}
	}
	low, ok := lowest(pending)
	left := 0
	for _, g := range pending {
		if g == low {
			left++
		}
	}
	// Pods recreated under their names (StatefulSets) go first, while the disruption
	// controller's queue is short: sent behind the rest, their entries wait behind the
	// rest's, and a replacement may take the name first (a 2-minute hold; pace.go).
	keep := ns.heldBack[:0]
	var after []*podState
	for _, st := range ns.heldBack {
		switch {
		case ok && st.group != low:
			keep = append(keep, st)
		case r.e.cfg.PaceMargin >= 0 && recreatedUnderItsName(st.pod):
			r.add(st.key)
		default:
			after = append(after, st)
		}
	}
	for _, st := range after {
		r.add(st.key)
	}
	ns.heldBack = keep
	sort.Slice(ns.heldBack, func(i, j int) bool { return ns.heldBack[i].key < ns.heldBack[j].key })
	for _, st := range ns.heldBack {
		if st.waitsFor == low && st.waitsForSaid {
			continue
		}
		st.waitsFor, st.waitsForSaid = low, true
		if st.group.order == low.order {
			continue // a critical pod behind the ordinary ones of its group: said by no rule
		}
		r.e.emit(event.Event{Type: event.EventEvictionBlocked, Node: ns.name, Pod: st.key, Reason: ReasonOrderGroup,
			Message: fmt.Sprintf("waits for %s to finish: %d pod(s) left", low, left)})
	}
}

// orderPlan records in each node's plan the group or behavior of each of its pods when
// some rule, label or do-not-disrupt duration places one of them (nothing when every pod
// is in group 0): the pods to evict by group (critical ones last), then the pods kept.
func (e *Engine) orderPlan(plans map[string]*event.NodePlan, pods map[string][]*corev1.Pod, sink *ruleSink) {
	rules := e.orderRules()
	placed := map[string]bool{}
	for _, p := range sink.kept {
		placed[p.Spec.NodeName] = true
	}
	for _, p := range sink.doNotDisrupt {
		if until, _ := e.protected(p); !until.IsZero() {
			placed[p.Spec.NodeName] = true
		}
	}
	for node, ps := range pods {
		for _, p := range ps {
			if rules.Match(p).Order != 0 {
				placed[node] = true
			}
		}
	}
	type entry struct {
		g group
		o event.PodOrder
	}
	byNode := map[string][]entry{}
	for node, ps := range pods {
		if !placed[node] {
			continue
		}
		for _, p := range ps {
			v := rules.Match(p)
			byNode[node] = append(byNode[node], entry{g: group{critical: pdb.IsCritical(p), order: v.Order},
				o: event.PodOrder{Pod: p.Namespace + "/" + p.Name, Group: v.String(), Order: v.Order, Source: v.Source}})
		}
	}
	for _, p := range sink.doNotDisrupt {
		until, _ := e.protected(p)
		if until.IsZero() || !placed[p.Spec.NodeName] {
			continue
		}
		v := rules.Match(p)
		byNode[p.Spec.NodeName] = append(byNode[p.Spec.NodeName], entry{g: group{critical: pdb.IsCritical(p), order: v.Order},
			o: event.PodOrder{Pod: p.Namespace + "/" + p.Name, Group: "do-not-disrupt", Order: v.Order,
				Source: AnnotationDoNotDisrupt + "=" + p.Annotations[AnnotationDoNotDisrupt], Until: until}})
	}
	last := group{critical: true, order: 1<<31 - 1}
	for _, p := range sink.kept {
		v := rules.Match(p)
		byNode[p.Spec.NodeName] = append(byNode[p.Spec.NodeName], entry{g: last,
			o: event.PodOrder{Pod: p.Namespace + "/" + p.Name, Group: v.String(), Source: v.Source}})
	}
	for node, es := range byNode {
		np := plans[node]
		if np == nil {
			continue
		}
		sort.SliceStable(es, func(i, j int) bool {
			if es[i].g != es[j].g {
				return es[i].g.less(es[j].g)
			}
			return es[i].o.Pod < es[j].o.Pod
		})
		for _, en := range es {
			np.Order = append(np.Order, en.o)
		}
	}
}

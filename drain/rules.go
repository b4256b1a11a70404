package drain

import (
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
	kubectldrain "k8s.io/kubectl/pkg/drain"

	"github.com/kubectl-maintenance/kubectl-maintenance/drainrule"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

// Drain rules of the ecosystem, honoured through kubectl's pod filters
// (kubectldrain.Helper.AdditionalFilters) and in the plan.
const (
	// LabelCAPIDrain is Cluster API's pod label (MachineDrainRules): "skip" keeps the pod
	// (never evicted, listed as a warning); "wait-completed" keeps it and the node waits
	// until it has completed (Succeeded, Failed or gone) before it counts as drained.
	LabelCAPIDrain = "cluster.x-k8s.io/drain"
	// CAPIDrainSkip and CAPIDrainWaitCompleted are the values of LabelCAPIDrain, read as
	// Cluster API reads them: case-insensitive, "waitcompleted" too (drainrule.LabelBehavior).
	CAPIDrainSkip          = "skip"
	CAPIDrainWaitCompleted = "wait-completed"
	// AnnotationDoNotDisrupt is Karpenter's pod annotation: with "true" the pod is not
	// evicted and its node cannot finish draining (a blocker), unless
	// Config.IgnoreDoNotDisrupt; with a duration ("4h") only until that long after the
	// pod's start (donotdisrupt.go).
	AnnotationDoNotDisrupt = "karpenter.sh/do-not-disrupt"
)

// Reasons of the EventEvictionBlocked events of pods a rule keeps.
const (
	ReasonDoNotDisrupt  = "DoNotDisrupt"
	ReasonWaitCompleted = "WaitCompleted"
)

// VerdictDoNotDisrupt is the plan's verdict for a pod Karpenter's annotation protects.
const VerdictDoNotDisrupt pdb.Verdict = "DoNotDisrupt"

type rule int

const (
	ruleNone rule = iota
	ruleSkip
	ruleWaitCompleted
	ruleDoNotDisrupt
)

func completed(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// ruleOf tells which rule, if any, keeps p on its node: its cluster.x-k8s.io/drain label
// or a drain rule (Skip, WaitCompleted; drainrule), else Karpenter's do-not-disrupt while
// it protects the pod.
func (e *Engine) ruleOf(p *corev1.Pod) rule {
	switch e.orderRules().Match(p).Behavior {
	case drainrule.Skip:
		return ruleSkip
	case drainrule.WaitCompleted:
		return ruleWaitCompleted
	}
	if _, ok := e.protected(p); ok {
		return ruleDoNotDisrupt
	}
	return ruleNone
}

// selected reports whether p is part of the drain: --pod-selector selects it (every pod
// without one). A pod it does not select is not part of the drain at all, as in kubectl:
// its do-not-disrupt, drain rule or label holds no node.
func (e *Engine) selected(p *corev1.Pod) bool {
	if e.cfg.PodSelector == "" {
		return true
	}
	sel, err := labels.Parse(e.cfg.PodSelector) // validated by NewEngine
	return err == nil && sel.Matches(labels.Set(p.Labels))
}

// holds reports whether the rule keeps p's node from counting as drained.
func (e *Engine) holds(p *corev1.Pod) (rule, bool) {
	switch r := e.ruleOf(p); r {
	case ruleWaitCompleted:
		return r, !completed(p)
	case ruleDoNotDisrupt:
		return r, true
	}
	return ruleNone, false
}

// ruleSink collects, during a plan, the pods Karpenter's annotation protects and the pods
// drain rules keep (skip, wait-completed).
type ruleSink struct {
	doNotDisrupt []*corev1.Pod
	kept         []*corev1.Pod
}

// ruleFilter is kubectl's pod filter for the rules. sink may be nil.
func (e *Engine) ruleFilter(sink *ruleSink) kubectldrain.PodFilter {
	return func(p corev1.Pod) kubectldrain.PodDeleteStatus {
		switch e.ruleOf(&p) {
		case ruleSkip:
			if sink != nil {
				sink.kept = append(sink.kept, &p)
			}
			return kubectldrain.MakePodDeleteStatusWithWarning(false, "not evicting Pods with drain behavior skip (label "+LabelCAPIDrain+"=skip or a drain rule, Cluster API)")
		case ruleWaitCompleted:
			if completed(&p) {
				return kubectldrain.MakePodDeleteStatusSkip()
			}
			if sink != nil {
				sink.kept = append(sink.kept, &p)
			}
			return kubectldrain.MakePodDeleteStatusWithWarning(false, "not evicting Pods with drain behavior wait-completed (label "+LabelCAPIDrain+"=wait-completed or a drain rule, Cluster API), and the node waits for them to complete")
		case ruleDoNotDisrupt:
			if sink != nil {
				sink.doNotDisrupt = append(sink.doNotDisrupt, &p)
			}
			return kubectldrain.MakePodDeleteStatusSkip()
		}
		return kubectldrain.MakePodDeleteStatusOkay()
	}
}

func (e *Engine) doNotDisruptWhy(p *corev1.Pod) (cause, remedy string) {
	key := p.Namespace + "/" + p.Name
	remedy = fmt.Sprintf("remove the annotation (kubectl annotate pod -n NS NAME %s-), let the pod finish, or drain with --ignore-do-not-disrupt", AnnotationDoNotDisrupt)
	if until, _ := e.protected(p); !until.IsZero() {
		remedy = fmt.Sprintf("wait until %s, remove the annotation (kubectl annotate pod -n NS NAME %s-), or drain with --ignore-do-not-disrupt",
			until.UTC().Format(time.RFC3339), AnnotationDoNotDisrupt)
		return fmt.Sprintf("pod %s has %s: %q (Karpenter): it is not evicted until %s (that long after its start), so its node cannot finish draining before then",
			key, AnnotationDoNotDisrupt, p.Annotations[AnnotationDoNotDisrupt], until.UTC().Format(time.RFC3339)), remedy
	}
	return fmt.Sprintf("pod %s has %s: \"true\" (Karpenter): it is not evicted, so its node cannot finish draining", key, AnnotationDoNotDisrupt), remedy
}

func (e *Engine) waitCompletedWhy(p *corev1.Pod, node string) (cause, remedy string) {
	v := e.orderRules().Match(p)
	return fmt.Sprintf("pod %s is wait-completed (%s, Cluster API): it is not evicted; node %s counts as drained once it completes", p.Namespace+"/"+p.Name, v.Source, node),
		"wait for it to complete, or remove the label or rule to have it evicted"
}

// ruleSteps adds to each node's plan the pods Karpenter's annotation protects, as
// blockers (wave 0): the node cannot finish while they run (or, for a duration, before
// the time the cause says).
func (e *Engine) ruleSteps(plans map[string]*event.NodePlan, sink *ruleSink) {
	for _, p := range sink.doNotDisrupt {
		np := plans[p.Spec.NodeName]
		if np == nil {
			continue
		}
		cause, remedy := e.doNotDisruptWhy(p)
		np.Steps = append(np.Steps, pdb.Step{Pod: p, Decision: pdb.Decision{Verdict: VerdictDoNotDisrupt, Reason: cause},
			Blocker: cause, Cause: cause, Remedy: remedy})
	}
}

// heldPod is a pod a rule keeps on a node the run waits for. Guarded by run.mu.
type heldPod struct {
	node, key, reason string
	since, said       time.Time
	pod               *corev1.Pod
	// woken: a do-not-disrupt duration's end is awaited (wakeAt).
	woken bool
}

// holdLocked keeps ns from finishing while a pod on it is held by a rule (wait-completed
// not complete yet, do-not-disrupt), saying each such pod once (then every wait
// interval). It returns true when the node must wait.
func (r *run) holdLocked(ns *nodeState) bool {
	if ns.store == nil {
		return false
	}
	now := r.e.cfg.Clock.Now()
	held := false
	seen := map[string]bool{}
	for _, obj := range ns.store.List() {
		p := obj.(*corev1.Pod)
		if !r.e.selected(p) {
			continue // not part of the drain (--pod-selector, as kubectl): it holds nothing
		}
		if r.expiredLocked(ns, p) { // donotdisrupt.go
			held = true
			continue
		}
		ru, ok := r.e.holds(p)
		if !ok || p.Spec.NodeName != ns.name {
			continue
		}
		held = true
		key := p.Namespace + "/" + p.Name
		seen[key] = true
		if r.diag.held == nil {
			r.diag.held = map[string]*heldPod{}
		}
		if r.diag.held[key] != nil {
			continue
		}
		h := &heldPod{node: ns.name, key: key, reason: ReasonWaitCompleted, since: now, pod: p}
		if ru == ruleDoNotDisrupt {
			h.reason = ReasonDoNotDisrupt
			r.wakeAtLocked(ns, h)
		}
		r.diag.held[key] = h
		r.diag.sayHeldLocked(h, 0)
	}
	for key, h := range r.diag.held {
		if h.node == ns.name && !seen[key] {
			delete(r.diag.held, key)
		}
	}
	return held
}

func (wd *waitDiag) sayHeldLocked(h *heldPod, waited time.Duration) {
	bs := wd.b
	cause, remedy := bs.host.waitCompletedWhy(h.pod, h.node)
	if h.reason == ReasonDoNotDisrupt {
		cause, remedy = bs.host.doNotDisruptWhy(h.pod)
	}
	h.said = bs.cfg.Clock.Now()
	bs.emit(event.Event{Type: event.EventEvictionBlocked, Node: h.node, Pod: h.key, Reason: h.reason,
		Message: cause, Cause: cause, Remedy: remedy, Waited: waited})
}

// ruledPodChanged is the node informer's hook for the rules: a pod that lost its rule
// (the annotation or label removed) is looked at again through kubectl's filters, and a
// node waiting on held pods is checked again when one of them changes or goes.
func (r *run) ruledPodChanged(ns *nodeState, oldObj, obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	r.lock()
	defer r.unlock()
	if !ns.started || ns.finished || p.Spec.NodeName != ns.name {
		return
	}
	if old, ok := oldObj.(*corev1.Pod); ok && r.e.ruleOf(old) != ruleNone && r.e.ruleOf(p) == ruleNone {
		delete(ns.ignored, p.UID)
		r.lookLocked(ns)
		return
	}
	if r.diag.held[p.Namespace+"/"+p.Name] != nil && ns.remaining == 0 && !ns.looking {
		r.finishNodeLocked(ns)
	}
}

// heldBlockersLocked lists the pods rules hold, for the summary.
func (wd *waitDiag) heldBlockersLocked() []event.Blocker {
	bs := wd.b
	var out []event.Blocker
	for _, h := range wd.held {
		if bs.host.nodesLocked()[h.node] != nil && bs.host.nodesLocked()[h.node].finished {
			continue
		}
		cause, remedy := bs.host.waitCompletedWhy(h.pod, h.node)
		if h.reason == ReasonDoNotDisrupt {
			cause, remedy = bs.host.doNotDisruptWhy(h.pod)
		}
		out = append(out, event.Blocker{Node: h.node, Pod: h.key, Message: cause, Cause: cause, Remedy: remedy})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Pod < out[j].Pod })
	return out
}

// explainBlockersLocked adds to the summary's blockers the cause and remedy last said of
// each wait, and the pods rules hold.
func (wd *waitDiag) explainBlockersLocked(bs []event.Blocker) []event.Blocker {
	for i := range bs {
		if w := wd.waits[bs[i].Pod]; w != nil {
			bs[i].Cause, bs[i].Remedy = w.ev.Cause, w.ev.Remedy
		}
	}
	return append(bs, wd.heldBlockersLocked()...)
}

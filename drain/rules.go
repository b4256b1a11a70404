package drain

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	kubectldrain "k8s.io/kubectl/pkg/drain"

	"github.com/kubectl-maintenance/kubectl-maintenance/drainrule"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

// VerdictDoNotDisrupt is the plan's verdict for a pod Karpenter's annotation protects.
const VerdictDoNotDisrupt pdb.Verdict = "DoNotDisrupt"

const (
	ruleNone rule = iota
	ruleSkip
	ruleWaitCompleted
	ruleDoNotDisrupt
)

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

package drain

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Karpenter's karpenter.sh/do-not-disrupt with a duration (Karpenter PR #2874): "true"
// protects the pod for as long as it runs; a Go duration ("4h") protects it until that
// long after its start (status.startTime; its creation while it has none), after which it
// drains as any pod. Any other value protects nothing, as before durations.

// protected reports whether Karpenter's annotation keeps p from being evicted now, and
// until when (zero: for as long as it runs).
func (e *Engine) protected(p *corev1.Pod) (until time.Time, ok bool) {
	if e.cfg.IgnoreDoNotDisrupt || completed(p) {
		return time.Time{}, false
	}
	return protectedAt(p, e.cfg.Clock.Now)
}

// protectedAt is protected at now() (read only for a duration).
func protectedAt(p *corev1.Pod, now func() time.Time) (until time.Time, ok bool) {
	v, has := p.Annotations[AnnotationDoNotDisrupt]
	if !has {
		return time.Time{}, false
	}
	if v == "true" {
		return time.Time{}, true
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return time.Time{}, false
	}
	start := p.CreationTimestamp.Time
	if p.Status.StartTime != nil {
		start = p.Status.StartTime.Time
	}
	until = start.Add(d)
	return until, now().Before(until)
}

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

func completed(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

package drain

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
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

// wakeAtLocked looks at h's node again once the duration of h's do-not-disrupt ends (once
// per held pod): the pod is then evicted as any other.
func (r *run) wakeAtLocked(ns *nodeState, h *heldPod) {
	until, _ := r.e.protected(h.pod)
	if until.IsZero() || h.woken {
		return
	}
	h.woken = true
	d := until.Sub(r.e.cfg.Clock.Now())
	r.later(func() {
		r.goroutine(func() {
			select {
			case <-r.e.cfg.Clock.After(d):
			case <-r.ctx.Done():
				return
			}
			r.lock()
			defer r.unlock()
			if !ns.finished {
				r.lookLocked(ns)
			}
		})
	})
}

// expiredLocked catches a pod left out while its do-not-disrupt duration protected it
// whose duration has ended before its node could finish (the node's other pods took
// longer): the node is looked at again, once per pod, so that the pod is evicted instead
// of left behind. It reports whether it asked for that look.
func (r *run) expiredLocked(ns *nodeState, p *corev1.Pod) bool {
	if !ns.ignored[p.UID] || ns.expired[p.UID] || p.Spec.NodeName != ns.name || r.e.cfg.IgnoreDoNotDisrupt || completed(p) {
		return false
	}
	if until, _ := protectedAt(p, r.e.cfg.Clock.Now); until.IsZero() || r.e.cfg.Clock.Now().Before(until) {
		return false
	}
	if ns.expired == nil {
		ns.expired = map[types.UID]bool{}
	}
	ns.expired[p.UID] = true
	delete(ns.ignored, p.UID)
	r.lookLocked(ns)
	return true
}

package diagnose

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Reason is why a pod is not Ready, most actionable first.
type Reason int

// Reasons a pod is not Ready.
const (
	// Unschedulable: the scheduler found no node (PodScheduled=False).
	Unschedulable Reason = iota
	// ImagePull: a container's image cannot be pulled.
	ImagePull
	// CrashLoop: a container keeps crashing.
	CrashLoop
	// NotReadyYet: none of the above (starting, or failing its readiness probe).
	NotReadyYet
)

func (r Reason) remedy() string {
	switch r {
	case Unschedulable:
		return "give the replacements somewhere to run: uncordon a node, or add one that fits (the scheduler's message says what is missing)"
	case ImagePull:
		return "fix the replacements' image name or its pull secret"
	case CrashLoop:
		return "fix the crashing container (kubectl logs --previous shows why it exits)"
	}
	return "wait for the replacements to become Ready, or check their readiness probes and events (kubectl describe pod)"
}

// imagePull are the waiting reasons of a container whose image cannot be had.
var imagePull = map[string]bool{"ErrImagePull": true, "ImagePullBackOff": true, "InvalidImageName": true, "ErrImageNeverPull": true}

// WhyNotReady reads a pod's status: the scheduler's own message when it is unschedulable
// (PodScheduled=False), an image pull or crash loop from its containers' waiting state,
// and otherwise its phase.
func WhyNotReady(p *corev1.Pod) (Reason, string) {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			msg := c.Message
			if msg == "" {
				msg = c.Reason
			}
			return Unschedulable, "is unschedulable: " + msg
		}
	}
	statuses := append(append([]corev1.ContainerStatus(nil), p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...)
	for _, cs := range statuses {
		if w := cs.State.Waiting; w != nil && imagePull[w.Reason] {
			return ImagePull, fmt.Sprintf("cannot pull image %s (%s)", cs.Image, w.Reason)
		}
	}
	for _, cs := range statuses {
		if w := cs.State.Waiting; w != nil && w.Reason == "CrashLoopBackOff" {
			return CrashLoop, fmt.Sprintf("is in a crash loop (container %s restarted %d times)", cs.Name, cs.RestartCount)
		}
	}
	if p.Spec.NodeName == "" {
		return NotReadyYet, "is not scheduled yet"
	}
	return NotReadyYet, fmt.Sprintf("is not Ready (%s on node %s)", p.Status.Phase, p.Spec.NodeName)
}

// Tracker remembers since when each budget's status has disagreed with its pods, so that
// a disagreement is called stale only once it has lasted. The zero value is ready; it is
// not safe for concurrent use (the caller's lock guards it).
type Tracker struct {
	since map[string]time.Time
}

// Observe records whether the budget key disagrees now and returns for how long it has
// (0 when it agrees).
func (t *Tracker) Observe(key string, disagrees bool, now time.Time) time.Duration {
	if !disagrees {
		delete(t.since, key)
		return 0
	}
	if t.since == nil {
		t.since = map[string]time.Time{}
	}
	at, ok := t.since[key]
	if !ok {
		t.since[key] = now
		return 0
	}
	return now.Sub(at)
}

// Since returns for how long the budget key has disagreed, as last observed.
func (t *Tracker) Since(key string, now time.Time) time.Duration {
	if at, ok := t.since[key]; ok {
		return now.Sub(at)
	}
	return 0
}

// Forget drops what the tracker knows of key.
func (t *Tracker) Forget(key string) { delete(t.since, key) }

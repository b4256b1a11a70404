package drain

import (
	"slices"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

// defaultGracePeriod is the API server's default terminationGracePeriodSeconds.
const defaultGracePeriod = 30 * time.Second

// ReadyAfterStart is how long pod took to become Ready after its last start: from the
// latest start of a container that restarted, else from the pod's creation (scheduling,
// image pull, start and readiness probe: what a replacement goes through), to the last
// transition of its Ready condition. ok is false for a pod that is not Ready, or whose
// Ready transition is older than its last start (the status says nothing then).
func ReadyAfterStart(pod *corev1.Pod) (d time.Duration, ok bool) {
	var ready *corev1.PodCondition
	for i := range pod.Status.Conditions {
		if c := &pod.Status.Conditions[i]; c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			ready = c
		}
	}
	if ready == nil || ready.LastTransitionTime.IsZero() {
		return 0, false
	}
	start := pod.CreationTimestamp.Time
	for _, cs := range pod.Status.ContainerStatuses {
		if r := cs.State.Running; cs.RestartCount > 0 && r != nil && r.StartedAt.After(start) {
			start = r.StartedAt.Time
		}
	}
	if start.IsZero() || ready.LastTransitionTime.Time.Before(start) {
		return 0, false
	}
	return ready.LastTransitionTime.Sub(start), true
}

// EstimateETA estimates how long the drain of plan takes (see event.ETA). Wave k (k > 1)
// waits for the budget its pods wait on to recover: for the replacements of the earlier
// waves to become Ready, taken as the median ReadyAfterStart of the budget's pods in the
// plan. gracePeriodSeconds is the drain's --grace-period (negative: each pod's own); Max
// adds the longest of the last wave. A budget none of whose pods is Ready has no
// history: it is named in NoHistory and its wait is not guessed. Drain order groups add
// to Max, on each node, the grace period of each group the next one waits for (a pod
// usually stops well within it, so Expected is left as the waves make it).
func EstimateETA(plan *event.Plan, gracePeriodSeconds int) event.ETA {
	samples := map[string][]time.Duration{}
	for _, n := range plan.Nodes {
		for _, s := range n.Steps {
			d, ok := ReadyAfterStart(s.Pod)
			if !ok {
				continue
			}
			for _, b := range s.Decision.Budgets {
				samples[b.Key()] = append(samples[b.Key()], d)
			}
		}
	}
	waits := make([]time.Duration, plan.Waves+1) // the wait before each wave
	var eta event.ETA
	var lastGrace time.Duration
	for _, n := range plan.Nodes {
		for _, s := range n.Steps {
			if s.Wave == 0 {
				eta.Never++
			}
			if s.Wave == plan.Waves && s.Wave > 0 {
				lastGrace = max(lastGrace, grace(s.Pod, gracePeriodSeconds))
			}
			if s.Wave < 2 || s.WaitsOn == "" {
				continue
			}
			r, ok := median(samples[s.WaitsOn])
			if !ok {
				if !slices.Contains(eta.NoHistory, s.WaitsOn) {
					eta.NoHistory = append(eta.NoHistory, s.WaitsOn)
				}
				continue
			}
			waits[s.Wave] = max(waits[s.Wave], r)
		}
	}
	for _, w := range waits {
		eta.Expected += w
	}
	sort.Strings(eta.NoHistory)
	eta.Max = eta.Expected + lastGrace
	eta.Max += orderWait(plan, gracePeriodSeconds) // order groups, one after another (order.go)
	return eta
}

// grace is how long pod may take to stop when evicted.
func grace(pod *corev1.Pod, gracePeriodSeconds int) time.Duration {
	switch {
	case gracePeriodSeconds >= 0:
		return time.Duration(gracePeriodSeconds) * time.Second
	case pod.Spec.TerminationGracePeriodSeconds != nil:
		return time.Duration(*pod.Spec.TerminationGracePeriodSeconds) * time.Second
	}
	return defaultGracePeriod
}

// median is the middle of ds (the lower middle of an even count); ok is false when ds is
// empty.
func median(ds []time.Duration) (time.Duration, bool) {
	if len(ds) == 0 {
		return 0, false
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[(len(s)-1)/2], true
}

// orderWait is what the order groups add to a plan's ETA: on each node, every group but
// the last waits for the pods of the group before it to stop (the longest grace period of
// that group); nodes drain side by side, so the longest node's wait counts.
func orderWait(plan *event.Plan, gracePeriodSeconds int) time.Duration {
	var longest time.Duration
	for _, n := range plan.Nodes {
		pods := map[string]*corev1.Pod{}
		for _, s := range n.Steps {
			pods[s.Pod.Namespace+"/"+s.Pod.Name] = s.Pod
		}
		var total, groupMax time.Duration
		started := false
		var cur int32
		for _, o := range n.Order {
			p := pods[o.Pod]
			if p == nil || o.Group == "do-not-disrupt" || pdb.IsCritical(p) {
				continue
			}
			if started && o.Order != cur {
				total += groupMax
				groupMax = 0
			}
			started, cur = true, o.Order
			groupMax = max(groupMax, grace(p, gracePeriodSeconds))
		}
		longest = max(longest, total)
	}
	return longest
}

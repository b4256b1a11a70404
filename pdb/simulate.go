package pdb

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
)

// Step is one pod in a simulated drain.
type Step struct {
	Pod *corev1.Pod
	// Wave is 1 for pods that go at once, 2 for pods that go once the first wave's
	// replacements are Ready, and so on; 0 for pods that never go.
	Wave int
	// Decision is the verdict for the pod as the budgets stand now.
	Decision Decision
	// WaitsOn is the budget the pod waits for when Wave > 1 ("" otherwise).
	WaitsOn string
	// Blocker explains why the pod never goes (Wave 0).
	Blocker string
	// Cause and Remedy, when set, explain the wait and what to do (package diagnose).
	Cause, Remedy string
}

// Plan is a cumulative simulation of evicting a set of pods: each eviction consumes its
// budget, and a budget comes back to its steady allowance only when the evicted pods'
// replacements can run somewhere that is not being drained. A server dry-run cannot show
// this: it judges every pod against the same untouched budget.
type Plan struct {
	// Steps in eviction order: by wave, ordinary pods before critical ones.
	Steps []Step
	// Waves is the number of waves needed (0 when nothing goes).
	Waves int
}

// Blocked returns the steps that never go.
func (p Plan) Blocked() []Step {
	var out []Step
	for _, s := range p.Steps {
		if s.Wave == 0 {
			out = append(out, s)
		}
	}
	return out
}

// Replaceable tells whether an evicted pod's replacement can run on a node that is not
// being drained. The caller decides (see Placeable); nil means "always".
type Replaceable func(pod *corev1.Pod) bool

// Simulate plans the eviction of pods under the budgets in ix. Pods with a critical
// priority class go last, as they would in the engine.
func Simulate(pods []*corev1.Pod, ix *Index, replaceable Replaceable) Plan {
	ordered := append([]*corev1.Pod(nil), pods...)
	sort.SliceStable(ordered, func(i, j int) bool {
		ci, cj := IsCritical(ordered[i]), IsCritical(ordered[j])
		if ci != cj {
			return !ci
		}
		return ordered[i].Namespace+"/"+ordered[i].Name < ordered[j].Namespace+"/"+ordered[j].Name
	})
	steps := make([]Step, len(ordered))
	avail := map[string]int32{}
	// replaced[b] is false once a pod of budget b was evicted that can't be replaced:
	// the budget then never recovers during this drain.
	replaced := map[string]bool{}
	var pending []int
	for i, pod := range ordered {
		d := Decide(pod, ix.For(pod))
		steps[i] = Step{Pod: pod, Decision: d}
		switch {
		case d.Blocks():
			steps[i].Blocker = d.Reason
		case d.Verdict == IgnoresPDB || d.Verdict == NoPDB || d.Verdict == Unhealthy:
			steps[i].Wave = 1
		default:
			b := d.Budget()
			if _, ok := avail[b.Key()]; !ok {
				avail[b.Key()] = max(0, b.Allowed())
				if b.Stale() {
					avail[b.Key()] = 0
				}
				replaced[b.Key()] = true
			}
			pending = append(pending, i)
		}
	}
	waves := 0
	for _, s := range steps {
		if s.Wave == 1 {
			waves = 1
		}
	}
	for wave := 1; len(pending) > 0; wave++ {
		var next []int
		progressed := false
		for _, i := range pending {
			b := steps[i].Decision.Budget()
			key := b.Key()
			if avail[key] > 0 {
				avail[key]--
				steps[i].Wave = wave
				if wave > 1 {
					steps[i].WaitsOn = key
				}
				if replaceable != nil && !replaceable(steps[i].Pod) {
					replaced[key] = false
				}
				progressed = true
				waves = max(waves, wave)
				continue
			}
			next = append(next, i)
		}
		pending = next
		if len(pending) == 0 {
			break
		}
		// Between waves every budget whose evicted pods could be replaced returns to its
		// steady allowance.
		refilled := false
		for key := range avail {
			b := ix.Get(key)
			if replaced[key] && b.Steady() > 0 {
				avail[key] = b.Steady()
				refilled = true
			}
		}
		if !progressed && !refilled || wave > len(ordered)+1 {
			break
		}
	}
	for _, i := range pending {
		b := steps[i].Decision.Budget()
		steps[i].Wave = 0
		switch {
		case !replaced[b.Key()]:
			steps[i].Blocker = fmt.Sprintf("pdb %s can't recover: the replacements of its evicted pods have no node to run on outside the nodes being drained (%s)", b.Key(), b.Numbers())
		default:
			steps[i].Blocker = fmt.Sprintf("pdb %s does not recover its budget (%s)", b.Key(), b.Numbers())
		}
	}
	sort.SliceStable(steps, func(i, j int) bool {
		wi, wj := steps[i].Wave, steps[j].Wave
		if wi == 0 || wj == 0 {
			return wi != 0 && wj == 0
		}
		return wi < wj
	})
	return Plan{Steps: steps, Waves: waves}
}

// Critical priority classes: pods of these go last.
const (
	SystemClusterCritical = "system-cluster-critical"
	SystemNodeCritical    = "system-node-critical"
)

// IsCritical reports a pod with a system-cluster-critical or system-node-critical priority.
func IsCritical(pod *corev1.Pod) bool {
	pc := pod.Spec.PriorityClassName
	return pc == SystemClusterCritical || pc == SystemNodeCritical
}

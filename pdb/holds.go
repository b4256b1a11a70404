package pdb

import (
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// DeletionTimeout is how long the disruption controller keeps a budget's
// status.disruptedPods entry for a pod that is still there and not deleting: the
// constant of the same name in kube-controller-manager's disruption controller
// (k8s.io/kubernetes v1.36.3, pkg/controller/disruption/disruption.go). Until then the
// controller counts the pod by that name as disrupted, Ready or not.
const DeletionTimeout = 2 * time.Minute

// PodState is what hold detection needs of the pod that now carries a name: when it was
// created, whether it is deleting, and its UID (to tell a replacement from the pod the
// entry was written for).
type PodState struct {
	UID      types.UID
	Created  time.Time
	Deleting bool
	// OwnerKind is the kind of the pod's controller (StatefulSet), for the wait line.
	OwnerKind string
}

// StateOf is p as hold detection sees it.
func StateOf(p *corev1.Pod) PodState {
	st := PodState{UID: p.UID, Created: p.CreationTimestamp.Time, Deleting: p.DeletionTimestamp != nil}
	if ref := metav1.GetControllerOf(p); ref != nil {
		st.OwnerKind = ref.Kind
	}
	return st
}

// Hold is a budget's disruptedPods entry that the disruption controller keeps against a
// replacement: the pod the entry was written for is gone, and a new pod with the same
// name (a StatefulSet's, or any owner that reuses names) is counted as disrupted until
// Until, whatever its readiness. The budget allows one disruption fewer until then.
type Hold struct {
	// Pod is the name the entry and the replacement share; UID and OwnerKind are the
	// replacement's.
	Pod       string
	UID       types.UID
	OwnerKind string
	// Since is the time the API server recorded the eviction (the entry's value), Until
	// the moment the controller drops the entry: Since + DeletionTimeout.
	Since, Until time.Time
}

// String is the wait line's reason, the end in UTC as the wait lines say times.
func (h Hold) String() string {
	what := "a replacement"
	if h.OwnerKind != "" {
		what = "a " + h.OwnerKind + " replacement"
	}
	return fmt.Sprintf("held by the disruption controller until %s: %s with the same name (DeletionTimeout)",
		h.Until.UTC().Format("15:04:05Z"), what)
}

// Holds are the holds among a budget's status.disruptedPods (pod name → time the API
// server recorded the eviction), given the pods that now carry those names (the budget's
// pods by name; pass at least the names in the map). An entry (name, t) is a hold when
// the pod by that name was created after t and is not deleting: the pod the eviction was
// for has gone and a replacement took its name, which the controller matches by name only
// (buildDisruptedPodMap), so it keeps the entry until t + DeletionTimeout. An entry whose
// pod is absent or deleting is no hold (the controller drops it at its next sync); one
// whose pod was created at or before t is an eviction in flight (the pod is about to
// go). Timestamps in the API have a resolution of one second, so a replacement created in
// the very second of the eviction is taken as the evicted pod (no hold): it cannot happen
// when a pod takes a second or more to terminate. Entries past t + DeletionTimeout at now
// are dropped by the controller and are no hold either. Holds are sorted by Until, then
// name.
func Holds(disrupted map[string]metav1.Time, pods map[string]PodState, now time.Time) []Hold {
	var out []Hold
	for name, t := range disrupted {
		p, ok := pods[name]
		if !ok || !Replaced(t.Time, p) {
			continue
		}
		since := t.Time
		until := since.Add(DeletionTimeout)
		if until.Before(now) {
			continue
		}
		out = append(out, Hold{Pod: name, UID: p.UID, OwnerKind: p.OwnerKind, Since: since, Until: until})
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Until.Equal(out[j].Until) {
			return out[i].Until.Before(out[j].Until)
		}
		return out[i].Pod < out[j].Pod
	})
	return out
}

// Replaced says whether p, the pod that now carries a name, replaced the pod a
// disruptedPods entry of that name written at t was for: p is not deleting and was
// created in a later second than t (the API's timestamps have a resolution of one
// second, and a name belongs to one pod at a time, so the pod the entry was written for
// was gone before p was created). The definition of a hold (Holds) and the one test of
// the opt-in remedy that removes such an entry (drain's Settings.ClearHolds).
func Replaced(t time.Time, p PodState) bool {
	return !p.Deleting && p.Created.Truncate(time.Second).After(t.Truncate(time.Second))
}

// HoldsOf is Holds on a budget's status.
func HoldsOf(b *policyv1.PodDisruptionBudget, pods map[string]PodState, now time.Time) []Hold {
	if b == nil {
		return nil
	}
	return Holds(b.Status.DisruptedPods, pods, now)
}

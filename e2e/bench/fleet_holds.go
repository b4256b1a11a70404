package bench

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/bench/floor"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

// The disruption controller as the watches show it: its holds (pdb.Holds, the definition
// the engine uses too) and its status writes (floor.ByController), kept by the observer.
//
// A hold is looked for whenever either side changes: a budget's status (its entries
// against the pods the watch saw by those names) and a pod (its name against the last
// status of every budget of its namespace that lists it). The two watches are not
// ordered with each other, so a budget's status that arrives more than a pod's
// termination late could show a hold the controller never made; the bench's pods take a
// second or more to terminate (a StatefulSet's several: see FleetProfile.StsDeleteDelay).

// holdWatch is the observer's state for holds and controller writes (guarded by its mu).
type holdWatch struct {
	// pods are the pods seen, by namespace/name (the last one with that name).
	pods map[string]pdb.PodState
	// latest is each budget's last status.disruptedPods, by namespace, then budget.
	latest map[string]map[string]map[string]metav1.Time
	// found are the holds found, by namespace/budget/pod/since.
	found map[string]pdb.Hold
	// writes are the times of the disruption controller's status writes.
	writes []time.Time
}

func newHoldWatch() holdWatch {
	return holdWatch{pods: map[string]pdb.PodState{}, latest: map[string]map[string]map[string]metav1.Time{}, found: map[string]pdb.Hold{}}
}

// seePod records a pod's state and looks for a hold on its name. Called with o.mu held.
func (o *observer) seePod(p *corev1.Pod, deleted bool, now time.Time) {
	key := p.Namespace + "/" + p.Name
	if deleted {
		if cur, ok := o.hw.pods[key]; ok && cur.UID == p.UID {
			delete(o.hw.pods, key)
		}
		return
	}
	st := pdb.StateOf(p)
	o.hw.pods[key] = st
	if st.Deleting {
		return
	}
	for budget, entries := range o.hw.latest[p.Namespace] {
		if t, ok := entries[p.Name]; ok {
			o.findHolds(p.Namespace, budget, map[string]metav1.Time{p.Name: t}, now)
		}
	}
}

// seeBudget records a budget's status: a controller write when it follows an earlier
// status of the budget and adds or renews no entry, and the holds among its entries.
// prev is the budget's previous status.disruptedPods (ok false: none seen). Called with
// o.mu held.
func (o *observer) seeBudget(b *policyv1.PodDisruptionBudget, prev map[string]time.Time, ok bool, next map[string]time.Time, now time.Time) {
	if ok && floor.ByController(prev, next) {
		o.hw.writes = append(o.hw.writes, now)
	}
	if o.hw.latest[b.Namespace] == nil {
		o.hw.latest[b.Namespace] = map[string]map[string]metav1.Time{}
	}
	o.hw.latest[b.Namespace][b.Name] = b.Status.DisruptedPods
	o.findHolds(b.Namespace, b.Name, b.Status.DisruptedPods, now)
}

// findHolds adds the holds among entries, a budget's disruptedPods (or part of them).
func (o *observer) findHolds(ns, budget string, entries map[string]metav1.Time, now time.Time) {
	if len(entries) == 0 {
		return
	}
	pods := make(map[string]pdb.PodState, len(entries))
	for name := range entries {
		if st, ok := o.hw.pods[ns+"/"+name]; ok {
			pods[name] = st
		}
	}
	for _, h := range pdb.Holds(entries, pods, now) {
		key := fmt.Sprintf("%s/%s/%s/%d", ns, budget, h.Pod, h.Since.Unix())
		if _, seen := o.hw.found[key]; !seen {
			o.hw.found[key] = h
		}
	}
}

// holdCounts are the holds seen while the observer watched, and those this run caused:
// the ones whose eviction the API server recorded after the observer started (the bench
// runs one tool at a time, so an entry written then is that tool's eviction's).
func (o *observer) holdCounts() (seen, caused int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	from := o.start.Truncate(time.Second)
	for _, h := range o.hw.found {
		seen++
		if !h.Since.Before(from) {
			caused++
		}
	}
	return seen, caused
}

// heldEvictions are the evictions (name/uid) that the holds this run caused followed:
// for each hold, the first eviction of that name the pod watch saw at or after the
// entry's time (which the API server wrote to the second, before deleting the pod).
func (o *observer) heldEvictions() map[string]bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	from := o.start.Truncate(time.Second)
	out := map[string]bool{}
	for _, h := range o.hw.found {
		if h.Since.Before(from) {
			continue
		}
		best, bestAt := "", time.Time{}
		for key, at := range o.evicted {
			if name, _, _ := strings.Cut(key, "/"); name != h.Pod || at.Before(h.Since) {
				continue
			}
			if best == "" || at.Before(bestAt) {
				best, bestAt = key, at
			}
		}
		if best != "" {
			out[best] = true
		}
	}
	return out
}

// controllerWrites are the times of the disruption controller's status writes seen.
func (o *observer) controllerWrites() []time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]time.Time(nil), o.hw.writes...)
}

// coveredEvictions counts the evictions seen of pods under a budget (an app whose budget
// status the observer recorded).
func (o *observer) coveredEvictions() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	for key := range o.evicted {
		name, _, _ := strings.Cut(key, "/")
		if len(o.statuses[o.appOf[name]]) > 0 {
			n++
		}
	}
	return n
}

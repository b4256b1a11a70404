// Package diagnose explains why a PodDisruptionBudget holds an eviction back, and what a
// person can do about it: a Cause and a Remedy, computed from the budgets that select the
// waiting pod and the pods they select, as the caller's caches hold them. It makes no API
// calls, prints nothing and keeps no state besides a Tracker the caller owns.
package diagnose

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

// Kind names a cause; the values are stable (machine output may carry them).
type Kind string

// Causes, in the order Diagnose tries them.
const (
	// Overlap: the pod is under two or more budgets; the Eviction API refuses it (500).
	Overlap Kind = "OverlappingBudgets"
	// Never: the budget can never allow a disruption (maxUnavailable 0, minAvailable =
	// expected pods, minAvailable 100%).
	Never Kind = "NeverAllows"
	// StaleStatus: the budget's status has disagreed with its pods for StaleAfter or more
	// (observedGeneration behind, disruptedPods listing pods that are gone, currentHealthy
	// not the Ready pods it selects): kube-controller-manager is not updating it.
	StaleStatus Kind = "StaleStatus"
	// DisruptionHold: the disruption controller keeps an entry of status.disruptedPods
	// against a replacement that took the evicted pod's name (a StatefulSet's) until the
	// entry is pdb.DeletionTimeout old (pdb.Holds); the budget allows one fewer until then.
	DisruptionHold Kind = "DisruptionControllerHold"
	// EvictionRecord: status.disruptedPods holds an eviction of a pod that is still running
	// and that this run did not evict (an earlier, interrupted run); the server drops it
	// RecordTTL after the eviction.
	EvictionRecord Kind = "EvictionRecord"
	// StuckTerminating: a pod of the budget is past its grace period and still there (its
	// finalizers, or its node is NotReady), so the budget cannot recover.
	StuckTerminating Kind = "StuckTerminating"
	// ReplacementsNotReady: the budget is exhausted because pods it selects are not Ready
	// (unschedulable, image pull, crash loop, or just not ready yet).
	ReplacementsNotReady Kind = "ReplacementsNotReady"
	// ReplacementsMissing: fewer pods exist than the budget expects and none is waiting
	// to become Ready: the workload's controller has not created the replacements.
	ReplacementsMissing Kind = "ReplacementsMissing"
	// Exhausted: the budget allows no disruption now and nothing above explains it.
	Exhausted Kind = "Exhausted"
)

// StuckMargin is how long past its grace period (its deletionTimestamp) a terminating pod
// must still exist, when it was last seen, to be called stuck: a kubelet confirms a
// deletion a moment after the grace period ends, and a busy one later still.
const StuckMargin = 30 * time.Second

// RecordTTL is how long the API server's eviction record (an entry of
// status.disruptedPods) holds an allowance when the pod it names is not deleted: the
// disruption controller's DeletionTimeout (pkg/controller/disruption), 2 minutes.
const RecordTTL = 2 * time.Minute

// DefaultStaleAfter is how long a budget's status may disagree with its pods before it is
// called stale.
const DefaultStaleAfter = 30 * time.Second

// maxNamed bounds the pods a cause names.
const maxNamed = 3

// Diagnosis is why a budget holds a pod back, and what to do.
type Diagnosis struct {
	Kind Kind
	// Cause is a sentence naming the budget(s) and the pods responsible.
	Cause string
	// Remedy is what a person can do.
	Remedy string
	// Pods are the pods the cause names ("namespace/name").
	Pods []string
	// Expires is when an EvictionRecord or the first DisruptionHold runs out (zero
	// otherwise).
	Expires time.Time
	// Routine marks an ordinary wait: the budget's allowance is taken by evictions in
	// flight and their replacements are on their way (Exhausted, or replacements not
	// created or not Ready yet for less than Input.SettleAfter). Cause and Remedy are
	// set, for machine output; a person needs neither.
	Routine bool
}

// Input is what Diagnose looks at.
type Input struct {
	// Pod is the pod that waits (nil when the diagnosis is for a budget alone).
	Pod *corev1.Pod
	// Budgets select Pod.
	Budgets []*pdb.Budget
	// Selected are the pods the (single) budget selects, as last listed; nil when
	// unknown (the causes that need them are then not tried).
	Selected []*corev1.Pod
	// NodeNotReady reports a node known to be NotReady (nil: none known).
	NodeNotReady func(name string) bool
	// Ours reports a pod ("namespace/name") this run evicted: its eviction record is
	// expected, not an earlier run's.
	Ours func(key string) bool
	// StaleWhy, when set, is the caller's own finding that the status is stale (it wins).
	StaleWhy string
	// StaleFor is how long the status has disagreed with the pods (see Tracker).
	StaleFor time.Duration
	// StaleAfter is the threshold for StaleFor; DefaultStaleAfter when zero.
	StaleAfter time.Duration
	// ListedAt is when Selected was listed: a pod in it is judged as it was then (a
	// terminating pod is stuck only if it was past its grace period plus StuckMargin
	// when listed). Zero means Now.
	ListedAt time.Time
	// Waited is how long the pod has waited on the budget so far.
	Waited time.Duration
	// SettleAfter is how long replacements may be missing or not Ready before that is a
	// cause rather than the ordinary turnover of a drain; StaleAfter when zero.
	SettleAfter time.Duration
	Now         time.Time
}

// Diagnose returns why in.Budgets hold in.Pod back. With no budget it returns a zero
// Diagnosis.
func Diagnose(in Input) Diagnosis {
	if in.StaleAfter <= 0 {
		in.StaleAfter = DefaultStaleAfter
	}
	if in.SettleAfter <= 0 {
		in.SettleAfter = in.StaleAfter
	}
	if in.ListedAt.IsZero() || in.ListedAt.After(in.Now) {
		in.ListedAt = in.Now
	}
	switch len(in.Budgets) {
	case 0:
		return Diagnosis{}
	case 1:
	default:
		return overlap(in)
	}
	b := in.Budgets[0]
	if never, why := b.NeverAllows(); never {
		remedy := fmt.Sprintf("relax pdb %s (maxUnavailable 1, or minAvailable below the pods it expects), scale the workload up, drain with --surge (a one-replica Deployment), or --on-blocked=skip to leave the node cordoned and go on", b.Key())
		if noScaleHelps(b) {
			remedy = fmt.Sprintf("relax pdb %s (maxUnavailable 1, or minAvailable below the pods it expects): no number of replicas helps, so neither scaling up nor --surge does; or --on-blocked=skip to leave the node cordoned and go on", b.Key())
		}
		return Diagnosis{Kind: Never, Cause: why, Remedy: remedy}
	}
	if d, ok := stale(in, b); ok {
		return d
	}
	if in.Selected != nil {
		for _, f := range []func(Input, *pdb.Budget) (Diagnosis, bool){holds, records, stuck, notReady, missing} {
			if d, ok := f(in, b); ok {
				return d
			}
		}
	}
	return Diagnosis{Kind: Exhausted, Routine: true,
		Cause:  fmt.Sprintf("pdb %s %s", b.Key(), b.Numbers()),
		Remedy: "wait: the budget allows another disruption once the evicted pods' replacements are Ready"}
}

func overlap(in Input) Diagnosis {
	name := "the pod"
	if in.Pod != nil {
		name = "pod " + in.Pod.Namespace + "/" + in.Pod.Name
	}
	return Diagnosis{Kind: Overlap,
		Cause:  fmt.Sprintf("%s is selected by %s: the Eviction API refuses a pod under more than one budget", name, pdb.Keys(in.Budgets)),
		Remedy: fmt.Sprintf("remove the overlap: make the selectors of %s disjoint, or delete all but one", pdb.Keys(in.Budgets))}
}

// Disagreement says how b's status disagrees with the pods it selects ("" when it
// agrees or selected is nil and the generation is observed): observedGeneration behind
// the spec, disruptedPods entries for pods that are gone or terminating (the controller
// drops those at its next sync), or currentHealthy other than the Ready pods it counts.
func Disagreement(b *pdb.Budget, selected []*corev1.Pod, now time.Time) string {
	st := b.PDB.Status
	if b.Stale() {
		return fmt.Sprintf("observedGeneration %d is behind generation %d", st.ObservedGeneration, b.PDB.Generation)
	}
	if selected == nil {
		return ""
	}
	live := map[string]*corev1.Pod{}
	for _, p := range selected {
		live[p.Name] = p
	}
	var gone []string
	for name := range st.DisruptedPods {
		if p := live[name]; p == nil || p.DeletionTimestamp != nil {
			gone = append(gone, b.PDB.Namespace+"/"+name)
		}
	}
	if len(gone) > 0 {
		sort.Strings(gone)
		return "status.disruptedPods still lists " + names(gone) + ", gone or terminating"
	}
	if h := Healthy(b, selected, now); h != st.CurrentHealthy {
		return fmt.Sprintf("status.currentHealthy is %d but %d of the pods it selects are Ready", st.CurrentHealthy, h)
	}
	return ""
}

// Healthy counts selected pods the way the disruption controller does: Ready, not
// terminating, and not listed in disruptedPods less than RecordTTL ago.
func Healthy(b *pdb.Budget, selected []*corev1.Pod, now time.Time) int32 {
	var n int32
	for _, p := range selected {
		if p.DeletionTimestamp != nil {
			continue
		}
		if at, ok := b.PDB.Status.DisruptedPods[p.Name]; ok && at.Add(RecordTTL).After(now) {
			continue
		}
		if pdb.PodReady(p) {
			n++
		}
	}
	return n
}

func stale(in Input, b *pdb.Budget) (Diagnosis, bool) {
	why := in.StaleWhy
	if why == "" {
		if in.StaleFor < in.StaleAfter {
			return Diagnosis{}, false
		}
		d := Disagreement(b, in.Selected, in.Now)
		if d == "" {
			return Diagnosis{}, false
		}
		why = fmt.Sprintf("pdb %s: its status has been stale for %s: %s", b.Key(), in.StaleFor.Round(time.Second), d)
	}
	return Diagnosis{Kind: StaleStatus, Cause: why,
		Remedy: "check kube-controller-manager (the disruption controller updates the status): is it running, does it hold its lease, what do its logs say? The drain goes on by itself once the status catches up"}, true
}

func records(in Input, b *pdb.Budget) (Diagnosis, bool) {
	live := map[string]*corev1.Pod{}
	for _, p := range in.Selected {
		live[p.Name] = p
	}
	var held []string
	var first time.Time
	for name, at := range b.PDB.Status.DisruptedPods {
		p := live[name]
		key := b.PDB.Namespace + "/" + name
		if p == nil || p.DeletionTimestamp != nil || (in.Ours != nil && in.Ours(key)) || !at.Add(RecordTTL).After(in.Now) {
			continue
		}
		held = append(held, key)
		if first.IsZero() || at.Time.Before(first) {
			first = at.Time
		}
	}
	if len(held) == 0 {
		return Diagnosis{}, false
	}
	sort.Strings(held)
	exp := first.Add(RecordTTL)
	return Diagnosis{Kind: EvictionRecord, Pods: held, Expires: exp,
		Cause: fmt.Sprintf("pdb %s is held by an eviction record of an earlier, interrupted run: status.disruptedPods counts %s as disrupted, but it is still running; the server drops the record at %s (in %s)",
			b.Key(), names(held), exp.UTC().Format("15:04:05Z"), exp.Sub(in.Now).Round(time.Second)),
		Remedy: "wait: the record expires by itself (2 minutes after that eviction) and the drain goes on"}, true
}

func stuck(in Input, b *pdb.Budget) (Diagnosis, bool) {
	var pods, whys []string
	finalizers := false
	for _, p := range sorted(in.Selected) {
		if p.DeletionTimestamp == nil || !in.ListedAt.After(p.DeletionTimestamp.Add(StuckMargin)) || self(in, p) {
			continue
		}
		key := p.Namespace + "/" + p.Name
		why := fmt.Sprintf("%s (past its grace period by %s", key, in.ListedAt.Sub(p.DeletionTimestamp.Time).Round(time.Second))
		if len(p.Finalizers) > 0 {
			finalizers = true
			why += ", finalizers " + strings.Join(p.Finalizers, ", ")
		}
		if n := p.Spec.NodeName; n != "" && in.NodeNotReady != nil && in.NodeNotReady(n) {
			why += ", its node " + n + " is NotReady"
		}
		pods, whys = append(pods, key), append(whys, why+")")
	}
	if len(pods) == 0 {
		return Diagnosis{}, false
	}
	remedy := "bring the pod's node back (its kubelet confirms the deletion); if the node is gone for good, delete the pod object once you know it is not running"
	if finalizers {
		remedy = "find the controller that owns the finalizer and why it does not remove it (remove the finalizer only if that controller is gone)"
	}
	return Diagnosis{Kind: StuckTerminating, Pods: pods,
		Cause:  fmt.Sprintf("pdb %s cannot recover: %s stuck terminating: %s", b.Key(), plural(len(pods), "pod is", "pods are"), strings.Join(cap3(whys), "; ")),
		Remedy: remedy}, true
}

func notReady(in Input, b *pdb.Budget) (Diagnosis, bool) {
	var pods, whys []string
	var worst Reason
	for _, p := range sorted(in.Selected) {
		if p.DeletionTimestamp != nil || pdb.PodReady(p) || self(in, p) {
			continue
		}
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		r, msg := WhyNotReady(p)
		if r < worst || len(pods) == 0 {
			worst = r
		}
		key := p.Namespace + "/" + p.Name
		pods, whys = append(pods, key), append(whys, key+" "+msg)
	}
	if len(pods) == 0 {
		return Diagnosis{}, false
	}
	return Diagnosis{Kind: ReplacementsNotReady, Pods: pods, Routine: worst == NotReadyYet && in.Waited < in.SettleAfter,
		Cause: fmt.Sprintf("pdb %s %s: %s not Ready: %s", b.Key(), b.Numbers(),
			plural(len(pods), "its replacement pod is", "its replacement pods are"), strings.Join(cap3(whys), "; ")),
		Remedy: worst.remedy()}, true
}

func missing(in Input, b *pdb.Budget) (Diagnosis, bool) {
	live := int32(0)
	for _, p := range in.Selected {
		if p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			live++
		}
	}
	want := b.PDB.Status.ExpectedPods
	if live >= want || b.Allowed() > 0 {
		return Diagnosis{}, false
	}
	// A controller creates a replacement a moment after the pod is gone (a StatefulSet
	// only once the old pod is deleted): missing for a while is the drain's own turnover.
	return Diagnosis{Kind: ReplacementsMissing, Routine: in.Waited < in.SettleAfter,
		Cause: fmt.Sprintf("pdb %s %s: it expects %d pods and %d exist: the evicted pods' replacements have not been created",
			b.Key(), b.Numbers(), want, live),
		Remedy: "check the workload's controller: is kube-controller-manager running, what do the ReplicaSet's (or StatefulSet's) events say (quota, admission webhooks)?"}, true
}

func self(in Input, p *corev1.Pod) bool {
	return in.Pod != nil && in.Pod.Namespace == p.Namespace && in.Pod.Name == p.Name
}

func sorted(ps []*corev1.Pod) []*corev1.Pod {
	out := append([]*corev1.Pod(nil), ps...)
	sort.Slice(out, func(i, j int) bool { return out[i].Namespace+"/"+out[i].Name < out[j].Namespace+"/"+out[j].Name })
	return out
}

func cap3(s []string) []string {
	if len(s) <= maxNamed {
		return s
	}
	return append(s[:maxNamed:maxNamed], fmt.Sprintf("and %d more", len(s)-maxNamed))
}

func names(keys []string) string {
	return strings.Join(cap3(append([]string(nil), keys...)), ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// noScaleHelps tells a budget that never allows a disruption at any scale (maxUnavailable
// 0 or 0%, minAvailable 100%): the disruption controller's desiredHealthy grows with the
// pods it expects, so more replicas (or a surge) never open it.
func noScaleHelps(b *pdb.Budget) bool {
	spec := b.PDB.Spec
	if mu := spec.MaxUnavailable; mu != nil {
		return (mu.Type == intstr.Int && mu.IntVal == 0) || (mu.Type == intstr.String && strings.TrimSpace(mu.StrVal) == "0%")
	}
	ma := spec.MinAvailable
	return ma != nil && ma.Type == intstr.String && strings.TrimSpace(ma.StrVal) == "100%"
}

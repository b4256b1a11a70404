package drain

import (
	"context"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain/diagnose"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

func newBudgetWatch() budgetWatch {
	return budgetWatch{stale: map[string]staleMark{}, movedAt: map[string]time.Time{}, goneAt: map[string]time.Time{}}
}

// probeTimeout bounds one GET /version.
const probeTimeout = 5 * time.Second

// versionProbe is the default Probe: GET /version.
func versionProbe(c kubernetes.Interface) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		if c == nil {
			return nil
		}
		d := c.Discovery()
		if rc := d.RESTClient(); rc != nil {
			ctx, cancel := context.WithTimeout(ctx, probeTimeout)
			defer cancel()
			return rc.Get().AbsPath("/version").Do(ctx).Error()
		}
		_, err := d.ServerVersion()
		return err
	}
}

// checkStaleLocked calls a budget stale when the disruption controller (in
// kube-controller-manager) is not updating its status, so its allowance will not come
// back: its status still counts as disrupted a pod this run saw gone StaleAfter ago or
// more, or it has disagreed with its pods as last listed (a Ready replacement not
// counted, say) for StaleAfter or more. Its pods stay parked and are not asked again
// until the status changes.
func (bw *budgetWatch) checkStaleLocked() {
	bs := bw.b
	keys := map[string]bool{}
	for k, ps := range bs.book.parked {
		if len(ps) > 0 {
			keys[k] = true
		}
	}
	for k, ps := range bs.book.reserved {
		if len(ps) > 0 {
			keys[k] = true
		}
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, key := range sorted {
		if _, already := bw.stale[key]; already {
			continue
		}
		b := bs.book.budgetLocked(key)
		if b == nil {
			continue
		}
		why, fromPods := bw.staleWhyLocked(key, b)
		if why == "" {
			continue
		}
		ask := "running?"
		if fromPods {
			ask = "running, or far behind?"
		}
		msg := fmt.Sprintf("pdb %s: its status is stale: %s; is kube-controller-manager (the disruption controller) %s Its pods wait and are not asked again until the status changes", key, why, ask)
		bw.stale[key] = staleMark{why: msg, rv: b.PDB.ResourceVersion, fromPods: fromPods}
		bs.emit(event.Event{Type: event.EventWarning, PDB: key, Reason: "BudgetStatusStale", Message: msg})
		for _, st := range bs.book.parked[key] {
			st.blockMsg = msg
		}
	}
}

// staleWhyLocked says why b's status is stale ("" while it may be current), and whether
// that is read from its pods (the status disagrees with them) rather than from a gone pod
// it still lists.
func (bw *budgetWatch) staleWhyLocked(key string, b *pdb.Budget) (string, bool) {
	bs := bw.b
	if name, since := bw.goneListedLocked(b.PDB); name != "" {
		// An instant, not a duration: the message is said once and kept (every later
		// wait line and status write says it), and "for 31s" would be frozen there.
		at := bs.cfg.Clock.Now().Add(-since).UTC().Format(time.RFC3339)
		return fmt.Sprintf("it still counts as disrupted pod %s, gone since %s", name, at), false
	}
	sel := bs.diag.selected[key]
	if sel == nil || sel.at.IsZero() {
		return "", false
	}
	// The status as it stands against the pods as they stand: listed after the status
	// last changed, and lately.
	now := bs.cfg.Clock.Now()
	if sel.at.Before(bw.movedAt[key]) || now.Sub(sel.at) > 2*bs.cfg.DiagnoseInterval {
		return "", false
	}
	// A busy controller-manager lags its pods too, but it goes on writing the status: a
	// disagreement counts only once the status has not changed for as long.
	lasted := min(bs.diag.tracker.Since(key, now), now.Sub(bw.movedAt[key]))
	if lasted < bs.cfg.StaleAfter {
		return "", false
	}
	if d := diagnose.Disagreement(b, sel.pods, sel.at); d != "" {
		return fmt.Sprintf("%s, since %s", d, now.Add(-lasted).UTC().Format(time.RFC3339)), true
	}
	return "", false
}

// agreesLocked is told that a fresh list of key's pods agrees with its status: a budget
// called stale from its pods is current after all (a controller-manager far behind caught
// up without a change of this status), and its pods may be asked again.
func (bw *budgetWatch) agreesLocked(key string) {
	bs := bw.b
	if !bw.stale[key].fromPods {
		return
	}
	delete(bw.stale, key)
	bs.book.wakeBudgetLocked(key)
}

// disruptedPodTimeout is how long the disruption controller keeps a pod in a budget's
// status.disruptedPods while a pod of that name exists (DeletionTimeout in
// k8s.io/kubernetes/pkg/controller/disruption).
const disruptedPodTimeout = 2 * time.Minute

// recreatedUnderItsName reports a pod whose controller recreates it under the same name
// (a StatefulSet).
func recreatedUnderItsName(p *corev1.Pod) bool {
	ref := metav1.GetControllerOf(p)
	return ref != nil && ref.Kind == "StatefulSet"
}

// goneListedLocked returns a pod the status lists in disruptedPods that this run saw gone
// StaleAfter ago or more, and for how long.
func (bw *budgetWatch) goneListedLocked(p *policyv1.PodDisruptionBudget) (string, time.Duration) {
	bs := bw.b
	now := bs.cfg.Clock.Now()
	var names []string
	for name := range p.Status.DisruptedPods {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		key := p.Namespace + "/" + name
		at, ok := bw.goneAt[key]
		if !ok {
			continue
		}
		after := bs.cfg.StaleAfter
		if st := bs.host.podsLocked()[key]; st != nil && recreatedUnderItsName(st.pod) {
			// A StatefulSet brings the pod back under the same name; when the disruption
			// controller sees the new pod before noticing the old one went, it keeps the
			// entry, and counts the new pod as disrupted, until the entry expires (2
			// minutes after the eviction). Its status is current meanwhile, and its
			// allowance is the server's.
			after += disruptedPodTimeout
		}
		if now.Sub(at) >= after {
			return key, now.Sub(at)
		}
	}
	return "", 0
}

func (bw *budgetWatch) listsGoneLocked(p *policyv1.PodDisruptionBudget) bool {
	name, _ := bw.goneListedLocked(p)
	return name != ""
}

// notCurrentWhyLocked says why key's status is not current ("" when it is, or when the
// budget is unknown): the watchdog called it stale, its observedGeneration is behind its
// generation (the server refuses evictions then), it still counts as disrupted a pod that
// is gone, or its pods as last listed disagree with it (the disruption controller has not
// caught up, or is not running). Unlike the watchdog's warning (StaleAfter, which names
// kube-controller-manager), this waits for nothing: it is evidence at once.
func (bw *budgetWatch) notCurrentWhyLocked(key string) string {
	bs := bw.b
	if m, ok := bw.stale[key]; ok {
		return m.why
	}
	b := bs.book.budgetLocked(key)
	if b == nil {
		return ""
	}
	if b.Stale() {
		return fmt.Sprintf("pdb %s: status.observedGeneration %d is behind generation %d", key, b.PDB.Status.ObservedGeneration, b.PDB.Generation)
	}
	if name := bw.goneListedNowLocked(b); name != "" {
		return fmt.Sprintf("pdb %s: status.disruptedPods still counts pod %s, which is gone", key, name)
	}
	// Its pods, listed after the status last changed and lately, disagree with it (a
	// Ready replacement not counted): the disruption controller has not caught up.
	now := bs.cfg.Clock.Now()
	if sel := bs.diag.selected[key]; sel != nil && !sel.at.IsZero() && !sel.at.Before(bw.movedAt[key]) && now.Sub(sel.at) <= 2*bs.cfg.DiagnoseInterval {
		if d := diagnose.Disagreement(b, bs.diag.liveLocked(sel), sel.at); d != "" {
			return fmt.Sprintf("pdb %s: %s", key, d)
		}
	}
	return ""
}

// goneListedNowLocked returns the first pod (by name) the budget's status lists in
// disruptedPods that is gone now, "" when none is known to be.
func (bw *budgetWatch) goneListedNowLocked(b *pdb.Budget) string {
	listed := b.PDB.Status.DisruptedPods
	names := make([]string, 0, len(listed))
	for name := range listed {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		key := b.PDB.Namespace + "/" + name
		if bw.podGoneLocked(b.Key(), key, listed[name].Time) {
			return key
		}
	}
	return ""
}

// podGoneLocked reports whether no pod of that key exists, as far as the run can tell: the
// shared pod informer holds every pod; else a pod tracked on its node is there until the
// run saw it go; else the budget's pods as last listed (after the entry was written, and
// after the run saw the pod go) tell; else the run's own record of the pods it saw go. A
// pod of that name that exists again (a StatefulSet's) is not gone: the disruption
// controller keeps the entry for it until the entry expires, and its status is current.
func (bw *budgetWatch) podGoneLocked(pdbKey, key string, listedAt time.Time) bool {
	bs := bw.b
	if idx := bs.host.podIndexer(); idx != nil {
		_, exists, err := idx.GetByKey(key)
		return err == nil && !exists
	}
	if st := bs.host.podsLocked()[key]; st != nil && st.phase != finished {
		return false
	}
	goneAt, seenGone := bw.goneAt[key]
	if sel := bs.diag.selected[pdbKey]; sel != nil && !sel.at.IsZero() && sel.at.After(listedAt) && (!seenGone || sel.at.After(goneAt)) {
		for _, p := range sel.pods {
			if p.Namespace+"/"+p.Name == key {
				return false
			}
		}
		return true
	}
	return seenGone
}

// liveLocked returns the pods of a selection as the run sees them now: a pod the run
// saw gone since the List is left out, and a pod the run tracks is taken from its node's
// informer, so that a snapshot up to DiagnoseInterval old never calls a pod that is gone
// stuck, nor its replacement missing.
func (wd *waitDiag) liveLocked(sel *selection) []*corev1.Pod {
	bs := wd.b
	out := make([]*corev1.Pod, 0, len(sel.pods))
	for _, p := range sel.pods {
		key := p.Namespace + "/" + p.Name
		st := bs.host.podsLocked()[key]
		if st == nil || st.pod.UID != p.UID || bs.host.nodesLocked()[st.node].store == nil {
			out = append(out, p)
			continue
		}
		if st.phase == finished {
			continue // gone since (a StatefulSet's new pod of that name is listed on its own)
		}
		if cur, ok := bs.host.currentLocked(st); ok {
			out = append(out, cur)
		}
	}
	return out
}

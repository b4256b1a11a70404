package drain

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain/diagnose"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
	"github.com/kubectl-maintenance/kubectl-maintenance/predicate"
)

// Defaults of the diagnosis and the wait lines.
const (
	// DefaultWaitInterval is how often a wait that has not changed is said again.
	DefaultWaitInterval = 30 * time.Second
	// DefaultDiagnoseInterval is how often a blocking budget's pods are listed again.
	DefaultDiagnoseInterval = 10 * time.Second
	// waitTick is the wait lines' resolution.
	waitTick = time.Second
	// listTimeout bounds one List of a budget's pods.
	listTimeout = 5 * time.Second
	// maxListsPerTick bounds the Lists one tick sends (the others wait for the next).
	maxListsPerTick = 20
	// maxNodeGets bounds the node lookups for pods stuck terminating, per List.
	maxNodeGets = 3
)

func (c *Config) diagnoseDefaults() {
	if c.WaitInterval <= 0 {
		c.WaitInterval = DefaultWaitInterval
	}
	if c.DiagnoseInterval <= 0 {
		c.DiagnoseInterval = DefaultDiagnoseInterval
	}
}

// diagnoseLocked completes a wait event with its cause and remedy, and remembers the
// wait so that it is said again while it lasts. Called where the wait is said.
func (wd *waitDiag) diagnoseLocked(st *podState, budgets []*pdb.Budget, ev event.Event) event.Event {
	bs := wd.b
	now := bs.cfg.Clock.Now()
	d := wd.diagnosisLocked(st, budgets)
	ev.Cause, ev.Remedy, ev.CauseKind, ev.Routine = d.Cause, d.Remedy, string(d.Kind), d.Routine
	if d.Kind == diagnose.DisruptionHold && d.Expires.After(now) {
		ev.RetryAfter = max(ev.RetryAfter, d.Expires.Sub(now)) // no eviction of the budget before it ends
	}
	if wd.waits == nil {
		wd.waits = map[string]*waitLine{}
	}
	w := wd.waits[st.key]
	if w == nil {
		w = &waitLine{since: now}
		wd.waits[st.key] = w
	}
	ev.Waited = now.Sub(w.since)
	w.said, w.ev, w.sig = now, ev, signature(d)
	return ev
}

// signature is what makes a changed cause worth saying at once: its kind and remedy (a
// new replacement pod with the same trouble waits for the next wait line).
func signature(d diagnose.Diagnosis) string {
	if d.Routine {
		return "routine" // the drain's own turnover: nothing new to say
	}
	return string(d.Kind) + "|" + d.Remedy
}

// diagnosisLocked explains st's wait from the caches: the budgets' statuses and the
// pods last listed for them.
func (wd *waitDiag) diagnosisLocked(st *podState, budgets []*pdb.Budget) diagnose.Diagnosis {
	bs := wd.b
	now := bs.cfg.Clock.Now()
	cur, ok := bs.host.currentLocked(st)
	if !ok {
		cur = st.pod
	}
	in := diagnose.Input{Pod: cur, Budgets: budgets, Now: now, StaleAfter: bs.cfg.StaleAfter,
		Ours: func(key string) bool { s := bs.host.podsLocked()[key]; return s != nil && s.attempts > 0 }}
	if w := wd.waits[st.key]; w != nil {
		in.Waited = now.Sub(w.since)
	}
	if len(budgets) == 1 {
		key := budgets[0].Key()
		in.StaleWhy = bs.watch.stale[key].why
		if sel := wd.selected[key]; sel != nil && !sel.at.IsZero() {
			in.Selected = wd.liveLocked(sel) // listed, so never nil
			in.ListedAt = sel.at
			in.NodeNotReady = func(n string) bool { return sel.notReady[n] }
			// As staleWhyLocked: a disagreement counts only between pods listed after the
			// status last changed and a status that has not changed for as long (during a
			// drain's turnover each list may catch another pod in flight).
			if !sel.at.Before(bs.watch.movedAt[key]) {
				in.StaleFor = min(wd.tracker.Since(key, now), now.Sub(bs.watch.movedAt[key]))
			}
		}
	}
	return diagnose.Diagnose(in)
}

// waitLines says, every WaitInterval, each wait that has not changed, with how long it
// has lasted (one line per blocking budget, for its first waiting pod, and one per pod a
// rule holds), so that a drain is never silent for long, even while the API server or the
// controller-manager is away. It also lists the pods of the budgets that hold pods back,
// every DiagnoseInterval, and says a wait again at once when its cause changes.
func (wd *waitDiag) waitLines(ctx context.Context) {
	bs := wd.b
	bs.every(ctx, waitTick, func() {
		bs.lock()
		keys := wd.toListLocked()
		bs.unlock()
		for _, key := range keys {
			if ctx.Err() != nil {
				return
			}
			wd.list(ctx, key)
		}
		bs.lock()
		wd.sayWaitsLocked()
		bs.unlock()
	})
}

// toListLocked picks the budgets with waiting pods whose pods are due to be listed.
func (wd *waitDiag) toListLocked() []string {
	bs := wd.b
	now := bs.cfg.Clock.Now()
	var keys []string
	for key, ps := range bs.book.parked {
		if len(ps) == 0 {
			continue
		}
		sel := wd.selected[key]
		if sel != nil && (sel.listing || (!sel.due && !sel.at.IsZero() && now.Sub(sel.at) < bs.cfg.DiagnoseInterval)) {
			continue
		}
		keys = append(keys, key)
	}
	sort.Strings(keys)
	if len(keys) > maxListsPerTick {
		keys = keys[:maxListsPerTick]
	}
	if wd.selected == nil {
		wd.selected = map[string]*selection{}
	}
	for _, key := range keys {
		if wd.selected[key] == nil {
			wd.selected[key] = &selection{}
		}
		wd.selected[key].listing, wd.selected[key].due = true, false
	}
	return keys
}

// list reads the pods budget key selects, and the nodes of those stuck terminating;
// outside the lock. With the run's shared pod informer (many nodes at once) the pods come
// from its cache, which holds every pod already: no request. Otherwise they are listed
// from the API server's watch cache.
func (wd *waitDiag) list(ctx context.Context, key string) {
	bs := wd.b
	bs.lock()
	b := bs.book.budgetLocked(key)
	bs.unlock()
	var pods []*corev1.Pod // once listed, empty is known to be empty (nil: unknown)
	notReady := map[string]bool{}
	ok := false
	if b != nil {
		if s, err := metav1.LabelSelectorAsSelector(b.PDB.Spec.Selector); err == nil {
			pods, err = bs.host.budgetPods(ctx, b.PDB.Namespace, s)
			if err == nil {
				ok = true
				now := bs.cfg.Clock.Now()
				gets := 0
				for _, p := range pods {
					n := p.Spec.NodeName
					if p.DeletionTimestamp == nil || n == "" || !now.After(p.DeletionTimestamp.Time) {
						continue
					}
					if seen, ok := wd.nodes[n]; ok && now.Sub(seen.at) < bs.cfg.DiagnoseInterval {
						if !seen.ready {
							notReady[n] = true
						}
						continue
					}
					if gets >= maxNodeGets {
						continue
					}
					gets++
					gctx, cancel := context.WithTimeout(ctx, listTimeout)
					node, err := bs.cfg.Client.CoreV1().Nodes().Get(gctx, n, metav1.GetOptions{})
					cancel()
					if err != nil {
						continue
					}
					if wd.nodes == nil {
						wd.nodes = map[string]nodeSeen{}
					}
					wd.nodes[n] = nodeSeen{ready: nodeReady(node), at: now}
					if !nodeReady(node) {
						notReady[n] = true
					}
				}
			} else {
				bs.cfg.Logger.V(2).Info("could not list the pods of a budget", "pdb", key, "err", err)
			}
		}
	}
	bs.lock()
	defer bs.unlock()
	sel := wd.selected[key]
	sel.listing = false
	if !ok {
		sel.failed = bs.cfg.Clock.Now()
		return // keep what we had; the next tick after DiagnoseInterval tries again
	}
	if b := bs.book.budgetLocked(key); b != nil {
		sel.pods, sel.notReady, sel.at = pods, notReady, bs.cfg.Clock.Now()
		wd.sawHoldsLocked(b, pods)
		disagrees := diagnose.Disagreement(b, pods, sel.at) != ""
		wd.tracker.Observe(key, disagrees, sel.at)
		if !disagrees {
			bs.watch.agreesLocked(key)
		}
	}
}

func nodeReady(n *corev1.Node) bool { return predicate.NodeReady(n) }

// sayWaitsLocked says again the waits whose cause changed, and those not said for
// WaitInterval.
func (wd *waitDiag) sayWaitsLocked() {
	bs := wd.b
	now := bs.cfg.Clock.Now()
	groups := map[blockKey][]*podState{}
	for key := range wd.waits {
		st := bs.host.podsLocked()[key]
		if st == nil || st.phase != waiting || bs.host.nodesLocked()[st.node].finished || st.block.isZero() {
			delete(wd.waits, key)
			continue
		}
		groups[st.block] = append(groups[st.block], st)
	}
	blocks := make([]blockKey, 0, len(groups))
	for b := range groups {
		blocks = append(blocks, b)
	}
	sort.Slice(blocks, func(i, j int) bool { return blocks[i].String() < blocks[j].String() })
	for _, block := range blocks {
		sts := groups[block]
		st := sts[0]
		for _, o := range sts[1:] {
			if before(o, st) {
				st = o
			}
		}
		w := wd.waits[st.key]
		budgets := bs.book.budgetsOfLocked(st)
		d := wd.diagnosisLocked(st, budgets)
		changed := signature(d) != w.sig
		if !changed && now.Sub(w.said) < bs.cfg.WaitInterval-waitTick/2 {
			continue
		}
		ev := w.ev
		ev.Time, ev.RetryAfter = time.Time{}, max(0, st.notBefore.Sub(now))
		ev.Message = wd.blockMsgLocked(st) // as it stands now
		ev.Cause, ev.Remedy, ev.CauseKind, ev.Routine, ev.Waited = d.Cause, d.Remedy, string(d.Kind), d.Routine, now.Sub(w.since)
		for _, o := range sts {
			if ow := wd.waits[o.key]; ow != nil {
				ow.said, ow.sig = now, signature(d)
			}
		}
		w.ev = ev
		bs.emit(ev)
	}
	var held []*heldPod
	for _, h := range wd.held {
		if ns := bs.host.nodesLocked()[h.node]; ns != nil && !ns.finished && now.Sub(h.said) >= bs.cfg.WaitInterval-waitTick/2 {
			held = append(held, h)
		}
	}
	sort.Slice(held, func(i, j int) bool { return held[i].key < held[j].key })
	for _, h := range held {
		wd.sayHeldLocked(h, now.Sub(h.since))
	}
	wd.sayStuckLocked(now)
}

// stuckLocked completes the warning of an evicted pod still terminating with its cause
// (its finalizers, when it has any) and remedy, and remembers it so that the wait is said
// again every WaitInterval while the pod is there.
func (wd *waitDiag) stuckLocked(st *podState, cur *corev1.Pod, ev event.Event) event.Event {
	bs := wd.b
	ev.Cause = fmt.Sprintf("pod %s was evicted %s ago and is still there", st.key, bs.cfg.Clock.Since(st.acceptedAt).Round(time.Second))
	ev.Remedy = "check its node's kubelet (it confirms the deletion), or raise --skip-wait-for-delete-timeout to stop waiting for it"
	if len(cur.Finalizers) > 0 {
		ev.Cause += ": it has finalizers " + strings.Join(cur.Finalizers, ", ")
		ev.Message += "; it has finalizers " + strings.Join(cur.Finalizers, ", ")
		ev.Remedy = "find the controller that owns the finalizer and why it does not remove it (remove the finalizer only if that controller is gone)"
	}
	if wd.stuck == nil {
		wd.stuck = map[string]*waitLine{}
	}
	now := bs.cfg.Clock.Now()
	wd.stuck[st.key] = &waitLine{since: st.acceptedAt, said: now, ev: ev}
	return ev
}

// sayStuckLocked says again, every WaitInterval, each evicted pod still terminating.
func (wd *waitDiag) sayStuckLocked(now time.Time) {
	bs := wd.b
	keys := make([]string, 0, len(wd.stuck))
	for key, w := range wd.stuck {
		st := bs.host.podsLocked()[key]
		if st == nil || st.phase != terminating || bs.host.nodesLocked()[st.node].finished {
			delete(wd.stuck, key)
			continue
		}
		if now.Sub(w.said) >= bs.cfg.WaitInterval-waitTick/2 {
			keys = append(keys, key)
		}
	}
	sort.Strings(keys)
	for _, key := range keys {
		w := wd.stuck[key]
		ev := w.ev
		ev.Time, ev.Waited = time.Time{}, now.Sub(w.since)
		ev.Message = fmt.Sprintf("pod %s is still terminating %s after its eviction", key, ev.Waited.Round(time.Second))
		if _, fin, ok := strings.Cut(w.ev.Message, "; it has finalizers "); ok {
			ev.Message += "; it has finalizers " + fin
		}
		w.said = now
		bs.emit(ev)
	}
}

// waitingBlockerLocked describes a pod waiting on budgets as the wait lines would say it
// now: its current message and, when the diagnosis finds one that is not the drain's own
// turnover, its cause (an unschedulable replacement with the scheduler's reason, a stale
// status, ...) and remedy. The message says a cause once: one already in said (which it
// records) is left to the Cause field. A pod that waits on no budget keeps b as it is.
func (wd *waitDiag) waitingBlockerLocked(st *podState, b event.Blocker, said map[string]bool) event.Blocker {
	bs := wd.b
	if st.phase != waiting || st.block.isZero() {
		return b
	}
	b.Message = wd.blockMsgLocked(st)
	budgets := bs.book.budgetsOfLocked(st)
	if len(budgets) == 0 {
		return b
	}
	d := wd.diagnosisLocked(st, budgets)
	b.Cause, b.Remedy = d.Cause, d.Remedy
	if d.Cause != "" && !d.Routine && !strings.Contains(b.Message, d.Cause) && !said[d.Cause] {
		said[d.Cause] = true
		cause := d.Cause
		if len(budgets) == 1 { // its numbers are said already: once is enough
			cause = strings.TrimPrefix(strings.TrimPrefix(cause, "pdb "+budgets[0].Key()+" "+budgets[0].Numbers()), ": ")
		}
		b.Message += "; cause: " + cause // as the wait line says it
	}
	return b
}

package drain

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

type podPhase int

const (
	// waiting: to be evicted (queued, or parked on a budget).
	waiting podPhase = iota
	// terminating: the eviction was accepted; waiting for the pod to be gone.
	terminating
	// finished: gone from the node.
	finished
)

// podState is one pod the drain must evict.
type podState struct {
	pod  *corev1.Pod // as listed at preflight; its UID is the one to evict
	key  string      // namespace/name
	node string
	wave int

	phase    podPhase
	attempts int
	// refused is set after the server refused the last request; the next request then
	// waits for the per-pod backoff too.
	refused bool
	// notBefore is the earliest time of the next request (Retry-After).
	notBefore time.Time
	// parkedRV holds the resourceVersion of each budget the pod waits on, as last seen.
	parkedRV map[string]string
	// block is the last blocking message emitted, so a repeat is not emitted again.
	block      string // budgets and class of the last wait emitted
	blockMsg   string // its message
	blockPDB   string
	acceptedAt time.Time
	stuckSaid  bool
	// wokenAt is when a budget change woke the pod (zero otherwise).
	wokenAt time.Time
}

func (r *run) processNext() bool {
	key, quit := r.queue.Get()
	if quit {
		return false
	}
	defer r.queue.Done(key)
	r.handle(key)
	return true
}

// handle decides what to do with one pod: evict it if its budget has room, park it on
// the budget otherwise, or check on it while it terminates.
func (r *run) handle(key string) {
	if r.ctx.Err() != nil {
		return // interrupted: start nothing new
	}
	r.mu.Lock()
	st := r.pods[key]
	if st == nil || st.phase == finished {
		r.mu.Unlock()
		return
	}
	cur, exists := r.currentLocked(st)
	if !exists {
		r.goneLocked(st)
		r.mu.Unlock()
		return
	}
	if st.phase == terminating {
		r.checkTerminatingLocked(st, cur)
		r.mu.Unlock()
		return
	}
	budgets := r.budgetsFor(cur)
	d := pdb.Decide(cur, budgets)
	if b := d.Budget(); b != nil && d.Consumes() && int(b.Allowed())-r.inflight[b.Key()] <= 0 {
		msg := fmt.Sprintf("pdb %s %s", b.Key(), b.Numbers())
		if n := r.inflight[b.Key()]; n > 0 {
			msg += fmt.Sprintf(", %d taken by evictions in flight", n)
		}
		r.parkLocked(st, budgets, string(pdb.Exhausted), msg, 0)
		r.mu.Unlock()
		return
	}
	switch d.Verdict {
	case pdb.Exhausted, pdb.Stale, pdb.Never:
		// The server would refuse; wait for the budget's status to change instead.
		r.parkLocked(st, budgets, string(d.Verdict), d.Reason, 0)
		r.mu.Unlock()
		return
	case pdb.Multiple:
		if st.blockPDB == pdb.JoinKeys(budgets) {
			// Already refused with 500 under these budgets and none changed since.
			r.parkLocked(st, budgets, string(d.Verdict), d.Reason, 0)
			r.mu.Unlock()
			return
		}
	}
	if wait := st.notBefore.Sub(r.e.cfg.Clock.Now()); wait > 0 {
		r.queue.AddAfter(key, wait)
		r.mu.Unlock()
		return
	}
	rvBefore := resourceVersions(budgets)
	st.attempts++
	attempt := st.attempts
	var lag time.Duration
	if !st.wokenAt.IsZero() {
		lag, st.wokenAt = r.e.cfg.Clock.Since(st.wokenAt), time.Time{}
	}
	r.sum.Evictions++
	// Reserve the allowance before the call, so that concurrent workers never ask a
	// budget for more than its status says it has.
	reserved := ""
	if b := d.Budget(); b != nil && d.Consumes() {
		reserved = b.Key()
		r.inflight[reserved]++
	}
	r.mu.Unlock()

	r.e.emit(Event{Type: EventEvictionStarted, Node: st.node, Pod: key, Attempt: attempt, Wave: st.wave, Lag: lag})
	ans := classify(r.e.evict(r.ctx, cur, false))

	r.mu.Lock()
	defer r.mu.Unlock()
	if ans.outcome != accepted && reserved != "" && r.inflight[reserved] > 0 {
		r.inflight[reserved]--
	}
	if ans.outcome != accepted && ans.outcome != gone {
		// The backoff is taken once per refusal (the per-pod exponential and the overall
		// token bucket), never on a wake-up, and never shorter than Retry-After.
		r.sum.Refusals++
		st.refused = true
		st.notBefore = r.e.cfg.Clock.Now().Add(max(ans.retryAfter, r.e.cfg.RateLimiter.When(key)))
	}
	switch ans.outcome {
	case accepted:
		st.phase, st.refused, st.acceptedAt = terminating, false, r.e.cfg.Clock.Now()
		r.queue.Forget(key)
		r.e.emit(Event{Type: EventEvictionAccepted, Node: st.node, Pod: key, Attempt: attempt})
		r.queue.AddAfter(key, r.terminationCheckDelay(cur))
	case gone:
		r.goneLocked(st)
	case refusedByPDB:
		named := budgets
		if b := r.budget(cur.Namespace, ans.pdb); b != nil {
			named = []*pdb.Budget{b}
		}
		r.parkLocked(st, named, "DisruptionBudget", ans.message, 0)
		r.wakeIfChangedLocked(st, rvBefore)
	case multiplePDBs:
		r.parkLocked(st, budgets, string(pdb.Multiple), pdb.Decide(cur, budgets).Reason, 0)
		st.blockPDB = pdb.JoinKeys(budgets)
		r.wakeIfChangedLocked(st, rvBefore)
	default:
		reason := map[outcome]string{forbidden: "Forbidden", throttled: "TooManyRequests", failed: "Error"}[ans.outcome]
		delay := max(0, st.notBefore.Sub(r.e.cfg.Clock.Now()))
		r.e.emit(Event{Type: EventEvictionBlocked, Node: st.node, Pod: key, Reason: reason,
			Message: ans.message, RetryAfter: delay, Attempt: attempt})
		r.queue.AddAfter(key, delay)
	}
}

// currentLocked returns the pod as the node's informer sees it, if it is still the pod
// the drain means (same UID).
func (r *run) currentLocked(st *podState) (*corev1.Pod, bool) {
	store := r.stores[st.node]
	if store == nil {
		return st.pod, true
	}
	obj, exists, err := store.GetByKey(st.key)
	if err != nil || !exists {
		return nil, false
	}
	cur := obj.(*corev1.Pod)
	return cur, cur.UID == st.pod.UID
}

// parkLocked makes the pod wait until one of budgets changes (and at least retryAfter).
func (r *run) parkLocked(st *podState, budgets []*pdb.Budget, reason, message string, retryAfter time.Duration) {
	if retryAfter > 0 {
		st.notBefore = r.e.cfg.Clock.Now().Add(retryAfter)
	}
	st.parkedRV = resourceVersions(budgets)
	for _, b := range budgets {
		if r.parked[b.Key()] == nil {
			r.parked[b.Key()] = map[string]bool{}
		}
		r.parked[b.Key()][st.key] = true
	}
	keys := pdb.JoinKeys(budgets)
	class := reason
	if reason == "DisruptionBudget" {
		class = string(pdb.Exhausted) // the server's word for the same wait
	}
	st.blockMsg = message
	if keys+"|"+class != st.block {
		st.block = keys + "|" + class
		r.e.emit(Event{Type: EventEvictionBlocked, Node: st.node, Pod: st.key, PDB: keys, Reason: reason,
			Message: message, RetryAfter: max(0, st.notBefore.Sub(r.e.cfg.Clock.Now())), Attempt: st.attempts})
		if reason == string(pdb.Never) || reason == string(pdb.Multiple) {
			r.recordEvent(st.node, corev1.EventTypeWarning, "DrainBlocked", fmt.Sprintf("pod %s: %s", st.key, message))
		}
	}
	if len(budgets) == 0 {
		// Nothing to watch (a budget deleted in between): try again after a backoff.
		r.queue.AddAfter(st.key, r.e.cfg.RateLimiter.When(st.key))
	}
}

// wakeIfChangedLocked requeues a pod at once if a budget it waits on changed while the
// refused request was in flight (its change event was then already handled).
func (r *run) wakeIfChangedLocked(st *podState, before map[string]string) {
	for key, rv := range st.parkedRV {
		if b := r.budgetByKey(key); b == nil || b.PDB.ResourceVersion != rv || before[key] != rv {
			r.wakeLocked(st)
			return
		}
	}
}

// pdbChanged is the PDB informer's handler: the status (or spec) of a budget changed, so
// the pods waiting on it may go now.
func (r *run) pdbChanged(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	p, ok := obj.(*policyv1.PodDisruptionBudget)
	if !ok {
		return
	}
	key := p.Namespace + "/" + p.Name
	r.mu.Lock()
	defer r.mu.Unlock()
	r.inflight[key] = 0
	now := r.e.cfg.Clock.Now()
	for podKey := range r.parked[key] {
		if st := r.pods[podKey]; st != nil && st.phase == waiting {
			st.wokenAt = now
			r.wakeLocked(st)
		}
	}
}

// wakeLocked takes a pod off every budget it waits on and queues it: at once, or when
// the backoff of its last refusal (at least Retry-After) has passed.
func (r *run) wakeLocked(st *podState) {
	for key := range st.parkedRV {
		delete(r.parked[key], st.key)
	}
	st.parkedRV = nil
	delay := st.notBefore.Sub(r.e.cfg.Clock.Now())
	if delay > 0 {
		r.queue.AddAfter(st.key, delay)
	} else {
		r.queue.Add(st.key)
	}
}

// podChanged is the node pod informer's handler: a deleted pod, or one replaced by a new
// pod of the same name, is gone; a terminating one may be past --skip-wait-for-delete-timeout.
func (r *run) podChanged(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.pods[p.Namespace+"/"+p.Name]
	if st == nil || st.phase == finished {
		return
	}
	if _, exists := r.currentLocked(st); !exists {
		r.goneLocked(st)
	}
}

// blockersLocked lists the pods not gone yet, with what they wait on.
func (r *run) blockersLocked() []Blocker {
	var out []Blocker
	for _, st := range r.pods {
		if st.phase == finished {
			continue
		}
		msg := st.blockMsg
		switch {
		case st.phase == terminating:
			msg = "evicted, still terminating"
		case msg == "":
			msg = "not evicted yet"
		}
		var keys []string
		for k := range st.parkedRV {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out = append(out, Blocker{Node: st.node, Pod: st.key, PDB: strings.Join(keys, ","), Message: msg})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Node+out[i].Pod < out[j].Node+out[j].Pod })
	return out
}

// budgetsFor returns the budgets selecting pod, from the PDB informer's cache.
func (r *run) budgetsFor(pod *corev1.Pod) []*pdb.Budget {
	objs, _ := r.pdbs.ByIndex(cache.NamespaceIndex, pod.Namespace)
	pdbs := make([]*policyv1.PodDisruptionBudget, 0, len(objs))
	for _, o := range objs {
		pdbs = append(pdbs, o.(*policyv1.PodDisruptionBudget))
	}
	return pdb.NewIndex(pdbs).For(pod)
}

func (r *run) budget(ns, name string) *pdb.Budget { return r.budgetByKey(ns + "/" + name) }

func (r *run) budgetByKey(key string) *pdb.Budget {
	obj, exists, err := r.pdbs.GetByKey(key)
	if err != nil || !exists {
		return nil
	}
	return pdb.NewIndex([]*policyv1.PodDisruptionBudget{obj.(*policyv1.PodDisruptionBudget)}).Get(key)
}

func resourceVersions(bs []*pdb.Budget) map[string]string {
	out := make(map[string]string, len(bs))
	for _, b := range bs {
		out[b.Key()] = b.PDB.ResourceVersion
	}
	return out
}

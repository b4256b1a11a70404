package drain

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
	"github.com/kubectl-maintenance/kubectl-maintenance/surge"
)

// newSurger surges for run with c.cfg.Surge (nil: never).
func newSurger(c *core, run surgeRun) surger { return surger{c: c, run: run} }

// surgeTimeout bounds a restore, which runs even after an interrupt (like an eviction in
// flight), so that an accepted eviction is always followed by its restore.
const surgeTimeout = 30 * time.Second

// surgePlan is the preflight's part of --surge: each pod a never-allowing budget blocks
// is checked; a pod that can be surged goes in wave 1 with the plan saying so; one that
// can't is an error of its node under --on-blocked=fail (nothing is changed, exit 3), and
// otherwise a blocked pod saying why it cannot be surged.
func (e *Engine) surgePlan(ctx context.Context, pf *preflight) error {
	if e.cfg.Surge == nil || !e.cfg.Surge.Starts() {
		return nil
	}
	for i := range pf.plan.Nodes {
		np := &pf.plan.Nodes[i]
		for j := range np.Steps {
			s := &np.Steps[j]
			b := s.Decision.Budget()
			if s.Wave != 0 || s.Decision.Verdict != pdb.Never || b == nil {
				continue
			}
			t, err := e.cfg.Surge.Check(ctx, s.Pod, b.PDB)
			var refused *surge.RefusedError
			if errors.As(err, &refused) {
				// Only --on-blocked=fail refuses the run up front; otherwise the pod is
				// blocked like any pod of a never-allowing budget, and follows --on-blocked
				// (skip gives its node up with this reason; wait waits for --timeout).
				if e.cfg.OnBlocked == OnBlockedFail {
					np.Errors = append(np.Errors, refused.Error())
				} else {
					s.Blocker = "cannot be surged: " + refused.Error()
				}
				continue
			}
			if err != nil {
				return fmt.Errorf("check --surge for pod %s/%s: %w", s.Pod.Namespace, s.Pod.Name, err)
			}
			if !slices.Contains(pf.permits.SurgeNamespaces, t.Namespace) {
				pf.permits.SurgeNamespaces = append(pf.permits.SurgeNamespaces, t.Namespace)
				slices.Sort(pf.permits.SurgeNamespaces)
			}
			s.Wave, s.Blocker = 1, ""
			s.Decision.Reason = fmt.Sprintf("will be surged: deployment %s scaled from %d to %d replicas, the pod evicted once the new one is Ready on another node, then back to %d",
				t.Key(), t.Replicas, t.Replicas+1, t.Replicas)
			pf.plan.Waves = max(pf.plan.Waves, 1)
		}
	}
	return nil
}

// surgeDryRun says what the surge of a step surgePlan marked would do, sending nothing (a
// server dry-run eviction would be judged against the budget before the surge): it
// reports whether it did.
func (e *Engine) surgeDryRun(node string, s pdb.Step, mode string) bool {
	b := s.Decision.Budget()
	if e.cfg.Surge == nil || !e.cfg.Surge.Starts() || s.Decision.Verdict != pdb.Never || s.Wave == 0 || b == nil {
		return false
	}
	key := s.Pod.Namespace + "/" + s.Pod.Name
	e.emit(event.Event{Type: event.EventSurgeStarted, Node: node, Pod: key, PDB: b.Key(), Message: "pod " + key + " " + s.Decision.Reason, DryRun: mode})
	e.emit(event.Event{Type: event.EventPodEvicted, Node: node, Pod: key, Wave: s.Wave, DryRun: mode})
	return true
}

// resumeSurges finds the surges an interrupted run left for this run's nodes: one whose
// pod is gone is restored at once; one whose pod is still there is finished by this run
// (its eviction, once accepted, restores the count).
func (sg *surger) resumeSurges(ctx context.Context) {
	s := sg.c.cfg.Surge
	if s == nil {
		return
	}
	pending, err := s.Pending(ctx, sg.run.plannedNodes())
	if apierrors.IsForbidden(err) && !s.Starts() {
		return // a user who may not list Deployments made no surge to resume (not without --surge)
	}
	if err != nil {
		sg.c.emit(event.Event{Type: event.EventWarning, Reason: "SurgeResume", Message: "could not look for surges to resume: " + err.Error()})
		return
	}
	for _, t := range pending {
		alive, err := s.PodAlive(ctx, t)
		if err != nil {
			sg.c.emit(event.Event{Type: event.EventWarning, Node: t.Node, Pod: t.Pod, Deployment: t.Key(), Reason: "SurgeResume", Message: err.Error()})
			continue
		}
		if !alive {
			sg.restore(ctx, t, "Resumed")
			continue
		}
		sg.c.lock()
		if sg.byUID == nil {
			sg.byUID = map[string]*surgeState{}
		}
		sg.byUID[t.PodUID] = &surgeState{target: t}
		sg.c.emit(event.Event{Type: event.EventSurgeStarted, Node: t.Node, Pod: t.Pod, Deployment: t.Key(), Reason: "Resumed",
			Message: fmt.Sprintf("deployment %s was scaled from %d to %d replicas by an interrupted run to move pod %s; finishing it", t.Key(), t.Replicas, t.Replicas+1, t.Pod)})
		sg.c.unlock()
	}
}

// surgeLocked is consulted where pod's eviction is blocked by budget b, which never
// allows a disruption. With --surge it starts (once) the surge of the pod's Deployment
// and reports true: the pod is not parked as blocked but waits for the surge, which
// queues it again once the new pod is Ready. A pod that can't be surged (false) waits
// like any other.
func (sg *surger) surgeLocked(st *podState, pod *corev1.Pod, b *pdb.Budget) bool {
	if sg.c.cfg.Surge == nil || !sg.c.cfg.Surge.Starts() || b == nil {
		return false
	}
	if sg.byUID == nil {
		sg.byUID = map[string]*surgeState{}
	}
	ss := sg.byUID[string(pod.UID)]
	switch {
	case ss == nil:
		ss = &surgeState{}
		sg.byUID[string(pod.UID)] = ss
		st.blockMsg = "surging its deployment"
		p, budget := pod, b.PDB
		sg.c.goroutine(func() { sg.surge(st, p, budget, ss) })
		return true
	case ss.refused:
		return false
	case ss.ready:
		// The budget's status does not count the new pod yet: wait for it to change.
		sg.run.parkLocked(st, []*pdb.Budget{b}, string(pdb.Exhausted),
			fmt.Sprintf("pdb %s %s; waiting for it to count the surged pod", b.Key(), b.Numbers()))
		return true
	}
	return true // the surge is in progress
}

// surge checks, starts and waits for the surge of pod's Deployment, then queues the pod.
func (sg *surger) surge(st *podState, pod *corev1.Pod, b *policyv1.PodDisruptionBudget, ss *surgeState) {
	s, ctx := sg.c.cfg.Surge, sg.run.context()
	fail := func(err error) {
		if ctx.Err() != nil {
			return // interrupted: a re-run or uncordon finishes or restores it
		}
		sg.c.lock()
		ss.refused = true
		sg.c.emit(event.Event{Type: event.EventWarning, Node: st.node, Pod: st.key, Reason: "SurgeRefused", Message: err.Error()})
		sg.run.add(st.key)
		sg.c.unlock()
	}
	t, err := s.Check(ctx, pod, b)
	if err != nil {
		fail(err)
		return
	}
	n, err := s.Start(ctx, t, sg.c.cfg.Clock.Now())
	if err != nil {
		fail(err)
		return
	}
	sg.c.lock()
	ss.target = t
	st.blockMsg = fmt.Sprintf("surging deployment %s: waiting for its new pod to be Ready on another node (a re-run or `kubectl maintenance uncordon %s` restores its count)", t.Key(), st.node)
	reason, msg := "", fmt.Sprintf("deployment %s scaled from %d to %d replicas to move pod %s (its count recorded in annotation %s)", t.Key(), t.Replicas, n, st.key, surge.Annotation)
	if t.Resumed {
		reason = "Resumed"
	}
	sg.c.emit(event.Event{Type: event.EventSurgeStarted, Node: st.node, Pod: st.key, Deployment: t.Key(), Reason: reason, Message: msg})
	sg.c.unlock()
	ready, node, err := s.WaitReady(ctx, t)
	if err != nil {
		fail(err)
		return
	}
	sg.c.lock()
	ss.ready = true
	st.blockMsg = ""
	sg.c.emit(event.Event{Type: event.EventSurgeReady, Node: st.node, Pod: st.key, Deployment: t.Key(),
		Message: fmt.Sprintf("pod %s of deployment %s is Ready on node %s; evicting pod %s", ready, t.Key(), node, st.key)})
	sg.run.add(st.key)
	sg.c.unlock()
}

// surgeAnsweredLocked is called with the server's answer to st's eviction (even when the
// pod was seen gone before the answer): once it is accepted (or the pod is gone), a
// surged pod's Deployment is restored at once. The old pod is terminating, so its
// ReplicaSet no longer counts it; restoring now keeps the replacement the ReplicaSet may
// already have created for it from ever becoming Ready (see the README's --surge section).
func (sg *surger) surgeAnsweredLocked(st *podState, o outcome) {
	ss := sg.byUID[string(st.pod.UID)]
	if (o != accepted && o != gone) || ss == nil || ss.target == nil || ss.restoring {
		return
	}
	ss.restoring = true
	t := ss.target
	sg.c.goroutine(func() { sg.restore(sg.run.context(), t, "") })
}

// restore brings t's Deployment back and says so; it runs even after an interrupt. A
// surge resumed ("Resumed") is unwound: Ready surplus pods are evicted first.
func (sg *surger) restore(ctx context.Context, t *surge.Target, reason string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), surgeTimeout)
	defer cancel()
	var res surge.Restored
	var evicted []string
	var err error
	if reason == "Resumed" {
		res, evicted, err = sg.c.cfg.Surge.Unwind(ctx, t.Namespace, t.Name)
	} else {
		res, err = sg.c.cfg.Surge.Restore(ctx, t.Namespace, t.Name)
	}
	after := ""
	if len(evicted) > 0 {
		after = fmt.Sprintf(", after evicting its surplus Ready pod(s) %s", strings.Join(evicted, ", "))
	}
	ev := event.Event{Type: event.EventDeploymentRestored, Node: t.Node, Pod: t.Pod, Deployment: t.Key(), Reason: reason}
	switch {
	case err != nil:
		ev = event.Event{Type: event.EventWarning, Node: t.Node, Pod: t.Pod, Deployment: t.Key(), Reason: "SurgeRestore",
			Message: fmt.Sprintf("%v; run the same command again or `kubectl maintenance uncordon %s` to restore it", err, t.Node)}
	case res.Already:
		return
	case res.Changed:
		ev.Reason = "Changed"
		ev.Message = fmt.Sprintf("deployment %s was scaled to %d by someone else during the surge: its count is kept; the surge record is removed", t.Key(), res.Replicas)
	default:
		ev.Message = fmt.Sprintf("deployment %s restored from %d to %d replicas%s", t.Key(), res.Surged, res.Replicas, after)
	}
	sg.c.emit(ev)
}

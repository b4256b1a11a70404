package maintenance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// PickupTimeout is how long a follower waits for a controller to take up a new object
// before it says why none might.
const PickupTimeout = 30 * time.Second

// FollowInterval is how often a follower reads the object.
const FollowInterval = time.Second

// NodeChange is what changed on one node of a followed Maintenance since the last read.
type NodeChange struct {
	// Node is the node's status now.
	Node v1alpha1.NodeStatus
	// Was is the node's state at the last read ("" when the node is new in the status).
	Was string
	// To is the Maintenance's target pool (spec.to, a move's).
	To string
	// StateChanged: the node is new in the status, or its state changed.
	StateChanged bool
	// Blockers are the node's blockers that the last read did not have.
	Blockers []v1alpha1.Blocker
}

// Follower reads a Maintenance until it ends and reports what changed on its nodes, for
// a front end to print (the CLI's --server-side and follow).
type Follower struct {
	// Client reads the Maintenance.
	Client client.Client
	// Kube reads the controller's Lease when no controller takes the object up (nil: the
	// cause is not looked for).
	Kube kubernetes.Interface
	// Changed is called with each node's change, in the status's order.
	Changed func(NodeChange)
	// NotTakenUp is called once when no controller took the object up within
	// PickupTimeout, with the likely cause.
	NotTakenUp func(why string)
	// Waiting is called once for each new wait for nodes another run holds (the
	// WaitingForNodes condition's message: who holds which node).
	Waiting func(msg string)
	// Unreachable is called once when a read fails in a way that may pass (the API server
	// restarting, a timeout, a 5xx or 429): the follower reads again with backoff, as a
	// local drain rides out an outage. Reachable is called once when a read answers again,
	// with how long it did not.
	Unreachable func(err error)
	Reachable   func(down time.Duration)

	prev    map[string]v1alpha1.NodeStatus
	waiting string
	every   time.Duration // FollowInterval unless a test sets it
}

// MaxFollowBackoff bounds the wait between two reads while the API server does not answer.
const MaxFollowBackoff = 8 * time.Second

// Follow reads maintenance/name every FollowInterval, reporting what changed, until it is
// done (and returned), deleted (an error), or ctx ends (ctx.Err(): the object runs on in
// the cluster). A name that does not exist at the first read is a usage error
// (`maintenance "NAME" not found`, exit 2), not a deletion. With an error, the object as
// last read is returned too (nil when it was never read), for a summary of how far it
// got. A read in flight is not cancelled by ctx.
func (f *Follower) Follow(ctx context.Context, name string) (*v1alpha1.Maintenance, error) {
	began := time.Now()
	said := false
	f.prev = map[string]v1alpha1.NodeStatus{}
	every := f.every
	if every <= 0 {
		every = FollowInterval
	}
	ticker := time.NewTicker(every)
	defer ticker.Stop()
	var last *v1alpha1.Maintenance
	out := outage{backoff: every}
	for {
		m := &v1alpha1.Maintenance{}
		if err := f.Client.Get(context.WithoutCancel(ctx), types.NamespacedName{Name: name}, m); err != nil {
			switch {
			case apierrors.IsNotFound(err) && last == nil:
				return nil, notFound(name)
			case apierrors.IsNotFound(err):
				return last, fmt.Errorf("maintenance/%s was deleted: its run stopped, the nodes keep their state", name)
			case !Passing(err):
				return last, fmt.Errorf("get maintenance/%s: %w", name, err)
			}
			if err := f.unreachable(ctx, &out, err); err != nil {
				return last, err
			}
			continue
		}
		f.reachable(&out, every)
		last = m
		f.changes(m)
		f.waits(m)
		if m.Status.Phase.Done() {
			return m, nil
		}
		if m.Status.Phase == "" && !said && time.Since(began) >= PickupTimeout {
			said = true
			if f.NotTakenUp != nil {
				f.NotTakenUp(WhyNoController(ctx, f.Kube))
			}
		}
		select {
		case <-ctx.Done():
			return last, ctx.Err()
		case <-ticker.C:
		}
	}
}

// Passing tells an error that may pass by itself (the API server unreachable or
// restarting, a timeout, a 5xx, a 429) from one a retry cannot fix: refused access, a bad
// request, a kind the server does not serve. NotFound is neither: the caller decides.
func Passing(err error) bool {
	switch {
	case err == nil, apierrors.IsNotFound(err), apierrors.IsForbidden(err), apierrors.IsUnauthorized(err),
		apierrors.IsBadRequest(err), apierrors.IsInvalid(err), apierrors.IsMethodNotSupported(err),
		apierrors.IsNotAcceptable(err), apierrors.IsUnsupportedMediaType(err), meta.IsNoMatchError(err),
		runtime.IsNotRegisteredError(err), errors.Is(err, context.Canceled):
		return false
	}
	return true
}

// waits reports a new wait for nodes another run holds, once.
func (f *Follower) waits(m *v1alpha1.Maintenance) {
	c := meta.FindStatusCondition(m.Status.Conditions, v1alpha1.ConditionWaitingForNodes)
	msg := ""
	if c != nil && c.Status == metav1.ConditionTrue {
		msg = c.Message
	}
	if m.Status.Phase == v1alpha1.PhaseScheduled { // Windows (planned maintenance).
		msg = m.Status.Message
	}
	if msg != "" && msg != f.waiting && f.Waiting != nil {
		f.Waiting(msg)
	}
	f.waiting = msg
}

// changes reports what changed on each node since the last read.
func (f *Follower) changes(m *v1alpha1.Maintenance) {
	for _, n := range m.Status.Nodes {
		was, seen := f.prev[n.Name]
		f.prev[n.Name] = n
		ch := NodeChange{Node: n, Was: was.State, To: m.Spec.To, StateChanged: !seen || was.State != n.State}
		for _, b := range n.Blockers {
			if b.Message == TerminatingBlocker {
				continue // an eviction accepted: no wait of a budget's (inherit.go keeps it)
			}
			if !slices.Contains(was.Blockers, b) {
				ch.Blockers = append(ch.Blockers, b)
			}
		}
		if (ch.StateChanged || len(ch.Blockers) > 0) && f.Changed != nil {
			f.Changed(ch)
		}
	}
}

// Events are the change as the events a local run of the same action emits, for the
// NDJSON stream of a followed Maintenance. The status
// carries node states and blockers, not each eviction, so only these come out:
// node.cordoned (also before the first state past it, when no read saw the node
// cordoned), node.drained, node.moved (message: the target pool), node.uncordoned,
// node.failed, node.blocked and node.not_started (message: the node's), and one
// pod.eviction_blocked per new blocker (pdb, message, cause, remedy). A state between two
// reads (1 s apart) is not seen; pod.eviction_started, pod.eviction_accepted,
// pod.evicted, the plan, warnings and pacing are never sent. Events carry the time the
// node entered its state, when known.
func (ch NodeChange) Events() []event.Event {
	n := ch.Node
	var at time.Time
	if n.Since != nil {
		at = n.Since.Time
	}
	node := func(t event.Type, msg string) event.Event {
		return event.Event{Type: t, Time: at, Node: n.Name, Message: msg}
	}
	var out []event.Event
	if ch.StateChanged {
		unseen := ch.Was == "" || ch.Was == NodePending // no read saw the node cordoned
		switch n.State {
		case NodeCordoned:
			out = append(out, node(event.EventNodeCordoned, ""))
		case NodeDraining:
			if unseen {
				out = append(out, node(event.EventNodeCordoned, ""))
			}
		case NodeDrained:
			if unseen {
				out = append(out, node(event.EventNodeCordoned, ""))
			}
			out = append(out, node(event.EventNodeDrained, ""))
		case NodeMoved:
			out = append(out, node(event.EventNodeMoved, ch.To))
		case NodeUncordoned:
			out = append(out, node(event.EventNodeUncordoned, ""))
		case NodeFailed:
			out = append(out, node(event.EventNodeFailed, n.Message))
		case NodeBlocked:
			ev := node(event.EventNodeBlocked, n.Message)
			ev.PDB = blockerPDBs(n.Blockers)
			out = append(out, ev)
		case NodeNotStarted:
			out = append(out, node(event.EventNodeNotStarted, n.Message))
		}
	}
	var waits []event.Event
	for _, b := range ch.Blockers {
		waits = append(waits, event.Event{Type: event.EventEvictionBlocked, Node: n.Name, Pod: b.Pod, PDB: b.PDB,
			Message: b.Message, Cause: b.Cause, Remedy: b.Remedy})
	}
	if ch.StateChanged && (n.State == NodeBlocked || n.State == NodeFailed) {
		return append(waits, out...) // as a local run: the waits, then the node given up
	}
	return append(out, waits...)
}

// blockerPDBs joins the budgets the blockers name, each once, in order.
func blockerPDBs(bs []v1alpha1.Blocker) string {
	var keys []string
	for _, b := range bs {
		for _, k := range strings.Split(b.PDB, ",") {
			if k != "" && !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	return strings.Join(keys, ",")
}

// Summary is a finished Maintenance as the CLI's summary: its counts and elapsed time,
// and every node not drained, moved, cordoned or uncordoned as pending.
func Summary(m *v1alpha1.Maintenance) drain.Summary {
	s := m.Status
	var elapsed time.Duration
	if s.StartTime != nil && s.CompletionTime != nil {
		elapsed = s.CompletionTime.Sub(s.StartTime.Time)
	}
	sum := drain.Summary{NodesDrained: int(s.Counts.NodesDrained), NodesFailed: int(s.Counts.NodesFailed), NodesPending: int(s.Counts.NodesPending),
		PodsEvicted: int(s.Counts.PodsEvicted), PodsPending: int(s.Counts.PodsPending), Evictions: int(s.Counts.Evictions), Refusals: int(s.Counts.Refusals), Elapsed: elapsed,
		PodsForced: int(s.Counts.PodsForced), PodsLeftOnDeadNodes: int(s.Counts.PodsLeftOnDeadNodes)}
	for _, n := range s.Nodes {
		switch {
		case n.State == v1alpha1.NodeStateBlocked:
			sum.Skipped = append(sum.Skipped, drain.BlockedNode{Node: n.Name, Reason: n.Message})
		case n.State == v1alpha1.NodeStateNotStarted:
			sum.NotStarted = append(sum.NotStarted, n.Name)
		case !v1alpha1.NodeStateDone(n.State, m.Spec.Action):
			sum.PendingNodes = append(sum.PendingNodes, n.Name)
		}
	}
	return sum
}

// WhyNoController names the likely cause of an object no controller took up, from the
// controller's Lease (read with cs; nil when there is no client).
func WhyNoController(ctx context.Context, cs kubernetes.Interface) string {
	if cs == nil {
		return "is `kubectl maintenance controller` running?"
	}
	l, err := cs.CoordinationV1().Leases("kube-system").Get(context.WithoutCancel(ctx), LeaseName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return "no controller has run here (no Lease kube-system/kubectl-maintenance-controller): start `kubectl maintenance controller`, or apply config/rbac and config/manager"
	case apierrors.IsForbidden(err):
		return "is `kubectl maintenance controller` running? (you may not read its Lease in kube-system to tell)"
	case err != nil:
		return fmt.Sprintf("is `kubectl maintenance controller` running? (its Lease: %v)", err)
	}
	if stale(l) {
		return "the controller is not running: its Lease kube-system/kubectl-maintenance-controller was not renewed (last by " + ptr.Deref(l.Spec.HolderIdentity, "nobody") + ")"
	}
	return "the controller runs (" + ptr.Deref(l.Spec.HolderIdentity, "?") + ") but did not take it up: check its permissions (config/rbac) and its log"
}

func stale(l *coordinationv1.Lease) bool {
	if l.Spec.RenewTime == nil || l.Spec.LeaseDurationSeconds == nil {
		return true
	}
	return time.Since(l.Spec.RenewTime.Time) > time.Duration(*l.Spec.LeaseDurationSeconds)*time.Second
}

// outage is what Follow knows of an API server it cannot reach: since when, and how long
// it waits before it asks again.
type outage struct {
	since   time.Time
	backoff time.Duration
}

// unreachable handles a read that failed with err, an error that passes: it tells
// Unreachable once per outage, then waits the backoff and doubles it (up to
// MaxFollowBackoff). It returns ctx's error when ctx ends first.
func (f *Follower) unreachable(ctx context.Context, o *outage, err error) error {
	if o.since.IsZero() {
		o.since = time.Now()
		if f.Unreachable != nil {
			f.Unreachable(err)
		}
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(o.backoff):
	}
	o.backoff = min(2*o.backoff, MaxFollowBackoff)
	return nil
}

// reachable ends an outage, if any: it tells Reachable how long it lasted, and the
// backoff starts again at every.
func (f *Follower) reachable(o *outage, every time.Duration) {
	if o.since.IsZero() {
		return
	}
	if f.Reachable != nil {
		f.Reachable(time.Since(o.since))
	}
	o.since, o.backoff = time.Time{}, every
}

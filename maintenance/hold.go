package maintenance

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// holdCheck is how often a paused object's hold looks for heartbeats to renew: a fifth
// of the heartbeat's interval, as a run's own heartbeat does.
const holdCheck = noderecord.HeartbeatInterval / 5

// keeper is a paused Maintenance's hold on its nodes: a pause stops the run with
// drain.ErrPaused, which leaves each node it held draining under the object's identity
// (RunID), and the keeper renews those nodes' heartbeats so that nobody else takes them
// (an uncordon without --force is refused, another drain waits, each naming the
// Maintenance) until the object resumes (a run under the same identity takes them at
// once), is cancelled or deleted.
type keeper struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// keep starts m's keeper unless it runs already. It ends with base (the manager's).
func (r *Reconciler) keep(base context.Context, m *v1alpha1.Maintenance) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.kept[m.Name] != nil {
		return
	}
	ctx, cancel := context.WithCancel(base)
	k := &keeper{cancel: cancel, done: make(chan struct{})}
	r.kept[m.Name] = k
	id, name := RunID(m), m.Name
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer close(k.done)
		r.hold(ctx, name, id)
	}()
}

// unkeep ends name's keeper, if any, and waits for it.
func (r *Reconciler) unkeep(name string) {
	r.mu.Lock()
	k := r.kept[name]
	delete(r.kept, name)
	r.mu.Unlock()
	if k == nil {
		return
	}
	k.cancel()
	<-k.done
}

// hold renews, until ctx ends, the heartbeat of every node of name's status that still
// names run id and is draining, once it is HeartbeatInterval old. A node is read once to
// learn its record; after that a renewal is one conditional patch (RenewHeartbeat), and
// the node is read again only when a renewal was refused.
func (r *Reconciler) hold(ctx context.Context, name, id string) {
	t := r.Clock.NewTicker(holdCheck)
	defer t.Stop()
	known := map[string]heldNode{}
	for {
		r.renewHeld(ctx, name, id, known)
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
	}
}

// heldNode is what a keeper knows of a node it holds: the run recorded there, exactly as
// written (the heartbeat's patch tests it), and when its heartbeat was last set.
type heldNode struct {
	run  noderecord.Run
	beat time.Time
}

// renewHeld is one round of hold.
func (r *Reconciler) renewHeld(ctx context.Context, name, id string, known map[string]heldNode) {
	m := &v1alpha1.Maintenance{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: name}, m); err != nil {
		return
	}
	now := r.Clock.Now()
	for _, ns := range m.Status.Nodes {
		if v1alpha1.NodeStateDone(ns.State, m.Spec.Action) {
			continue
		}
		k, ok := known[ns.Name]
		if !ok {
			n, err := r.Kube.CoreV1().Nodes().Get(ctx, ns.Name, metav1.GetOptions{})
			if err != nil {
				continue
			}
			rec := noderecord.Read(n, "")
			if rec.Run.ID != id || rec.State != noderecord.StateDraining {
				continue // not this object's (never started, or taken): nothing to hold
			}
			k = heldNode{run: noderecord.Run{ID: rec.Run.ID, Host: rec.Run.Host, PID: rec.Run.PID}, beat: rec.Heartbeat}
		}
		if now.Sub(k.beat) >= noderecord.HeartbeatInterval {
			if err := noderecord.RenewHeartbeat(ctx, r.Kube.CoreV1(), ns.Name, k.run, now); err != nil {
				r.Logger.V(2).Info("could not renew a paused maintenance's heartbeat", "maintenance", name, "node", ns.Name, "err", err)
				delete(known, ns.Name) // read it again next round
				continue
			}
			k.beat = now
		}
		known[ns.Name] = k
	}
}

package drain

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// ReasonReleased is the Reason of the EventNodeFailed a run sends for a node someone took
// from it (uncordoned, or its record removed or rewritten by another run): the node left
// the run, which stops every action on it at once and writes nothing more there.
const ReasonReleased = "Released"

// watchLeaves watches the nodes this tool records on (those carrying noderecord.LabelState: every
// node a run holds) and ends at once each node this run holds that someone took from it:
// made schedulable again (`uncordon --force`, `kubectl uncordon`), its record removed, or
// its record rewritten by another run. Without it a run would go on evicting whatever the
// scheduler puts back on a schedulable node, for as long as it lives. The heartbeat
// (hold.go) finds a taken record too, but only at its next renewal, up to 30 s later.
func (nh *nodeHolds) watchLeaves(ctx context.Context) {
	f := informers.NewSharedInformerFactoryWithOptions(nh.c.cfg.Client, 0,
		informers.WithTransform(trimManagedFields),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = noderecord.LabelState }))
	inf := f.Core().V1().Nodes().Informer()
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) {
			if n, ok := obj.(*corev1.Node); ok {
				nh.checkLeft(n)
			}
		},
		// A node that no longer carries noderecord.LabelState left the watch's selection: its record
		// was removed (uncordon) or the node deleted. The watch gives the node as it was
		// before; read it as it is now.
		DeleteFunc: func(obj any) {
			name := ""
			switch o := obj.(type) {
			case *corev1.Node:
				name = o.Name
			case cache.DeletedFinalStateUnknown:
				name = nameOfKey(o.Key)
			}
			if name != "" && nh.holds(name) {
				nh.c.goroutine(func() { nh.checkLeftNow(ctx, name) })
			}
		},
	})
	if err != nil {
		nh.c.cfg.Logger.V(2).Info("could not watch the nodes this run holds", "err", err)
		return
	}
	f.Start(ctx.Done())
	<-ctx.Done()
	f.Shutdown()
}

// holds reports whether the run holds the node and works on it still.
func (nh *nodeHolds) holds(name string) bool {
	nh.c.lock()
	defer nh.c.unlock()
	ns := nh.run.nodeLocked(name)
	return ns != nil && ns.pol.held && !ns.finished && !ns.failing && !ns.finishing
}

// checkLeftNow reads the node and ends it for this run if it left (gone, uncordoned, its
// record removed or another's).
func (nh *nodeHolds) checkLeftNow(ctx context.Context, name string) {
	n, err := nh.c.cfg.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	switch {
	case err == nil:
		nh.checkLeft(n)
	case ctx.Err() == nil && apierrors.IsNotFound(err):
		nh.run.nodeGone(name) // its drain ends, gone, not failed (deadnode.go)
	}
}

// checkLeft ends the node for this run when n says someone took it.
func (nh *nodeHolds) checkLeft(n *corev1.Node) {
	if !nh.holds(n.Name) {
		return
	}
	if why := leftBecause(n, nh.self().ID, nh.c.cfg.Clock.Now()); why != "" {
		nh.leave(n.Name, why)
	}
}

// leftBecause says why a node held by run self has left it ("" when it has not): another
// run's record, no record, or no cordon.
func leftBecause(n *corev1.Node, self string, now time.Time) string {
	rec := noderecord.Read(n, "")
	at := now.UTC().Format(time.RFC3339)
	switch {
	case rec.Run.ID != "" && rec.Run.ID != self:
		return fmt.Sprintf("taken over by %s at %s", rec.Run, at)
	case !n.Spec.Unschedulable:
		return fmt.Sprintf("uncordoned by someone else (uncordon --force or kubectl uncordon) at %s", at)
	case rec.Run.ID == "" && rec.State == "":
		return fmt.Sprintf("its record was removed by someone else at %s", at)
	}
	return ""
}

// leave ends the node for this run at once, because someone took it: no new eviction, no
// wait, nothing written on the node (it is no longer this run's). The run goes on with its
// other nodes; the node ends failed, with Reason ReasonReleased and why.
func (nh *nodeHolds) leave(name, why string) {
	nh.c.lock()
	defer nh.c.unlock()
	ns := nh.run.nodeLocked(name)
	if ns == nil || !ns.pol.held || ns.finished || ns.failing {
		return
	}
	ns.pol.held = false
	msg := fmt.Sprintf("node %s left this run: %s; no further eviction from it", name, why)
	nh.c.emit(event.Event{Type: event.EventWarning, Node: name, Reason: ReasonReleased, Message: msg})
	nh.run.endFailedLocked(ns, msg, ReasonReleased)
}

// nameOfKey is the name in a cluster-scoped object's store key.
func nameOfKey(key string) string {
	_, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return ""
	}
	return name
}

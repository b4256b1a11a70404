package drain

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
)

// ReportingController is the reportingController of the Events the drain records on nodes.
const ReportingController = "kubectl-maintenance.io/drain"

// Bounds of the recorder's writes: each write, and the flush at the end of a run.
const (
	recordWriteTimeout = 10 * time.Second
	recordFlushTimeout = 5 * time.Second
)

// newRecorder starts a broadcaster and its watcher for one run.
func newRecorder(c kubernetes.Interface, log klog.Logger, warn func(string)) *recorder {
	ctx, cancel := context.WithCancel(context.Background())
	r := &recorder{
		b:    events.NewBroadcaster(&events.EventSinkImpl{Interface: c.EventsV1()}),
		sink: &events.EventSinkImpl{Interface: c.EventsV1()},
		log:  log, warn: warn, ctx: ctx, cancel: cancel, seen: map[string]bool{},
	}
	r.rec = r.b.NewRecorder(scheme.Scheme, ReportingController)
	if _, err := r.b.StartEventWatcher(r.write); err != nil {
		log.V(2).Info("could not start recording node events", "err", err)
		r.denied = true
	}
	return r
}

// record posts an Event on node (Normal or Warning); it never blocks. The same event
// twice in a run is recorded once.
func (r *recorder) record(node, eventType, reason, message string) {
	if r == nil {
		return
	}
	key := strings.Join([]string{node, eventType, reason, message}, "\x00")
	// Nodes are cluster-scoped; kubelet and kubectl describe use the node's name as its
	// UID in Events.
	r.recordRegarding(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node, UID: types.UID(node)}}, key, eventType, reason, message)
}

// recordRegarding posts an Event on obj, once per key in the run; it never blocks.
func (r *recorder) recordRegarding(obj runtime.Object, key, eventType, reason, message string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	if r.denied || r.closing || r.seen[key] {
		r.mu.Unlock()
		return
	}
	r.seen[key] = true
	r.posted++
	r.mu.Unlock()
	r.rec.Eventf(obj, nil, eventType, reason, reason, "%s", message)
}

// write is the broadcaster's watcher: it writes one Event to the API server.
func (r *recorder) write(obj runtime.Object) {
	r.active.Add(1)
	defer r.active.Done()
	defer r.done()
	ev, ok := obj.(*eventsv1.Event)
	r.mu.Lock()
	skip := r.denied || r.ctx.Err() != nil
	r.mu.Unlock()
	if !ok || skip {
		return
	}
	ctx, cancel := context.WithTimeout(r.ctx, recordWriteTimeout)
	defer cancel()
	_, err := r.sink.Create(ctx, ev)
	switch {
	case err == nil, apierrors.IsAlreadyExists(err):
	case apierrors.IsForbidden(err):
		r.mu.Lock()
		first := !r.denied
		r.denied = true
		r.mu.Unlock()
		if first {
			r.warn(fmt.Sprintf("cannot record Events on the nodes (the drain goes on without them): %s", err))
		}
	default:
		r.log.V(2).Info("could not record node event", "node", ev.Regarding.Name, "reason", ev.Reason, "err", err)
	}
}

// done counts an event as handled and wakes stop when it was the last one.
func (r *recorder) done() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.handled++
	if r.closing && r.handled >= r.posted && r.idle != nil {
		close(r.idle)
		r.idle = nil
	}
}

// stop flushes and shuts the broadcaster down: it waits (at most recordFlushTimeout) until
// every event posted is written, then cancels a write still in flight, waits for it, and
// shuts the broadcaster down, which ends its goroutines. Nothing is recorded afterwards.
func (r *recorder) stop() {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.closing = true
	var idle chan struct{}
	if r.handled < r.posted {
		r.idle = make(chan struct{})
		idle = r.idle
	}
	r.mu.Unlock()
	if idle != nil {
		t := time.NewTimer(recordFlushTimeout)
		select {
		case <-idle:
		case <-t.C:
			r.log.V(2).Info("node events not all recorded in time", "timeout", recordFlushTimeout)
		}
		t.Stop()
	}
	r.cancel()
	r.active.Wait()
	r.b.Shutdown()
}

// startRecorder returns the run's recorder, or nil when the engine records no Events.
// Its one warning goes out as the drain's own warning event.
func (e *Engine) startRecorder() *recorder {
	if !e.cfg.RecordEvents {
		return nil
	}
	return newRecorder(e.cfg.EventClient, e.cfg.Logger, func(msg string) {
		e.emit(event.Event{Type: event.EventWarning, Reason: "EventsForbidden", Message: msg})
	})
}

// recordEvent records an Event on node (best effort, never blocks). The note names the
// run's user when known, as the node's record and conditions do: who asked is part of
// what happened to the node.
func (r *run) recordEvent(node, eventType, reason, message string) {
	if u := r.hold.self().User; u != "" {
		message += " (user " + u + ")"
	}
	r.rec.record(node, eventType, reason, message)
}

// recordOn records an Event on a PodDisruptionBudget (best effort, never blocks): a
// forced pod's Warning on its budget (force.go).
func (r *run) recordOn(b *policyv1.PodDisruptionBudget, eventType, reason, message string) {
	if u := r.hold.self().User; u != "" {
		message += " (user " + u + ")"
	}
	ref := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: b.Name, Namespace: b.Namespace, UID: b.UID}}
	key := strings.Join([]string{"pdb", b.Namespace, b.Name, eventType, reason, message}, "\x00")
	r.rec.recordRegarding(ref, key, eventType, reason, message)
}

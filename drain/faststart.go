package drain

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// Fast start: what stands between the command and its first eviction, at 100 nodes, is
// requests. The plan has just read every node and every pod; the run reuses them:
//   - each cordon is one PATCH carrying the plan's resourceVersion of the node (a node
//     that changed since answers 409, and only then is it read again);
//   - the cordons go as many at a time as the client's burst allows (they are
//     independent patches);
//   - a node this run cordoned a moment ago is not read again before its drain starts;
//   - the informer over every pod starts from the plan's list and watches from its
//     resourceVersion, instead of listing (or streaming) every pod again; it is built
//     while the cordons are in flight, not after them (lifecycle.go drainNodes).
//   - node Events go through a client of their own (Config.EventClient), never in front
//     of a cordon or an eviction.

// freshCordon is how long a cordon this run made stands for the node's state when its
// drain starts (later, the node is read again: someone may have uncordoned it).
const freshCordon = 5 * time.Second

// cordonsAtOnce is how many cordons of a batch are in flight at once.
func (c *Config) cordonsAtOnce() int {
	if c.ClientBurst > 0 {
		return max(c.ClientBurst, cordonsAtOnce)
	}
	return cordonsAtOnce
}

// cordonKnown cordons the node with one PATCH when known (the plan's node) is still
// current; when it is not (409), or nothing is known, it reads the node and patches
// (CordonForDrainAs, which retries conflicts).
func (e *Engine) cordonKnown(ctx context.Context, name string, known *corev1.Node) (already bool, err error) {
	now, origin := e.cfg.Clock.Now(), e.cfg.origin()
	if known != nil {
		patch, err := cordonDecide(known, now, origin)
		if err != nil {
			return false, err // held by another live run (hold.go)
		}
		patch["metadata"].(map[string]any)["resourceVersion"] = known.ResourceVersion
		_, err = noderecord.Patch(ctx, e.cfg.Client.CoreV1(), name, patch, false)
		if err == nil {
			return known.Spec.Unschedulable, nil
		}
		if !apierrors.IsConflict(err) {
			return false, fmt.Errorf("cordon node %s: %w", name, err)
		}
	}
	_, already, err = CordonForDrainAs(ctx, e.cfg.Client, name, false, now, origin)
	return already, err
}

// cordoned records that this run's cordon of the node succeeded at now.
func (f *fastStart) cordoned(name string, now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cordonedAt == nil {
		f.cordonedAt = map[string]time.Time{}
	}
	f.cordonedAt[name] = now
}

// justCordoned reports a node this run cordoned less than freshCordon before now: its
// drain starts without reading it again. It answers once: a retry reads the node.
func (f *fastStart) justCordoned(name string, now time.Time) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	at, ok := f.cordonedAt[name]
	delete(f.cordonedAt, name)
	return ok && now.Sub(at) < freshCordon
}

// fromPlan wraps the pod informer's ListWatch so that its first list is the plan's (when
// the plan listed every pod): the informer then watches from the plan's resourceVersion.
// A later list (the watch expired) is a real one.
func (pf *preflight) fromPlan(lw *cache.ListWatch) cache.ListerWatcher {
	if pf == nil || pf.listed == nil || pf.listedRV == "" {
		return lw
	}
	n := 0
	for _, pods := range pf.listed {
		n += len(pods)
	}
	// Sized once: appending 11,000 pods one by one took 0.85 s of growing and copying.
	list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: pf.listedRV}, Items: make([]corev1.Pod, 0, n)}
	for _, pods := range pf.listed {
		for _, obj := range pods {
			if p, ok := obj.(*corev1.Pod); ok {
				list.Items = append(list.Items, *p) // a copy: the informer's transform trims it
			}
		}
	}
	pf.listed = nil // the run's from now on
	return &seededListWatch{ListWatch: lw, first: list}
}

// seededListWatch answers its first list with a list it was given.
type seededListWatch struct {
	*cache.ListWatch
	first *corev1.PodList
	used  atomic.Bool
}

// List answers the seed once, then lists.
func (s *seededListWatch) List(o metav1.ListOptions) (runtime.Object, error) {
	return s.ListWithContext(context.Background(), o)
}

// ListWithContext answers the seed once, then lists.
func (s *seededListWatch) ListWithContext(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
	if !s.used.Swap(true) {
		return s.first, nil
	}
	return s.ListWatch.ListWithContext(ctx, o)
}

// IsWatchListSemanticsUnSupported makes the reflector list (and so take the seed)
// instead of streaming the initial state through a watch.
func (s *seededListWatch) IsWatchListSemanticsUnSupported() bool { return true }

// cordonsAtOnce bounds the cordon patches of a multi-node drain in flight at once when
// the client's burst is not known (Config.ClientBurst).
const cordonsAtOnce = 8

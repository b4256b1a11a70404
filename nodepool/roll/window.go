package roll

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// Window is the sliding window of a pool drain, move or rollout (see the package doc for
// its rule). It implements drain.Admitter; one run of the engine asks it from one
// goroutine at a time.
type Window struct {
	// Kube reads the nodes.
	Kube kubernetes.Interface
	// Pools are the pools that bound the run, by name; a name without a NodePool (a
	// node's record of a deleted pool) counts with maxUnavailable 1.
	Pools map[string]*v1alpha1.NodePool
	// Of gives each node of the run the pools it counts in (a move: the pools it
	// leaves; a drain --pool or a rollout: the pool).
	Of map[string][]string

	mu  sync.Mutex
	rv  string          // the resourceVersion of the last look (Wait watches from it)
	out map[string]bool // nodes out of service (cordoned or NotReady) at the last look
}

// Why a member counts against its pool, or is named as not counted.
const (
	countInProgress = "in progress"
	countNotReady   = "NotReady"
	notForeign      = "cordoned by someone else"
)

// NotReady reports whether the node's Ready condition is not True.
func NotReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status != corev1.ConditionTrue
		}
	}
	return true
}

// InProgress reports whether this tool's record on the node says a drain or a move is in
// progress on it (by any run).
func InProgress(n *corev1.Node) bool {
	s := noderecord.Read(n, nodepool.MoveAnnotation).State
	return s == noderecord.StateDraining || s == noderecord.StateMoving
}

// judge says why member m counts against its pool (counted), or why it is out of
// service and does not count (notCounted); both empty for a member in service. a is the
// run's own view: its nodes in progress count, its nodes done and not yet started do not
// (whatever their records say).
func (w *Window) judge(m *corev1.Node, a drain.Admission) (counted, notCounted string) {
	ours := w.Of[m.Name] != nil
	switch {
	case slices.Contains(a.Running, m.Name):
		return countInProgress, ""
	case slices.Contains(a.Done, m.Name):
		return "", "" // drained (or given up) by this run: left for its maintenance
	case NotReady(m):
		return countNotReady, ""
	case ours:
		return "", "" // not started yet
	case InProgress(m):
		return countInProgress + " by another run", ""
	case !m.Spec.Unschedulable:
		return "", ""
	case !noderecord.CordonedByUs(m):
		return "", notForeign
	}
	st := noderecord.Read(m, nodepool.MoveAnnotation).State
	if st == "" {
		st = noderecord.StateCordoned
	}
	return "", st + ", left cordoned"
}

func (w *Window) maxUnavailable(pool string) int {
	if p := w.Pools[pool]; p != nil {
		return p.MaxUnavailableOrDefault()
	}
	return 1
}

// selector is the label selector of the window's nodes: one pool's role label, or every
// node when the run counts in several pools (a selector cannot say "any of these").
func (w *Window) selector() string {
	seen := map[string]bool{}
	for _, ps := range w.Of {
		for _, p := range ps {
			seen[p] = true
		}
	}
	if len(seen) != 1 {
		return ""
	}
	for p := range seen {
		return nodepool.RoleLabel(p)
	}
	return ""
}

// Room implements drain.Admitter: "" when a.Node may start now, else the wait line
// naming each full pool's counted members and the members it does not count.
func (w *Window) Room(ctx context.Context, a drain.Admission) (string, error) {
	list, err := w.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: w.selector()})
	if err != nil {
		return "", fmt.Errorf("list the nodes of the pools: %w", err)
	}
	out := map[string]bool{}
	for i := range list.Items {
		n := &list.Items[i]
		out[n.Name] = n.Spec.Unschedulable || NotReady(n)
	}
	w.mu.Lock()
	w.rv, w.out = list.ResourceVersion, out
	w.mu.Unlock()
	if out[a.Node] {
		return "", nil // taking it makes nothing less available
	}
	var full []string
	for _, pool := range w.Of[a.Node] {
		var counted, skipped []string
		for i := range list.Items {
			m := &list.Items[i]
			if _, member := m.Labels[nodepool.RoleLabel(pool)]; !member || m.Name == a.Node {
				continue
			}
			c, nc := w.judge(m, a)
			if c != "" {
				counted = append(counted, m.Name+": "+c)
			} else if nc != "" {
				skipped = append(skipped, m.Name+": "+nc)
			}
		}
		limit := w.maxUnavailable(pool)
		if len(counted) < limit {
			continue
		}
		sort.Strings(counted)
		sort.Strings(skipped)
		line := fmt.Sprintf("pool %s has %d node(s) out of service (%s), its maxUnavailable is %d",
			pool, len(counted), strings.Join(counted, "; "), limit)
		if len(skipped) > 0 {
			line += fmt.Sprintf("; not counted: %s", strings.Join(skipped, "; "))
		}
		full = append(full, line)
	}
	if len(full) == 0 {
		return "", nil
	}
	return "waiting: " + strings.Join(full, "; and "), nil
}

// Unavailable implements drain.Admitter: whether node was out of service (cordoned or
// NotReady) at the last look. Such a node starts first.
func (w *Window) Unavailable(node string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.out[node]
}

// Wait implements drain.Admitter: it returns at the first change of the window's nodes
// since the last look (a watch from its resourceVersion, never polling), or with ctx's
// error.
func (w *Window) Wait(ctx context.Context) error {
	w.mu.Lock()
	rv := w.rv
	w.mu.Unlock()
	return WaitForNodeChange(ctx, w.Kube, metav1.ListOptions{LabelSelector: w.selector(), ResourceVersion: rv})
}

// WaitForNodeChange watches the nodes opts selects from opts.ResourceVersion and returns
// at the first change (or when the watch ends: the caller looks again), or with ctx's
// error.
func WaitForNodeChange(ctx context.Context, kube kubernetes.Interface, opts metav1.ListOptions) error {
	wi, err := kube.CoreV1().Nodes().Watch(ctx, opts)
	if err != nil {
		return fmt.Errorf("watch nodes: %w", err)
	}
	defer wi.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok := <-wi.ResultChan():
			if !ok || ev.Type != watch.Bookmark {
				return nil
			}
		}
	}
}

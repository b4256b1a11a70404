package nodepool

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
)

// Roller picks rolling batches: at most each source pool's maxUnavailable of its members
// out of service at once (cordoned or NotReady, counting members outside the batch that
// already are), and at most Limit nodes per batch.
type Roller struct {
	Kube kubernetes.Interface
	// Pools are the source pools by name; a pool without a NodePool (only a record on
	// the node) counts with maxUnavailable 1.
	Pools map[string]*v1alpha1.NodePool
	// Limit bounds a batch (the target pool's maxUnavailable); 0 means no extra bound.
	Limit int
}

// Unavailable reports whether a node is out of service: cordoned or not Ready.
func Unavailable(n *corev1.Node) bool {
	if n.Spec.Unschedulable {
		return true
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status != corev1.ConditionTrue
		}
	}
	return true
}

func (r *Roller) maxUnavailable(pool string) int {
	if p, ok := r.Pools[pool]; ok && p != nil {
		return p.MaxUnavailableOrDefault()
	}
	return 1
}

// Next returns the nodes of pending (in order) that may start now. sources gives each
// node's source pools; skip names nodes never to count (e.g. ones this run has already
// drained). Pending nodes already out of service go first: taking them does not make
// anything less available. When nothing may start, batch is empty and waitOn names the
// pool whose budget is spent and why.
func (r *Roller) Next(ctx context.Context, pending []string, sources map[string][]string, skip map[string]bool) (batch []string, waitOn string, err error) {
	isPending := map[string]bool{}
	for _, n := range pending {
		isPending[n] = true
	}
	nodes := map[string]*corev1.Node{}
	slots := map[string]int{}
	out := map[string][]string{}
	var names []string
	for _, s := range sourceNames(sources, pending) {
		list, err := r.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: RoleLabel(s)})
		if err != nil {
			return nil, "", fmt.Errorf("list the nodes of pool %s: %w", s, err)
		}
		slots[s] = r.maxUnavailable(s)
		for i := range list.Items {
			n := &list.Items[i]
			nodes[n.Name] = n
			if !isPending[n.Name] && !skip[n.Name] && Unavailable(n) {
				slots[s]--
				out[s] = append(out[s], n.Name)
			}
		}
		names = append(names, s)
	}
	limit := r.Limit
	if limit <= 0 {
		limit = len(pending)
	}
	take := func(name string, force bool) {
		if len(batch) >= limit {
			return
		}
		for _, s := range sources[name] {
			if !force && slots[s] <= 0 {
				return
			}
		}
		for _, s := range sources[name] {
			slots[s]--
		}
		batch = append(batch, name)
	}
	for _, name := range pending {
		if n, ok := nodes[name]; ok && Unavailable(n) {
			take(name, true)
		}
	}
	for _, name := range pending {
		if n, ok := nodes[name]; !ok || !Unavailable(n) {
			take(name, false)
		}
	}
	if len(batch) > 0 {
		return batch, "", nil
	}
	for _, s := range names {
		if slots[s] <= 0 {
			sort.Strings(out[s])
			return nil, fmt.Sprintf("pool %s has %d node(s) out of service (%s), its maxUnavailable is %d",
				s, len(out[s]), strings.Join(out[s], ", "), r.maxUnavailable(s)), nil
		}
	}
	return nil, "no node may start", nil
}

func sourceNames(sources map[string][]string, pending []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range pending {
		for _, s := range sources[n] {
			if !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	sort.Strings(out)
	return out
}

// Wait returns at the next change of a node of the given pools (a watch, no polling), or
// with the context's error.
func (r *Roller) Wait(ctx context.Context, pools []string) error {
	var sel []string
	for _, p := range pools {
		sel = append(sel, RoleLabel(p))
	}
	// One pool: watch its members. Several: a label selector can't say "any of these
	// role labels", so watch every node (the caller looks again at each change).
	opts := metav1.ListOptions{}
	if len(sel) == 1 {
		opts.LabelSelector = sel[0]
	}
	list, err := r.Kube.CoreV1().Nodes().List(ctx, opts)
	if err != nil {
		return fmt.Errorf("list nodes: %w", err)
	}
	opts.ResourceVersion = list.ResourceVersion
	return WaitForNodeChange(ctx, r.Kube, opts)
}

// WaitForNodeChange watches the nodes opts selects from opts.ResourceVersion and returns
// at the first change (or when the watch ends: the caller looks again), or with ctx's
// error.
func WaitForNodeChange(ctx context.Context, kube kubernetes.Interface, opts metav1.ListOptions) error {
	w, err := kube.CoreV1().Nodes().Watch(ctx, opts)
	if err != nil {
		return fmt.Errorf("watch nodes: %w", err)
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok := <-w.ResultChan():
			if !ok || ev.Type != watch.Bookmark {
				return nil
			}
		}
	}
}

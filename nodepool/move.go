package nodepool

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
)

// MoveAnnotation records a move in progress on the node, so that a re-run of the same
// move finishes it from the step reached.
const MoveAnnotation = "kubectl-maintenance.io/pool-move"

// Move steps recorded in MoveAnnotation.
const (
	StepDraining   = "draining"
	StepRelabelled = "relabelled"
)

// MoveState is the value of MoveAnnotation.
type MoveState struct {
	From []string `json:"from"`
	To   string   `json:"to"`
	Step string   `json:"step"`
}

// Drainer drains nodes (the drain engine).
type Drainer interface {
	Run(ctx context.Context, nodes []string) (drain.Summary, error)
}

// Mover moves nodes between pools: cordon, PDB-aware drain, rewrite the role label,
// labels and taints (removing exactly what the old pools applied), uncordon.
type Mover struct {
	Kube  kubernetes.Interface
	Pools client.Client
}

// NodeMove is the plan (and, after Run, the result) of moving one node.
type NodeMove struct {
	Node string
	From []string
	To   string
	// Diff is the exact change: "+label k=v", "-label k=v", "+taint k=v:Effect", ...
	Diff []string
	// Resume is true when the node was already mid-move (a re-run).
	Resume bool
	// Warnings for a person (a RuntimeClass handler the node does not list).
	Warnings []string
	// Uncordon says what happened at the end.
	Uncordon drain.UncordonResult
}

// UsageError is bad input to a move (unknown pool, node not in --from, ...).
type UsageError struct{ msg string }

func (e *UsageError) Error() string { return e.msg }

// Usage marks UsageError as the user's input to fix.
func (e *UsageError) Usage() bool { return true }

func usagef(format string, args ...any) error { return &UsageError{msg: fmt.Sprintf(format, args...)} }

// GetPool returns the named pool; a missing pool (or a missing NodePool CRD) is a usage error.
func GetPool(ctx context.Context, c client.Client, name string) (*v1alpha1.NodePool, error) {
	p := &v1alpha1.NodePool{}
	if err := c.Get(ctx, types.NamespacedName{Name: name}, p); err != nil {
		if IsNotInstalled(err) {
			return nil, ErrNotInstalled
		}
		if apierrors.IsNotFound(err) {
			return nil, usagef("pool %q not found", name)
		}
		return nil, fmt.Errorf("get pool %s: %w", name, err)
	}
	return p, nil
}

// Plan validates a move of nodes to pool to (from the pools in from, or every pool the
// node is in when from is empty) and computes each node's exact change, changing nothing.
func (m *Mover) Plan(ctx context.Context, nodes []string, to string, from []string) ([]*NodeMove, *v1alpha1.NodePool, error) {
	target, err := GetPool(ctx, m.Pools, to)
	if err != nil {
		return nil, nil, err
	}
	for _, f := range from {
		if f == to {
			return nil, nil, usagef("--from and --to are both %q", to)
		}
		if _, err := GetPool(ctx, m.Pools, f); err != nil {
			return nil, nil, err
		}
	}
	var out []*NodeMove
	for _, name := range nodes {
		n, err := m.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, nil, usagef("node %q not found", name)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("get node %s: %w", name, err)
		}
		mv := &NodeMove{Node: name, To: to}
		if st, ok := moveState(n); ok && st.To == to {
			mv.Resume, mv.From = true, st.From
		} else {
			current := PoolsOf(n)
			if slices.Contains(current, to) {
				return nil, nil, usagef("node %s is already in pool %s", name, to)
			}
			if len(from) > 0 {
				for _, f := range from {
					if !slices.Contains(current, f) {
						return nil, nil, usagef("node %s is not in pool %s (it is in %v)", name, f, current)
					}
				}
				mv.From = from
			} else {
				mv.From = current
			}
		}
		d, err := m.compute(ctx, n, target, mv.From)
		if err != nil {
			return nil, nil, err
		}
		mv.Diff = diff(n, d)
		out = append(out, mv)
	}
	return out, target, nil
}

// compute is the node after the move: the target and every pool it stays in applied,
// the pools it leaves removed.
func (m *Mover) compute(ctx context.Context, n *corev1.Node, target *v1alpha1.NodePool, from []string) (*Desired, error) {
	apply := []*v1alpha1.NodePool{target}
	for _, name := range PoolsOf(n) {
		if name == target.Name || slices.Contains(from, name) {
			continue
		}
		p := &v1alpha1.NodePool{}
		if err := m.Pools.Get(ctx, types.NamespacedName{Name: name}, p); err == nil {
			apply = append(apply, p)
		}
	}
	return Compute(n, apply, from)
}

// Run carries out planned moves: it records the move on each node, drains them (the
// drainer cordons), relabels each node in one optimistic-lock patch, warns about a
// missing runtime handler, and uncordons only a node this tool cordoned. Interrupted at
// any step, the same call finishes from where it stopped.
func (m *Mover) Run(ctx context.Context, moves []*NodeMove, target *v1alpha1.NodePool, d Drainer) error {
	for _, mv := range moves {
		if err := m.setState(ctx, mv.Node, &MoveState{From: mv.From, To: mv.To, Step: StepDraining}, true); err != nil {
			return err
		}
	}
	names := make([]string, len(moves))
	for i, mv := range moves {
		names[i] = mv.Node
	}
	if _, err := d.Run(ctx, names); err != nil {
		return err
	}
	for _, mv := range moves {
		state := &MoveState{From: mv.From, To: mv.To, Step: StepRelabelled}
		b, _ := json.Marshal(state)
		s := string(b)
		n, _, err := UpdateNode(ctx, m.Kube, mv.Node, func(n *corev1.Node) (*Desired, error) {
			d, err := m.compute(ctx, n, target, mv.From)
			if err != nil {
				return nil, err
			}
			if n.Annotations[MoveAnnotation] != s {
				d.Annotations[MoveAnnotation] = &s
				d.Changed = true
			}
			return d, nil
		})
		if err != nil {
			return fmt.Errorf("relabel node %s: %w", mv.Node, err)
		}
		if rc := target.Spec.RuntimeClass; rc != nil && !listsHandler(n, rc.Handler) {
			mv.Warnings = append(mv.Warnings, fmt.Sprintf("node %s does not list runtime handler %q in status.runtimeHandlers: pods of RuntimeClass %s may fail to start there", mv.Node, rc.Handler, target.Name))
		}
		if mv.Uncordon, err = drain.Uncordon(ctx, m.Kube, n, false, false); err != nil {
			return err
		}
		if err := m.setState(ctx, mv.Node, nil, false); err != nil {
			return err
		}
	}
	return nil
}

// setState writes (or with nil removes) the move annotation. keep leaves a recorded
// later step in place (a re-run must not go back).
func (m *Mover) setState(ctx context.Context, node string, st *MoveState, keep bool) error {
	_, _, err := UpdateNode(ctx, m.Kube, node, func(n *corev1.Node) (*Desired, error) {
		d := &Desired{Labels: n.Labels, Taints: n.Spec.Taints, Annotations: map[string]*string{}}
		if cur, ok := moveState(n); ok && keep && cur.Step == StepRelabelled {
			return d, nil
		}
		if st == nil {
			if _, ok := n.Annotations[MoveAnnotation]; ok {
				d.Annotations[MoveAnnotation], d.Changed = nil, true
			}
			return d, nil
		}
		b, _ := json.Marshal(st)
		s := string(b)
		if n.Annotations[MoveAnnotation] != s {
			d.Annotations[MoveAnnotation], d.Changed = &s, true
		}
		return d, nil
	})
	if err != nil {
		return fmt.Errorf("record move on node %s: %w", node, err)
	}
	return nil
}

func moveState(n *corev1.Node) (MoveState, bool) {
	var st MoveState
	v, ok := n.Annotations[MoveAnnotation]
	if !ok || json.Unmarshal([]byte(v), &st) != nil {
		return st, false
	}
	return st, true
}

func listsHandler(n *corev1.Node, handler string) bool {
	for _, h := range n.Status.RuntimeHandlers {
		if h.Name == handler {
			return true
		}
	}
	return false
}

// diff renders the label and taint changes from n to d.
func diff(n *corev1.Node, d *Desired) []string {
	var out []string
	for k, v := range n.Labels {
		if nv, ok := d.Labels[k]; !ok {
			out = append(out, fmt.Sprintf("-label %s=%s", k, v))
		} else if nv != v {
			out = append(out, fmt.Sprintf("~label %s=%s (was %s)", k, nv, v))
		}
	}
	for k, v := range d.Labels {
		if _, ok := n.Labels[k]; !ok {
			out = append(out, fmt.Sprintf("+label %s=%s", k, v))
		}
	}
	render := func(t corev1.Taint) string { return fmt.Sprintf("%s=%s:%s", t.Key, t.Value, t.Effect) }
	for _, t := range n.Spec.Taints {
		if x, ok := findTaint(d.Taints, t); !ok || x.Value != t.Value {
			out = append(out, "-taint "+render(t))
		}
	}
	for _, t := range d.Taints {
		if x, ok := findTaint(n.Spec.Taints, t); !ok || x.Value != t.Value {
			out = append(out, "+taint "+render(t))
		}
	}
	sort.Strings(out)
	return out
}

// IsNotInstalled reports an API server that does not know the NodePool kind: the CRD is
// not installed. The REST mapper says so either as a no-match error or, through
// discovery, as a failed group lookup.
func IsNotInstalled(err error) bool {
	return err != nil && (meta.IsNoMatchError(err) || discovery.IsGroupDiscoveryFailedError(err) ||
		strings.Contains(err.Error(), "no matches for"))
}

// ErrNotInstalled is the usage error for a cluster without the NodePool CRD.
var ErrNotInstalled = &UsageError{msg: "the NodePool resource is not installed: run kubectl maintenance pool install"}

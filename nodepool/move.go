package nodepool

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
)

// MoveAnnotation records a move in progress on the node, so that a re-run of the same
// move finishes it from the step reached.
const MoveAnnotation = "kubectl-maintenance.io/pool-move"

// StepDraining is the step recorded in MoveAnnotation while the node is cordoned and
// drained. The relabel, the removal of the record and the uncordon are one patch, so no
// later step is ever recorded.
const StepDraining = "draining"

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

// TimedDrainer is a Drainer that can be given what is left of the move's --timeout for
// one batch, so that the whole rolling move, not each batch, is bounded.
type TimedDrainer interface {
	RunWithin(ctx context.Context, nodes []string, timeout time.Duration) (drain.Summary, error)
}

// Mover moves nodes between pools: cordon, PDB-aware drain, rewrite the role label,
// labels and taints (removing exactly what the old pools applied), uncordon; rolling, in
// batches bounded by the pools' maxUnavailable.
type Mover struct {
	Kube  kubernetes.Interface
	Pools client.Client
	// AllowMissingHandler lets a move go on to nodes that don't list the target pool's
	// RuntimeClass handler in status.runtimeHandlers (a warning instead of a stop).
	AllowMissingHandler bool
	// Timeout bounds the whole move (every batch and every wait); 0 means no limit.
	Timeout time.Duration
	// Progress, when set, is told about each step (batches, waits, moved nodes). It must
	// not block for long; it is never called with a lock held.
	Progress func(MoveEvent)
	// Clock is the move's clock (default: the real one).
	Clock clock.PassiveClock
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
	// Done is true when the node is already in the target pool with no move recorded:
	// nothing to do (a re-run after the move finished).
	Done bool
	// Kept lists the node's role labels the move leaves because no NodePool owns them
	// (e.g. node-role.kubernetes.io/worker).
	Kept []string
	// Removed lists the DaemonSet and mirror pods the target's NoExecute taints will
	// remove from the node (a drain never removes those; they are not blockers).
	Removed []string
	// Warnings for a person (a RuntimeClass handler the node does not list, with
	// --allow-missing-handler).
	Warnings []string
	// Uncordon says what happened at the end.
	Uncordon drain.UncordonResult
	// Moved is true once the node carries the target pool.
	Moved bool
}

// MoveEvent is a step of a rolling move, for Mover.Progress.
type MoveEvent struct {
	Type MoveEventType
	// Node is the node concerned (empty for a batch or a wait).
	Node string
	// Nodes is the batch (MoveBatch).
	Nodes []string
	// Message is a sentence for a person.
	Message string
	// Move is the node's move (MoveNodeMoved, MoveNodeDone).
	Move *NodeMove
}

// MoveEventType names a MoveEvent.
type MoveEventType string

// Move event types.
const (
	// MoveBatch: the batch in Nodes starts (cordon, drain, relabel, uncordon).
	MoveBatch MoveEventType = "batch"
	// MoveWaiting: no node may start now; Message says which pool's budget is spent.
	MoveWaiting MoveEventType = "waiting"
	// MoveNodeMoved: the node now carries the target pool (and was uncordoned if ours).
	MoveNodeMoved MoveEventType = "moved"
	// MoveNodeDone: the node was already in the target pool; nothing was done.
	MoveNodeDone MoveEventType = "done"
)

func (m *Mover) progress(ev MoveEvent) {
	if m.Progress != nil {
		m.Progress(ev)
	}
}

func (m *Mover) now() time.Time {
	if m.Clock == nil {
		return time.Now()
	}
	return m.Clock.Now()
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

// recordMove writes the move record on the node (before its drain), so that a re-run
// knows the node is mid-move and which pools it leaves even after its role labels
// changed.
func (m *Mover) recordMove(ctx context.Context, node string, st *MoveState) error {
	b, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("encode move record: %w", err)
	}
	s := string(b)
	_, _, err = UpdateNode(ctx, m.Kube, node, func(n *corev1.Node) (*Desired, error) {
		d := &Desired{Labels: n.Labels, Taints: n.Spec.Taints, Annotations: map[string]*string{}}
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

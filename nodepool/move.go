package nodepool

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// MoveAnnotation records a move in progress on the node, so that a re-run of the same
// move finishes it from the step reached (the moves themselves are in nodepool/roll).
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

// ReadMoveState reads the node's move record; false when it has none (or an unreadable
// one).
func ReadMoveState(n *corev1.Node) (MoveState, bool) {
	var st MoveState
	v, ok := n.Annotations[MoveAnnotation]
	if !ok || json.Unmarshal([]byte(v), &st) != nil {
		return st, false
	}
	return st, true
}

// UsageError is bad input to a pool action (unknown pool, node not in --from, ...): the
// one usage-error type, drain.UsageError.
type UsageError = drain.UsageError

// Usagef builds a UsageError.
func Usagef(format string, args ...any) error { return drain.Usagef(format, args...) }

// GetPool returns the named pool; a missing pool (or a missing NodePool CRD) is a usage error.
func GetPool(ctx context.Context, c client.Client, name string) (*v1alpha1.NodePool, error) {
	p := &v1alpha1.NodePool{}
	if err := c.Get(ctx, types.NamespacedName{Name: name}, p); err != nil {
		if IsNotInstalled(err) {
			return nil, ErrNotInstalled
		}
		if apierrors.IsNotFound(err) {
			return nil, Usagef("pool %q not found", name)
		}
		return nil, fmt.Errorf("get pool %s: %w", name, err)
	}
	return p, nil
}

// ListPools lists every NodePool once, by name.
func ListPools(ctx context.Context, c client.Client) (map[string]*v1alpha1.NodePool, error) {
	list := &v1alpha1.NodePoolList{}
	if err := c.List(ctx, list); err != nil {
		if IsNotInstalled(err) {
			return nil, ErrNotInstalled
		}
		return nil, fmt.Errorf("list pools: %w", err)
	}
	out := map[string]*v1alpha1.NodePool{}
	for i := range list.Items {
		out[list.Items[i].Name] = &list.Items[i]
	}
	return out, nil
}

// IsNotInstalled reports an API server that does not know the NodePool kind: the CRD is
// not installed. The REST mapper says so either as a no-match error or, through
// discovery, as a failed group lookup.
func IsNotInstalled(err error) bool {
	return err != nil && (meta.IsNoMatchError(err) || discovery.IsGroupDiscoveryFailedError(err) ||
		strings.Contains(err.Error(), "no matches for"))
}

// ErrNotInstalled is the usage error for a cluster without the NodePool CRD.
var ErrNotInstalled = Usagef("the NodePool resource is not installed: run kubectl maintenance pool install")

// CordonedByUs reports whether the node's cordon is this tool's, by the engine's rule
// (noderecord.CordonedByUs: the node's managedFields name noderecord.FieldManager as the only owner of
// spec.unschedulable). A cordon anyone else made, or made again after a plain uncordon, stays.
func CordonedByUs(n *corev1.Node) bool { return noderecord.CordonedByUs(n) }

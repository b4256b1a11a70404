package cli

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool"
	"github.com/kubectl-maintenance/kubectl-maintenance/operation"
)

// leaveDisrupting takes out of req the nodes Karpenter is already disrupting (taint
// karpenter.sh/disrupted), which a drain leaves to it, neither cordoned nor touched,
// unless --include-disrupting was given: req then names the other nodes. Each node left
// is one warning line; left is nil when none is, and is the error (exit 3) when every
// node is left.
func (o *DrainOptions) leaveDisrupting(ctx context.Context, cs kubernetes.Interface, req *operation.Request) (left *drain.DisruptingError, err error) {
	if o.IncludeDisrupting {
		return nil, nil
	}
	sel := req.Selector
	if req.Pool != "" {
		sel = nodepool.RoleLabel(req.Pool)
	}
	if len(req.Nodes) > 0 {
		sel = ""
	}
	list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	disrupting := map[string]bool{}
	names := req.Nodes
	for i := range list.Items {
		if drain.Disrupting(&list.Items[i]) {
			disrupting[list.Items[i].Name] = true
		}
		if len(req.Nodes) == 0 {
			names = append(names, list.Items[i].Name)
		}
	}
	if len(disrupting) == 0 {
		return nil, nil
	}
	var keep []string
	for _, n := range names {
		if !disrupting[n] {
			keep = append(keep, n)
			continue
		}
		if left == nil {
			left = &drain.DisruptingError{}
		}
		left.Nodes = append(left.Nodes, n)
		fmt.Fprintf(o.ErrOut, "Warning: node/%s left to Karpenter, which is already disrupting it (taint %s): not cordoned, not drained (--include-disrupting drains it)\n", n, drain.KarpenterDisruptedTaint)
	}
	if left == nil {
		return nil, nil
	}
	if len(keep) == 0 {
		return nil, left // every node left to Karpenter: exit 3
	}
	req.Nodes, req.Selector = keep, ""
	return left, nil
}

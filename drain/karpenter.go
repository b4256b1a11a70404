package drain

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// KarpenterDisruptedTaint is the taint Karpenter puts on a node it has started to take
// down (consolidation, drift, expiry): its termination controller drains the node and
// deletes it. A second drain would only race it.
const KarpenterDisruptedTaint = "karpenter.sh/disrupted"

// Disrupting reports whether Karpenter is already disrupting the node (it carries
// KarpenterDisruptedTaint, whatever the effect).
func Disrupting(n *corev1.Node) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == KarpenterDisruptedTaint {
			return true
		}
	}
	return false
}

// DisruptingWarning is what a plan says of a node Karpenter is disrupting.
const DisruptingWarning = "Karpenter is already disrupting this node (taint " + KarpenterDisruptedTaint +
	"): a drain leaves it to Karpenter unless --include-disrupting is given"

// DisruptingError is a drain that left nodes to Karpenter, which was already disrupting
// them: they were neither cordoned nor drained (blocked by policy, exit 3); the other
// nodes were drained.
type DisruptingError struct{ Nodes []string }

func (e *DisruptingError) Error() string {
	return fmt.Sprintf("%d node(s) left to Karpenter, which is already disrupting them (taint %s; --include-disrupting drains them too): %s",
		len(e.Nodes), KarpenterDisruptedTaint, strings.Join(e.Nodes, ", "))
}

// Blocked marks a DisruptingError as blocked by policy.
func (e *DisruptingError) Blocked() bool { return true }

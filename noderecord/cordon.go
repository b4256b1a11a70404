package noderecord

import (
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
)

// FieldManager is the field manager every write of this tool uses. The manager that owns
// a node's spec.unschedulable is the one that made its cordon.
const FieldManager = "kubectl-maintenance"

// CordonedBy returns the field managers that own node's spec.unschedulable, that is
// whoever set the cordon it carries now ("" entries are skipped).
func CordonedBy(node *corev1.Node) []string {
	var out []string
	for _, mf := range node.ManagedFields {
		if mf.FieldsV1 == nil || mf.Subresource != "" {
			continue
		}
		var fields map[string]map[string]any
		if err := json.Unmarshal(mf.FieldsV1.GetRawBytes(), &fields); err != nil {
			continue
		}
		if _, ok := fields["f:spec"]["f:unschedulable"]; ok && mf.Manager != "" {
			out = append(out, mf.Manager)
		}
	}
	return out
}

// CordonedByUs reports whether node is cordoned and its cordon is this tool's own (the
// only owner of spec.unschedulable is FieldManager). A cordon someone made after
// uncordoning ours is theirs.
func CordonedByUs(node *corev1.Node) bool {
	if !node.Spec.Unschedulable {
		return false
	}
	owners := CordonedBy(node)
	for _, m := range owners {
		if m != FieldManager {
			return false
		}
	}
	return len(owners) > 0
}

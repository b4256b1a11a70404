package nodepool

import (
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// RoleLabelPrefix is the prefix of the label that puts a node in a pool.
const RoleLabelPrefix = "node-role.kubernetes.io/"

// RoleLabel returns the label key that puts a node in pool.
func RoleLabel(pool string) string { return RoleLabelPrefix + pool }

// PoolsOf returns the pools a node is in, sorted.
func PoolsOf(n *corev1.Node) []string {
	var pools []string
	for k := range n.Labels {
		if p, ok := strings.CutPrefix(k, RoleLabelPrefix); ok && p != "" {
			pools = append(pools, p)
		}
	}
	sort.Strings(pools)
	return pools
}

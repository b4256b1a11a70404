package pdb

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	"github.com/kubectl-maintenance/kubectl-maintenance/predicate"
)

// Placeable returns a Replaceable that answers whether a pod's replacement could be
// scheduled on one of nodes that is not draining: Ready, schedulable, matching the pod's
// nodeSelector and required node affinity, and tolerating its NoSchedule and NoExecute
// taints. A pod with no controller has no replacement and always counts as placeable.
// This is a necessary condition, not the scheduler: resources and pod affinity are not
// checked.
func Placeable(nodes []*corev1.Node, draining map[string]bool) Replaceable {
	var candidates []*corev1.Node
	for _, n := range nodes {
		if !draining[n.Name] && !n.Spec.Unschedulable && nodeReady(n) {
			candidates = append(candidates, n)
		}
	}
	return func(pod *corev1.Pod) bool {
		if metav1.GetControllerOf(pod) == nil {
			return true
		}
		aff := nodeaffinity.GetRequiredNodeAffinity(pod)
		for _, n := range candidates {
			if ok, err := aff.Match(n); err != nil || !ok {
				continue
			}
			_, untolerated := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), n.Spec.Taints, pod.Spec.Tolerations,
				func(t *corev1.Taint) bool {
					return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
				}, false)
			if !untolerated {
				return true
			}
		}
		return false
	}
}

func nodeReady(n *corev1.Node) bool { return predicate.NodeReady(n) }

// Package predicate holds the questions about pods and nodes that several packages ask
// the same way: whether a node is Ready, whether a pod is a mirror pod or a DaemonSet's
// (pods a drain never evicts). One definition each, so that every package agrees.
package predicate

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodeReady reports whether the node's Ready condition is True (a node without one is
// not Ready).
func NodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// MirrorPod reports whether p is the API server's mirror of a static pod (the kubelet
// owns it; it cannot be evicted).
func MirrorPod(p *corev1.Pod) bool {
	_, ok := p.Annotations[corev1.MirrorPodAnnotationKey]
	return ok
}

// DaemonSetPod reports whether p's controller is a DaemonSet (a drain leaves it: the
// DaemonSet controller ignores unschedulable and would recreate it).
func DaemonSetPod(p *corev1.Pod) bool {
	ref := metav1.GetControllerOf(p)
	return ref != nil && ref.Kind == "DaemonSet"
}

// MirrorOrDaemonSetPod reports whether p is a mirror pod or a DaemonSet pod: a pod a
// drain never evicts.
func MirrorOrDaemonSetPod(p *corev1.Pod) bool { return MirrorPod(p) || DaemonSetPod(p) }

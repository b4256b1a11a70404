// Package surge moves the pod of a one-replica Deployment whose PodDisruptionBudget never
// allows a disruption (minAvailable: 1 on one replica), without ever going below the
// budget: it records the replica count in an annotation on the Deployment and scales it
// to +1 in the same patch, waits until the new pod is Ready on another node, lets the
// caller evict the old pod through the Eviction API (the budget now allows it), and then
// restores the replica count and removes the annotation, again in one patch.
//
// Surging only helps a budget whose desired healthy count does not grow with the
// replicas. The disruption controller computes disruptionsAllowed = currentHealthy -
// desiredHealthy; under maxUnavailable: 0 (or 0%, or minAvailable: 100%) desiredHealthy
// is expectedPods - 0, so one more replica raises both sides and the budget still allows
// nothing. Such budgets are refused (Helps), as are Deployments an autoscaler scales,
// Deployments of more than one replica, and StatefulSets (never surged).
//
// Every write is a patch as the field manager "kubectl-maintenance" carrying the
// Deployment's resourceVersion (an optimistic lock). The annotation makes the surge
// resumable: Pending finds the Deployments a killed run left scaled up (by the label
// LabelSurged), and Restore brings them back.
//
// It never prints, never imports a UI package, and never deletes a pod.
package surge

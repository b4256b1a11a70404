// Package reconciler keeps every pool's members in line with their pool: the
// controller-runtime reconciler that applies a pool's labels, taints and RuntimeClass to
// its members (through nodepool/ownership), cleans nodes when a pool or a membership goes
// (the Finalizer), and writes the pool's status conditions (Ready, Degraded,
// RolloutProgressing). A NoExecute taint that would remove pods is not applied here: the
// pool is Degraded until a rollout (nodepool/roll) drains those nodes first.
package reconciler

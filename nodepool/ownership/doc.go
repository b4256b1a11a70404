// Package ownership is the algebra of what pools own on a node: each pool records on the
// node exactly the labels and taints it applied (Record, in an annotation per pool);
// Compute works out a node's labels, taints and records after pools are applied or
// removed, taking away only what a removed pool applied and refusing to overwrite what
// another pool or a person set (ConflictError); UpdateNode writes the result as one merge
// patch guarded by resourceVersion. It also says which pods a new NoExecute taint would
// remove (NoExecuteVictims), so nothing is applied that evicts around the Eviction API.
package ownership

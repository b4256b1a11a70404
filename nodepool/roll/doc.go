// Package roll is how this tool takes a pool's nodes out of service and back: the one
// sliding window (Window) that drain --pool, pool move and a pool's NoExecute rollout
// (pool sync --rollout and the controller's) share, and the per-node steps of a move
// (Mover) and of a rollout (Rollout) that the drain engine runs around each node's drain
// (drain.NodeSteps). Each of the three is one run of the drain engine: --timeout,
// --on-blocked and --not-after mean the same in all three.
//
// The window's rule, for each pool a node counts in: a node may start while fewer than
// the pool's maxUnavailable of its other members count, and counted are the members this
// tool has in progress (its run's nodes in progress, and any member whose record says
// draining or moving, by any run) and the members that are NotReady. Members cordoned by
// someone else, and members this tool drained (or gave up, or cordoned) and left cordoned
// for their maintenance, do not count: the wait line names them as not counted. A node
// itself out of service (cordoned or NotReady) starts at once: taking it makes nothing
// less available. A node held by a budget holds one slot; the next starts as soon as
// another finishes.
//
// Only package operation imports this package (a depguard rule in .golangci.yml).
package roll

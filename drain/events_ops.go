package drain

// Event types of the operations around a drain: a cordon emits EventNodeCordoned (never
// EventNodeDrained), an uncordon EventNodeUncordoned, a pool move EventNodeMoved. Each type
// means one fact; none is a warning.
const (
	// EventNodeUncordoned: the node is schedulable again. Reason "LeftCordoned" (the cordon
	// was someone else's) or "AlreadySchedulable" qualify it; Message says it for a person.
	EventNodeUncordoned EventType = "node.uncordoned"
	// EventNodeMoved: the node now carries its target pool's role label, labels and taints;
	// Message is the target pool's name.
	EventNodeMoved EventType = "node.moved"
	// EventPoolBatch: a batch of a rolling pool move or drain starts; Message names its nodes.
	EventPoolBatch EventType = "pool.batch"
)

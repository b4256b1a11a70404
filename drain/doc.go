// Package drain is the PDB-aware drain engine: it cordons nodes, evicts their pods only
// through the policy/v1 Eviction API (with a UID precondition), classifies every answer,
// waits on the blocking PodDisruptionBudget's status through a watch instead of a timer,
// and reports progress as a typed event stream. It never prints.
package drain

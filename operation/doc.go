// Package operation is the one operations layer between the front ends (the commands in
// cmd/cli and the dashboard) and the engines. It owns what a maintenance action on nodes
// is — cordon, uncordon, drain, move to a pool, roll a pool's NoExecute taints out — from a
// Request to its Plan and its Run: which nodes it touches (names, a label selector or a
// pool's members), which engine does the work (drain.Cordon and drain.Uncordon,
// drain.Engine; a pool drain, a move and a rollout are one engine run each in the pool's
// window, nodepool/roll, which only this package imports), and the one ordered stream of
// event.Events every front end renders. A cordon emits node.cordoned and never
// node.drained; an uncordon node.uncordoned; a drain the engine's events; a move or a
// rollout the drain's events with node.moved and node.uncordoned after each node.drained.
// A Request carries the drain settings (drain.Settings) as its front end validated them,
// once (the CLI's flags, a Maintenance's spec), and the caller's own wiring; this layer
// adds the clients, the clock, the events and the run's origin when it builds the
// engine, whose door only asserts the settings (drain.Settings.AssertValid).
// Runs runs several operations at once, each node in at most one, each cancellable on
// its own (the dashboard). The controller process that runs the pool reconciler and the
// Maintenances is package manager's.
//
// It never prints and imports neither cobra nor bubbletea: front ends turn its events
// into lines, NDJSON or a view, and cancel an operation through its context.
package operation

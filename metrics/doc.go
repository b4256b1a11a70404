// Package metrics owns the tool's Prometheus metrics (kubectl_maintenance_*): what a run
// does, fed from the engine's event stream (Recorder.Observe: evictions by outcome, pods
// waiting by reason, node and run durations, the pace), the status writes of the
// Maintenance controller (Recorder.StatusWritten), and the Maintenances as the
// controller's cache holds them (Objects: Maintenances by phase, their nodes by state).
// Every label takes its values from a fixed set (unknown values become "Other"): no pod,
// node, budget or object names are labels, so the series stay bounded on any cluster.
//
// Register adds them to a registry (the controller serves controller-runtime's
// metrics.Registry on its metrics endpoint); Serve serves that registry for a local run.
// The package makes no API call of its own and never prints.
package metrics

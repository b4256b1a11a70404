package metrics

// Family describes one metric family the package serves: the reference
// (docs/reference/metrics.md, written by hack/gendocs) is made from Catalog.
type Family struct {
	// Name is the family's name as served; Type "counter", "gauge" or "histogram".
	Name, Type string
	// Help is the family's HELP text.
	Help string
	// Labels are the family's labels, each with its values (besides "Other").
	Labels []Label
	// Source says where the values come from (the events, a status write, the cache).
	Source string
	// Query is an example PromQL query.
	Query string
}

// Label is a label of a Family and the values it takes.
type Label struct {
	Name   string
	Values []string
}

var (
	outcomeLabel = Label{"outcome", []string{OutcomeAccepted, OutcomeRefusedBudget, OutcomeRefusedOther, OutcomeError}}
	writeLabel   = Label{"result", []string{WriteOK, WriteConflict, WriteError}}
	nodeLabel    = Label{"result", []string{NodeResultDrained, NodeResultFailed, NodeResultBlocked}}
	phaseLabel   = Label{"phase", phases}
	stateLabel   = Label{"state", nodeStates}
	reasonLabel  = Label{"reason", waitReasons}
	causedLabel  = Label{"caused", []string{HoldCausedByRun, HoldCausedByOther}}
)

// Catalog lists every family the package serves, in the reference's order.
func Catalog() []Family {
	return []Family{
		{Name: EvictionsTotal, Type: "counter", Labels: []Label{outcomeLabel}, Source: "events",
			Help:  "Eviction requests sent, by the API server's answer: accepted, refused_budget (a PodDisruptionBudget: 429, 403, or 500 for several budgets), refused_other (409, a throttling 429, 404, and 403/400/422 that never succeed), error (network, 5xx, no answer before the run ended).",
			Query: `sum by (outcome) (rate(kubectl_maintenance_evictions_total[5m]))`},
		{Name: PodsWaiting, Type: "gauge", Labels: []Label{reasonLabel}, Source: "events",
			Help:  "Pods waiting to be evicted, by reason: a budget with no room (Exhausted, DisruptionBudget), one that never allows (NeverAllows), several budgets, a stale status, a drain rule (DoNotDisrupt, WaitCompleted), a backoff after a refusal (Conflict, TooManyRequests, Error).",
			Query: `sum by (reason) (kubectl_maintenance_pods_waiting) > 0`},
		{Name: NodeDrainDuration, Type: "histogram", Labels: []Label{nodeLabel}, Source: "events",
			Help:  "Seconds from a node's cordon (or its first eviction) to its end, by result (drained, failed, blocked).",
			Query: `histogram_quantile(0.9, sum by (le) (rate(kubectl_maintenance_node_drain_duration_seconds_bucket{result="drained"}[1h])))`},
		{Name: RunDuration, Type: "histogram", Labels: []Label{phaseLabel}, Source: "events",
			Help:  "Seconds a run took, from its start to its end, by the phase it ended in (Running: stopped by the object's deletion or the controller's end).",
			Query: `sum by (phase) (increase(kubectl_maintenance_run_duration_seconds_count[1d]))`},
		{Name: EvictionRate, Type: "gauge", Source: "events",
			Help:  "Evictions accepted per second over the last 10 seconds.",
			Query: `kubectl_maintenance_eviction_rate`},
		{Name: EvictionPace, Type: "gauge", Source: "events",
			Help:  "The engine's eviction pace in evictions per second, summed over the paced runs (0: nothing paced: the disruption controller keeps up).",
			Query: `kubectl_maintenance_eviction_pace > 0`},
		{Name: DisruptionLag, Type: "gauge", Source: "events",
			Help:  "The disruption controller's lag the engine last measured (an accepted eviction to its budget's status no longer listing the pod), the largest over the paced runs; 0 when nothing is paced.",
			Query: `max_over_time(kubectl_maintenance_disruption_controller_lag_seconds[15m])`},
		{Name: HoldsTotal, Type: "counter", Labels: []Label{causedLabel}, Source: "events",
			Help:  "Holds of the disruption controller the runs saw: a budget's status.disruptedPods entry whose name a replacement took (a StatefulSet's), which the controller keeps, counting the replacement as disrupted, for 2 minutes after the eviction. caused=true when the entry is the run's own eviction (its pace outran the controller).",
			Query: `sum by (caused) (increase(kubectl_maintenance_disruption_holds_total[1h]))`},
		{Name: RunsInProgress, Type: "gauge", Source: "events",
			Help:  "Runs in progress in this process (Maintenances the controller runs, or a local drain).",
			Query: `kubectl_maintenance_runs`},
		{Name: StatusWritesTotal, Type: "counter", Labels: []Label{writeLabel}, Source: "status writes",
			Help:  "Writes of a Maintenance's status sent to the API server, by result (ok, conflict, error).",
			Query: `sum(rate(kubectl_maintenance_status_writes_total[5m])) * 60`},
		{Name: MaintenancesByPhase, Type: "gauge", Labels: []Label{phaseLabel}, Source: "the controller's cache",
			Help:  "Maintenance objects by phase (a new object, with no phase yet, counts as Pending).",
			Query: `kubectl_maintenance_maintenances{phase=~"Failed|Blocked|TimedOut|DeadlinePassed"} > 0`},
		{Name: MaintenanceNodes, Type: "gauge", Labels: []Label{phaseLabel, stateLabel}, Source: "the controller's cache",
			Help:  "Nodes listed in the Maintenances' status, by the object's phase and the node's state (as fresh as the status: written at most every 5 s).",
			Query: `sum by (state) (kubectl_maintenance_maintenance_nodes{phase="Running"})`},
	}
}

// help is the Help of the catalog's family name.
func help(name string) string {
	for _, f := range Catalog() {
		if f.Name == name {
			return f.Help
		}
	}
	return ""
}

package render

import (
	"encoding/json"
	"io"
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/outcome"
)

// EventsVersion is the version of the NDJSON event stream: a minor bump adds fields
// (ignore unknown ones), a major bump breaks.
//
// 1.1: pod.eviction_blocked carries cause, remedy and waited_seconds (said again every
// wait interval while nothing changes); reasons DoNotDisrupt and WaitCompleted; the
// plan's pods carry cause and remedy; the summary's pending entries cause and remedy;
// node.blocked and node.not_started events; the summary's skipped and not_started;
// --surge's pod.surge_started, pod.surge_ready and deployment.restored (deployment).
//
// 1.2: drain.pacing (reason, rate_per_second, lag_ms, pdb, pod): the eviction pace
// changed because the disruption controller fell behind or caught up;
// pod.eviction_blocked carries cause_kind (the diagnose kind) and routine (the wait is
// this drain's own evictions in flight: the human lines say no cause or remedy).
//
// 1.3: the summary's pods_left (pods left, by node: on nodes given up, failed, timed out
// or interrupted); pods_pending now counts the pods of the nodes given up too.
//
// 1.4: pod.forced (pdb, budget: current_healthy, desired_healthy, expected_pods,
// disruptions_allowed) under --on-blocked=force, and pod.evicted with reason Forced when
// a forced pod is gone; node.gone (a node deleted while it drained); pod.left (a pod of a
// dead node no longer waited for); the plan's force_after_seconds and would_force, its
// nodes' dead; the summary's pods_forced, forced, pods_left_on_dead_nodes, nodes_gone; the summary's outcome (package outcome's verdict).
//
// 1.5: context on every line, its last field: the kubeconfig context the command ran against (its
// server when the kubeconfig names no context), so that the streams of several clusters
// can be merged and told apart.
const EventsVersion = "1.5"

// jsonEvent is one NDJSON line.
type jsonEvent struct {
	V          int       `json:"v"`
	Time       time.Time `json:"ts"`
	Type       string    `json:"type"`
	Level      string    `json:"level"`
	Message    string    `json:"message,omitempty"`
	Node       string    `json:"node,omitempty"`
	Pod        string    `json:"pod,omitempty"`
	Deployment string    `json:"deployment,omitempty"`
	PDB        string    `json:"pdb,omitempty"`
	Reason     string    `json:"reason,omitempty"`
	RetryAfter float64   `json:"retry_after_seconds,omitempty"`
	Attempt    int       `json:"attempt,omitempty"`
	LagMs      float64   `json:"lag_ms,omitempty"`
	Rate       float64   `json:"rate_per_second,omitempty"`
	Wave       int       `json:"wave,omitempty"`
	Already    bool      `json:"already,omitempty"`
	DryRun     string    `json:"dry_run,omitempty"`
	Plan       *PlanJSON `json:"plan,omitempty"`
	Cause      string    `json:"cause,omitempty"`
	Remedy     string    `json:"remedy,omitempty"`
	CauseKind  string    `json:"cause_kind,omitempty"`
	Routine    bool      `json:"routine,omitempty"`
	Waited     float64   `json:"waited_seconds,omitempty"`
	// Budget is a forced pod's budget's numbers (1.4).
	Budget *event.BudgetNumbers `json:"budget,omitempty"`

	// version event
	EventsVersion string `json:"events_version,omitempty"`
	Version       string `json:"version,omitempty"`

	// summary event
	Summary  *summaryJSON `json:"summary,omitempty"`
	ExitCode *int         `json:"exit_code,omitempty"`
	Error    string       `json:"error,omitempty"`

	// Context is last on the line (1.5), so that the fields before it keep the order
	// of earlier versions.
	Context string `json:"context,omitempty"`
}

type summaryJSON struct {
	NodesDrained int             `json:"nodes_drained"`
	NodesFailed  int             `json:"nodes_failed"`
	NodesPending int             `json:"nodes_pending"`
	PodsEvicted  int             `json:"pods_evicted"`
	PodsPending  int             `json:"pods_pending"`
	PodsLeft     map[string]int  `json:"pods_left,omitempty"` // pods_pending by node (1.3)
	Evictions    int             `json:"eviction_requests"`
	Refusals     int             `json:"eviction_refusals"`
	Elapsed      float64         `json:"elapsed_seconds"`
	APIRequests  int64           `json:"api_requests"`
	Pending      []event.Blocker `json:"pending,omitempty"`
	// Skipped (--on-blocked=skip) and NotStarted (--not-after) were added in 1.1.
	Skipped    []drain.BlockedNode `json:"skipped,omitempty"`
	NotStarted []string            `json:"not_started,omitempty"`
	// ETA is what the plans expected (eta.go); elapsed_seconds is the actual time.
	ETA *etaJSON `json:"eta,omitempty"`
	// Outcome is the verdict the exit code means (package outcome): done, failed,
	// invalid, blocked, deadline passed, timed out or interrupted (1.4).
	Outcome string `json:"outcome"`

	// Dead nodes and force (planned maintenance), 1.4.
	PodsForced          int               `json:"pods_forced"`
	Forced              []drain.ForcedPod `json:"forced,omitempty"`
	PodsLeftOnDeadNodes int               `json:"pods_left_on_dead_nodes"`
	NodesGone           []string          `json:"nodes_gone,omitempty"`
}

// NDJSON writes one JSON event per line: first a "version" event, last a "summary" with
// the counts and the exit code. The version event is written with the first other event,
// so a run refused before it starts (a bad flag, a missing permission) writes nothing.
type NDJSON struct {
	enc      *json.Encoder
	version  string
	now      func() time.Time
	requests func() int64
	eta      etaTally
	started  bool
	context  string
}

// SetContext names the cluster on every line from now on (the context field): the
// kubeconfig context, or its server.
func (p *NDJSON) SetContext(name string) *NDJSON {
	p.context = name
	return p
}

// NewNDJSON returns the NDJSON printer on w: version is the plugin's (the version
// event's), now stamps events that carry no time, requests counts the API requests sent
// (the summary's api_requests).
func NewNDJSON(w io.Writer, version string, now func() time.Time, requests func() int64) *NDJSON {
	return &NDJSON{enc: json.NewEncoder(w), version: version, now: now, requests: requests}
}

func (p *NDJSON) write(e jsonEvent) {
	if !p.started {
		p.started = true
		p.write(jsonEvent{Type: "version", Level: "info", EventsVersion: EventsVersion, Version: p.version})
	}
	e.V = 1
	e.Context = p.context
	if e.Time.IsZero() {
		e.Time = p.now()
	}
	e.Time = e.Time.UTC()
	_ = p.enc.Encode(e)
}

// Event writes one event as a line.
func (p *NDJSON) Event(ev event.Event) {
	level := "info"
	switch ev.Type {
	case event.EventWarning, event.EventEvictionBlocked:
		level = "warn"
	case event.EventNodeFailed:
		level = "error"
	case event.EventNodeBlocked, event.EventNodeNotStarted, event.EventPodForced, event.EventPodLeft:
		level = "warn"
	}
	e := jsonEvent{
		Time: ev.Time, Type: string(ev.Type), Level: level, Message: ev.Message, Node: ev.Node, Pod: ev.Pod, Deployment: ev.Deployment,
		PDB: ev.PDB, Reason: ev.Reason, RetryAfter: ev.RetryAfter.Seconds(), Attempt: ev.Attempt,
		LagMs: float64(ev.Lag.Microseconds()) / 1000, Rate: ev.Rate, Wave: ev.Wave, Already: ev.Already, DryRun: ev.DryRun,
		Cause: ev.Cause, Remedy: ev.Remedy, CauseKind: ev.CauseKind, Routine: ev.Routine, Waited: ev.Waited.Round(time.Millisecond).Seconds(),
		Budget: ev.Budget,
	}
	if ev.Plan != nil {
		e.Plan = ToPlanJSON(ev.Plan)
		p.eta.add(ev.Plan)
		e.Message = PlanHeadline(ev.Plan)
	}
	p.write(e)
}

// Summary writes the summary event: the counts, the ETA, the exit code and the error.
func (p *NDJSON) Summary(sum drain.Summary, err error, code int) {
	e := jsonEvent{Type: "summary", Level: "info", ExitCode: &code, Summary: &summaryJSON{
		NodesDrained: sum.NodesDrained, NodesFailed: sum.NodesFailed, NodesPending: sum.NodesPending,
		PodsEvicted: sum.PodsEvicted, PodsPending: sum.PodsPending, PodsLeft: sum.LeftOn, Evictions: sum.Evictions,
		Refusals: sum.Refusals, Elapsed: sum.Elapsed.Seconds(), Pending: sum.PendingBlocks, APIRequests: p.requests(),
		Skipped: sum.Skipped, NotStarted: sum.NotStarted, Outcome: outcome.OfExitCode(code).Verdict(),
		PodsForced: sum.PodsForced, Forced: sum.Forced, PodsLeftOnDeadNodes: sum.PodsLeftOnDeadNodes, NodesGone: sum.NodesGone,
	}}
	if p.eta.plans > 0 {
		e.Summary.ETA = toETAJSON(p.eta.eta)
	}
	if err != nil {
		e.Level, e.Error = "error", ErrorLine(err)
	}
	p.write(e)
}

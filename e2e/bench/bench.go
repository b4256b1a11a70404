// Package bench measures our drain side by side with kubectl drain on the same local
// cluster and fresh, identical workloads, against the limit the control plane sets: for
// each PDB b with k_b allowed disruptions and M_b pods on the drained nodes, a
// replacement must be scheduled and Ready (T_c) before the next eviction, so
// T_limit ≈ max_b (⌈M_b/k_b⌉ − 1)·T_c + termination time.
package bench

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/bench/floor"
	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/cluster"
)

// Profile sizes a benchmark run.
type Profile struct {
	Name string
	// ReadyDelay and DeleteDelay are the kwok stage delays of the workload's pods.
	ReadyDelay, DeleteDelay time.Duration
	// DrainNodes are drained; SpareNodes take the replacements.
	DrainNodes, SpareNodes int
	// Phases to run: W1, W2, W3.
	Phases []string
	// Tools to compare: kubectl-seq, kubectl-par, ours.
	Tools []string
}

// Profiles are the named profiles.
var Profiles = map[string]Profile{
	"realistic": {Name: "realistic", ReadyDelay: 2 * time.Second, DeleteDelay: time.Second, DrainNodes: 8, SpareNodes: 24,
		Phases: []string{"W1", "W2", "W3"}, Tools: []string{"ours", "kubectl-seq", "kubectl-par"}},
	"fast": {Name: "fast", DrainNodes: 8, SpareNodes: 24, Phases: []string{"W1", "W2", "W3"},
		Tools: []string{"ours", "kubectl-seq", "kubectl-par"}},
	"scale": {Name: "scale", ReadyDelay: 2 * time.Second, DeleteDelay: time.Second, DrainNodes: 25, SpareNodes: 75,
		Phases: []string{"W1", "W2", "W3"}, Tools: []string{"ours", "kubectl-seq", "kubectl-par"}},
	"smoke": {Name: "smoke", DrainNodes: 3, SpareNodes: 3, Phases: []string{"W1"}, Tools: []string{"ours", "kubectl-seq"}},
}

// Result is one tool's run of one phase.
type Result struct {
	Phase string `json:"phase"`
	Tool  string `json:"tool"`
	// ExitCode of the drain command(s) (the worst, for kubectl-par).
	ExitCode int     `json:"exit_code"`
	WallSec  float64 `json:"wall_seconds"`
	// StoppedAtSec is the time box the tool was stopped at (its --timeout) before every
	// node was drained: WallSec is then a lower bound. 0: it finished.
	StoppedAtSec float64 `json:"stopped_at_seconds,omitempty"`
	// GaveUp is how many of the tool's processes exited non-zero (fleet profile: a kubectl
	// drain that gave up on an API server timeout leaves its node undrained, and the wall
	// is then a lower bound); Error is the last error they printed.
	GaveUp int    `json:"gave_up,omitempty"`
	Error  string `json:"error,omitempty"`
	// TcSec is the median time from an eviction to its PDB showing budget again.
	TcSec float64 `json:"tc_seconds"`
	// LimitSec is the physical limit computed from TcSec.
	LimitSec float64 `json:"limit_seconds"`
	// Evicted pods, eviction requests (apiserver_request_total delta for pods/eviction
	// create) and 429 answers among them.
	Evicted   int     `json:"evicted_pods"`
	Evictions float64 `json:"eviction_requests"`
	Refused   float64 `json:"eviction_429s"`
	// ClientRequests is every HTTP request the drain client(s) sent, by verb and
	// resource (our NDJSON summary; kubectl's -v=6 request log).
	ClientRequests      map[string]int `json:"client_requests"`
	ClientRequestsTotal int            `json:"client_requests_total"`
	// LagMedianMs and LagP99Ms: from the PDB watch event that woke a waiting pod to its
	// eviction request, as our engine measures it (ours only: kubectl waits on a timer).
	LagMedianMs float64 `json:"lag_median_ms,omitempty"`
	LagP99Ms    float64 `json:"lag_p99_ms,omitempty"`
	// MaxUnavailable per PDB seen on the watch, and what each allows; Violations lists
	// any PDB that dropped below its desired healthy pods (the bench fails then).
	MaxUnavailable map[string]int32 `json:"max_unavailable"`
	Allowed        map[string]int32 `json:"allowed"`
	Violations     []string         `json:"violations,omitempty"`
	PeakRSSMiB     float64          `json:"peak_rss_mib"`
	// Nodes drained (or planned); CPUSec is the client's user+system CPU (summed over
	// processes); Watches the watch requests the client(s) opened; PerNodeSec, for
	// kubectl-seq in the fleet profile, its wall time per node.
	Nodes      int     `json:"nodes,omitempty"`
	CPUSec     float64 `json:"cpu_seconds,omitempty"`
	Watches    int     `json:"watch_requests,omitempty"`
	PerNodeSec float64 `json:"per_node_seconds,omitempty"`
	// Holds (fleet profile) are the holds this run caused, HoldsSeen every hold seen while
	// it ran (pdb.Holds, the engine's definition: a budget's disruptedPods entry whose
	// name a newer pod, not deleting, now carries; the disruption controller counts that
	// replacement as disrupted until the entry is 2 minutes old). Caused: the entry was
	// written during the run, so by its eviction (one tool runs at a time).
	// HoldFreeLimitSec is the limit of the same simulation with each recovery floored at
	// the run's median and no replayed holds: the time the holds cost is WallSec beside it.
	Holds     int `json:"holds"`
	HoldsSeen int `json:"holds_seen"`
	// ControllerWrites (fleet profile) are the disruption controller's status writes of
	// every budget while the run went (floor.ByController), CoveredEvicted the pods under a
	// budget the run evicted: their ratio is what a budget-covered eviction cost the
	// controller in this run.
	ControllerWrites int `json:"controller_status_writes"`
	CoveredEvicted   int `json:"budget_covered_evictions"`
	// ControllerSyncs and ControllerBusySec (fleet profile) are the budgets the
	// disruption controller synced while the run went and the seconds its one worker spent
	// on them, the status writes through its rate-limited client included
	// (kube-controller-manager's workqueue_work_duration_seconds, queue "disruption").
	ControllerSyncs   float64 `json:"controller_syncs,omitempty"`
	ControllerBusySec float64 `json:"controller_busy_seconds,omitempty"`
	// FirstEvictionSec (ours, fleet profile): from the command's start to its first
	// eviction request (its first pod.eviction_started event).
	FirstEvictionSec float64 `json:"first_eviction_seconds,omitempty"`
	HoldFreeLimitSec float64 `json:"hold_free_limit_seconds,omitempty"`
	// Timeline: seconds since start, unavailable pods of the phase's main PDB.
	Timeline [][2]float64 `json:"timeline"`
	// Lines (fleet profile, ours and the controller's follower) is how many lines the
	// command printed for its user (stdout, and stderr without the -v log).
	Lines int `json:"lines,omitempty"`
	// StatusWritesPerMin (F5) is the controller's status writes of the object per minute
	// of wall (kubectl_maintenance_status_writes_total); FollowerRSSMiB the follower's
	// peak RSS (PeakRSSMiB and CPUSec are the controller's in F5).
	StatusWritesPerMin float64 `json:"status_writes_per_minute,omitempty"`
	// StatusWritesMaxMin (F5) is the most status writes of the object in any minute.
	StatusWritesMaxMin int     `json:"status_writes_max_in_a_minute,omitempty"`
	FollowerRSSMiB     float64 `json:"follower_rss_mib,omitempty"`
	// MetricsTimeline (F5): seconds since the object's creation, evictions accepted, as the
	// controller's metrics endpoint served them (scraped every second).
	MetricsTimeline [][2]float64 `json:"metrics_timeline,omitempty"`
	// MetricsQueries (F5): each family of the metrics reference with its example query
	// evaluated on the controller's scrapes, at the last one (the end of F5).
	MetricsQueries []MetricsQuery `json:"metrics_queries,omitempty"`
	// Floor (fleet profile) is the fastest any tool could drain the phase on this
	// cluster (package floor), from the run's sustained rate of pods becoming Ready.
	Floor *floor.Floor `json:"floor,omitempty"`
	// floorIn is the phase's input to the floor; ready the times pods became Ready
	// during it (the run's sustained rate is the best over every phase).
	floorIn floor.Input
	ready   []time.Time
}

// Report is every result of a bench run.
type Report struct {
	Profile  string    `json:"profile"`
	Machine  string    `json:"machine"`
	Date     time.Time `json:"date"`
	Results  []Result  `json:"results"`
	Failures []string  `json:"failures,omitempty"`
}

// Config is what Run needs.
type Config struct {
	Cluster *cluster.Cluster
	// Plugin is our built kubectl-maintenance; Kubectl the pinned kubectl.
	Plugin, Kubectl string
	Profile         Profile
	Logf            func(string, ...any)
	// RawDir, when set, keeps every tool's stdout and stderr there, for analysis.
	RawDir string
}

// Run runs every phase with every tool, each on a fresh workload.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	rep := &Report{Profile: cfg.Profile.Name, Date: time.Now().UTC(), Machine: machine()}
	for _, phase := range cfg.Profile.Phases {
		for _, tool := range cfg.Profile.Tools {
			cfg.Logf("bench: %s with %s", phase, tool)
			res, err := runOne(ctx, cfg, phase, tool)
			if err != nil {
				return rep, fmt.Errorf("%s with %s: %w", phase, tool, err)
			}
			rep.Results = append(rep.Results, *res)
			for _, v := range res.Violations {
				rep.Failures = append(rep.Failures, fmt.Sprintf("%s/%s: %s", phase, tool, v))
			}
			cfg.Logf("bench: %s with %s: %.1fs (limit %.1fs), %d evicted, %.0f eviction requests, %.0f refused",
				phase, tool, res.WallSec, res.LimitSec, res.Evicted, res.Evictions, res.Refused)
		}
	}
	return rep, nil
}

func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(p * float64(len(s)-1))
	return s[i]
}

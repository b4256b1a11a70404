package metrics

import (
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/utils/clock"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
)

// Recorder turns the event streams of runs (a Maintenance's, a local drain's) into
// metrics. Its methods are safe for concurrent use; one run's events come from one
// goroutine, in order. The zero value is not usable: call NewRecorder.
type Recorder struct {
	clock clock.PassiveClock

	evictions    *prometheus.CounterVec
	statusWrites *prometheus.CounterVec
	holds        *prometheus.CounterVec
	nodeDuration *prometheus.HistogramVec
	runDuration  *prometheus.HistogramVec

	waitingDesc, rateDesc, paceDesc, lagDesc, runsDesc *prometheus.Desc

	mu   sync.Mutex
	runs map[string]*runState
	// accepted are the times of the evictions accepted in the last rateWindowSeconds.
	accepted []time.Time
}

// runState is what the Recorder keeps of one run in progress.
type runState struct {
	started time.Time
	// pending is the attempt of each pod whose eviction request has no answer yet.
	pending map[string]int
	// lastReason is each pod's last refusal reason (a silent refusal repeats it).
	lastReason map[string]string
	waiting    map[string]string // pod -> reason
	podNode    map[string]string
	nodeStart  map[string]time.Time
	failed     map[string]bool // nodes that failed
	pace       float64
	lag        time.Duration
}

// NewRecorder returns a Recorder reading time from clk (default: the real clock).
func NewRecorder(clk clock.PassiveClock) *Recorder {
	if clk == nil {
		clk = clock.RealClock{}
	}
	r := &Recorder{
		clock: clk,
		runs:  map[string]*runState{},
		evictions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: EvictionsTotal,
			Help: help(EvictionsTotal)},
			[]string{"outcome"}),
		statusWrites: prometheus.NewCounterVec(prometheus.CounterOpts{Name: StatusWritesTotal,
			Help: help(StatusWritesTotal)},
			[]string{"result"}),
		holds: prometheus.NewCounterVec(prometheus.CounterOpts{Name: HoldsTotal,
			Help: help(HoldsTotal)},
			[]string{"caused"}),
		nodeDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: NodeDrainDuration,
			Help:    help(NodeDrainDuration),
			Buckets: prometheus.ExponentialBuckets(1, 2, 14)}, []string{"result"}),
		runDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: RunDuration,
			Help:    help(RunDuration),
			Buckets: prometheus.ExponentialBuckets(1, 2, 16)}, []string{"phase"}),
		waitingDesc: prometheus.NewDesc(PodsWaiting, help(PodsWaiting), []string{"reason"}, nil),
		rateDesc:    prometheus.NewDesc(EvictionRate, help(EvictionRate), nil, nil),
		paceDesc:    prometheus.NewDesc(EvictionPace, help(EvictionPace), nil, nil),
		lagDesc:     prometheus.NewDesc(DisruptionLag, help(DisruptionLag), nil, nil),
		runsDesc:    prometheus.NewDesc(RunsInProgress, help(RunsInProgress), nil, nil),
	}
	for _, caused := range []string{HoldCausedByRun, HoldCausedByOther} {
		r.holds.WithLabelValues(caused) // served at 0 from the start, so increase() sees the first
	}
	return r
}

// RunStarted starts the run named run (a Maintenance's name, "drain" for a local run).
func (r *Recorder) RunStarted(run string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.runs[run] = &runState{started: r.clock.Now(), pending: map[string]int{}, lastReason: map[string]string{},
		waiting: map[string]string{}, podNode: map[string]string{}, nodeStart: map[string]time.Time{}, failed: map[string]bool{}}
}

// RunEnded ends the run named run in phase (a Maintenance's phase; "Other" if unknown):
// its duration is observed, requests still without an answer are counted (refused_other
// on a node that failed, else error), and its pods stop waiting.
func (r *Recorder) RunEnded(run, phase string) {
	r.mu.Lock()
	st := r.runs[run]
	delete(r.runs, run)
	r.mu.Unlock()
	if st == nil {
		return
	}
	for pod := range st.pending {
		if st.failed[st.podNode[pod]] {
			r.evictions.WithLabelValues(OutcomeRefusedOther).Inc()
		} else {
			r.evictions.WithLabelValues(OutcomeError).Inc()
		}
	}
	r.runDuration.WithLabelValues(bounded(phase, phases)).Observe(r.clock.Since(st.started).Seconds())
}

// StatusWritten counts one status write sent, by its result (WriteOK, WriteConflict,
// WriteError).
func (r *Recorder) StatusWritten(result string) {
	r.statusWrites.WithLabelValues(bounded(result, []string{WriteOK, WriteConflict, WriteError})).Inc()
}

// Observe folds one event of the run named run in. A run not started (RunStarted) is
// started by its first event.
func (r *Recorder) Observe(run string, ev event.Event) {
	if ev.DryRun != "" {
		return // nothing was asked of the server
	}
	if ev.Type == event.EventWarning {
		switch ev.Reason {
		case drain.ReasonHoldCaused:
			r.holds.WithLabelValues(HoldCausedByRun).Inc()
		case drain.ReasonHoldSeen:
			r.holds.WithLabelValues(HoldCausedByOther).Inc()
		}
	}
	now := ev.Time
	if now.IsZero() {
		now = r.clock.Now()
	}
	var outcomes []string
	var node struct {
		result string
		took   time.Duration
	}
	r.mu.Lock()
	st := r.runs[run]
	if st == nil {
		r.mu.Unlock()
		r.RunStarted(run)
		r.mu.Lock()
		st = r.runs[run]
	}
	resolve := func(pod, outcome string) {
		if _, ok := st.pending[pod]; ok {
			delete(st.pending, pod)
			outcomes = append(outcomes, outcome)
			if outcome == OutcomeAccepted {
				r.accepted = append(r.accepted, r.clock.Now())
			}
		}
	}
	if ev.Pod != "" && ev.Node != "" {
		st.podNode[ev.Pod] = ev.Node
	}
	switch ev.Type {
	case event.EventNodeCordoned:
		if _, ok := st.nodeStart[ev.Node]; !ok {
			st.nodeStart[ev.Node] = now
		}
	case event.EventEvictionStarted:
		if _, ok := st.nodeStart[ev.Node]; !ok {
			st.nodeStart[ev.Node] = now
		}
		// An earlier request without an answer in the stream was refused in silence
		// (the engine says a wait on the same budget once).
		resolve(ev.Pod, silentOutcome(st.lastReason[ev.Pod]))
		st.pending[ev.Pod] = ev.Attempt
		delete(st.waiting, ev.Pod)
	case event.EventEvictionAccepted:
		resolve(ev.Pod, OutcomeAccepted)
		delete(st.waiting, ev.Pod)
	case event.EventPodEvicted:
		// Gone while the request was in flight: the eviction deleted it (an answer
		// recorded after the pod was seen gone says nothing more).
		resolve(ev.Pod, OutcomeAccepted)
		delete(st.waiting, ev.Pod)
	case event.EventEvictionBlocked:
		if out, ok := answerOutcome(ev.Reason); ok {
			if a, pending := st.pending[ev.Pod]; pending && a == ev.Attempt {
				resolve(ev.Pod, out)
			}
			st.lastReason[ev.Pod] = ev.Reason
		}
		st.waiting[ev.Pod] = bounded(ev.Reason, waitReasons)
	case event.EventPacing:
		st.pace, st.lag = ev.Rate, ev.Lag
		if ev.Rate == 0 {
			st.lag = 0
		}
	case event.EventNodeDrained, event.EventNodeFailed, event.EventNodeBlocked, event.EventNodeNotStarted:
		node.result = map[event.Type]string{event.EventNodeDrained: NodeResultDrained, event.EventNodeFailed: NodeResultFailed,
			event.EventNodeBlocked: NodeResultBlocked}[ev.Type]
		if ev.Type != event.EventNodeDrained {
			st.failed[ev.Node] = true
		}
		if start, ok := st.nodeStart[ev.Node]; ok && node.result != "" {
			node.took = now.Sub(start)
			delete(st.nodeStart, ev.Node)
		} else {
			node.result = ""
		}
		for pod, n := range st.podNode {
			if n == ev.Node {
				delete(st.waiting, pod)
			}
		}
	}
	r.pruneLocked()
	r.mu.Unlock()
	for _, o := range outcomes {
		r.evictions.WithLabelValues(o).Inc()
	}
	if node.result != "" {
		r.nodeDuration.WithLabelValues(node.result).Observe(max(0, node.took.Seconds()))
	}
}

// answerOutcome is the outcome of an eviction request the engine reports with reason,
// and whether reason is the server's answer (not a wait the engine decided alone).
func answerOutcome(reason string) (string, bool) {
	switch reason {
	case "DisruptionBudget", "MultiplePDBs":
		return OutcomeRefusedBudget, true
	case "Conflict", "TooManyRequests":
		return OutcomeRefusedOther, true
	case "Error":
		return OutcomeError, true
	}
	return "", false
}

// silentOutcome is the outcome of a request the engine answered without an event: a
// refusal said once before (its reason last).
func silentOutcome(last string) string {
	if out, ok := answerOutcome(last); ok {
		return out
	}
	return OutcomeRefusedBudget
}

// Describe implements prometheus.Collector for the gauges computed at scrape time.
func (r *Recorder) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{r.waitingDesc, r.rateDesc, r.paceDesc, r.lagDesc, r.runsDesc} {
		ch <- d
	}
}

// Collect implements prometheus.Collector: the gauges, computed under the lock and sent
// after it.
func (r *Recorder) Collect(ch chan<- prometheus.Metric) {
	g := r.gauges()
	for _, reason := range append(slices.Clone(waitReasons), otherValue) {
		ch <- prometheus.MustNewConstMetric(r.waitingDesc, prometheus.GaugeValue, float64(g.waiting[reason]), reason)
	}
	ch <- prometheus.MustNewConstMetric(r.rateDesc, prometheus.GaugeValue, g.rate)
	ch <- prometheus.MustNewConstMetric(r.paceDesc, prometheus.GaugeValue, g.pace)
	ch <- prometheus.MustNewConstMetric(r.lagDesc, prometheus.GaugeValue, g.lag.Seconds())
	ch <- prometheus.MustNewConstMetric(r.runsDesc, prometheus.GaugeValue, float64(g.runs))
}

// gaugeValues are the scrape-time gauges.
type gaugeValues struct {
	waiting map[string]int
	rate    float64
	pace    float64
	lag     time.Duration
	runs    int
}

func (r *Recorder) gauges() gaugeValues {
	r.mu.Lock()
	defer r.mu.Unlock()
	g := gaugeValues{waiting: map[string]int{}, runs: len(r.runs)}
	r.pruneLocked()
	g.rate = float64(len(r.accepted)) / rateWindowSeconds
	for _, st := range r.runs {
		for _, reason := range st.waiting {
			g.waiting[reason]++
		}
		g.pace += st.pace
		g.lag = max(g.lag, st.lag)
	}
	return g
}

// pruneLocked forgets the acceptances older than the rate's window.
func (r *Recorder) pruneLocked() {
	since := r.clock.Now().Add(-rateWindowSeconds * time.Second)
	i := 0
	for i < len(r.accepted) && r.accepted[i].Before(since) {
		i++
	}
	r.accepted = r.accepted[i:]
}

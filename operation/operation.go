package operation

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/roll"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// Action names what a Request does.
type Action string

// Actions.
const (
	// Cordon marks the nodes unschedulable (as this tool's field manager).
	Cordon Action = "cordon"
	// Uncordon makes the nodes schedulable again when their cordon is this tool's (or
	// Force), and removes this tool's records.
	Uncordon Action = "uncordon"
	// Drain cordons the nodes and evicts their pods as far as the budgets allow; the
	// members of a pool drain rolling, at most its maxUnavailable at a time.
	Drain Action = "drain"
	// Move moves the nodes to pool To in the window of the pools they leave: per node
	// cordon, drain, relabel and retaint, uncordon.
	Move Action = "move"
	// Rollout rolls the new NoExecute taints of Pool out to its members, in the pool's
	// window: per node drain of the pods the taints would remove, taint, uncordon.
	Rollout Action = "rollout"
)

// Request is one action on some nodes.
type Request struct {
	Action Action
	// Nodes names the nodes. When empty, Selector or Pool selects them.
	Nodes []string
	// Selector is a label selector of the nodes (when Nodes is empty).
	Selector string
	// Pool is a NodePool: when Nodes is empty its members are the nodes, and a drain of
	// them (not a dry run) rolls in the pool's window (roll.Window) unless
	// Drain.MaxParallelNodes is set. A Rollout's pool.
	Pool string
	// Force uncordons a node whose cordon someone else made (Uncordon).
	Force bool
	// Surge lets a drain or a move surge the one-replica Deployment of a pod whose budget
	// never allows a disruption (--surge). Without it a drain only finishes and restores
	// the surges an interrupted run left.
	Surge bool
	// Drain are the drain settings (kubectl drain's flags, a Maintenance's spec.drain
	// and spec.policy) of a drain, a move or a rollout, as their front end validated them
	// (drain.Settings.Validate, once); the engine's door only asserts them. Drain.DryRun
	// is every action's dry run, a cordon's too: none (its zero value too), client
	// (nothing sent) or server (changes sent with dryRun=All). MaxParallelNodes 0 means
	// the default (the pool's maxUnavailable for a pool drain, else DefaultSettings').
	// The layer adds the wiring (clients, clock, events, the run's origin) when it
	// builds the engine.
	Drain drain.Settings
	// The caller's own wiring of the engine (drain.Config's fields of the same names).
	//
	// RecordEvents writes Kubernetes Events on each node a drain touches.
	RecordEvents bool
	// ClientBurst is how many requests the clientset sends at once (its burst).
	ClientBurst int
	// WaitInterval is how often a wait that has not changed is said again (0: the
	// engine's default).
	WaitInterval time.Duration
	// Ledger, when set, is the view of the budgets the engines of the process share (a
	// controller's or a dashboard's runs); nil: the engine's own.
	Ledger *drain.Ledger
	// AfterCordon, when set, is called once the run has cordoned its batch and before
	// its first eviction (drain.Config.AfterCordon: the controller's runs admitted
	// together).
	AfterCordon func(ctx context.Context)
	// To is the target pool of a move; From, when set, the pools the nodes leave.
	To   string
	From []string
	// AllowMissingHandler lets a move go on to nodes that don't list the target pool's
	// RuntimeClass handler.
	AllowMissingHandler bool
	// Moves, when set, is the move's plan as Plan returned it: Run carries it out
	// instead of planning again (Plan made the permission preflight).
	Moves *MovePlan
	// Command is the front end's command line, recorded on the nodes a cordon or a drain
	// changes with the user who ran it (noderecord.Run; status shows both).
	Command string
	// RunID, when set, is the run's stable identity, recorded on the nodes it holds: a
	// later run with the same RunID (the next leader running the same Maintenance) takes
	// those nodes over at once instead of waiting for their heartbeats to expire. Empty:
	// a fresh identity for each run (a CLI command).
	RunID string
	// RequestedBy, when set, is the user who asked for the run (a Maintenance's
	// requested-by annotation, which the admission policy keeps true): the nodes record
	// "<RequestedBy> (via <the user this process acts as>)" as the run's user.
	RequestedBy string
	// Resolved, when set, is this request's Resolve: Run acts on its nodes without
	// resolving them again.
	Resolved *Resolved
	// IncludeDisrupting drains (or moves) nodes Karpenter is already disrupting (taint
	// karpenter.sh/disrupted) too. Without it they are left to Karpenter, untouched: one
	// warning each, and the run ends in a *drain.DisruptingError (blocked by policy).
	IncludeDisrupting bool

	// origin is the run recorded on the nodes, decided once by Run (withOrigin).
	origin noderecord.Run
}

// Origin is the run a real run of r records on its nodes, less the user (Run adds the
// user the API server says it is): its RunID and its Command.
func (r Request) Origin() noderecord.Run { return noderecord.Run{ID: r.RunID, Command: r.Command} }

// Plan is what a Request would do, computed without changing anything.
type Plan struct {
	Action Action
	// Nodes are the nodes the request resolved to.
	Nodes []string
	// Changes says, for a cordon or an uncordon, what happens to each node.
	Changes []NodeChange
	// Drain is the drain's plan (Drain).
	Drain *event.Plan
	// Move is the move's plan (Move).
	Move *MovePlan
	// Resolved is the resolution the plan was made from: a caller that runs the plan
	// (Request.Moves) hands it on in Request.Resolved so that Run reads the nodes no more.
	Resolved *Resolved
}

// NodeChange is what a cordon or an uncordon does to one node.
type NodeChange struct {
	Node string
	// Already is true when a cordon finds the node cordoned.
	Already bool
	// Uncordon is what an uncordon does.
	Uncordon drain.UncordonResult
	// CordonedBy names the field managers whose cordon the node carries.
	CordonedBy []string
}

// MovePlan is a move's plan: each node's change and the target pool.
type MovePlan struct {
	Moves  []*roll.NodeMove
	Target *v1alpha1.NodePool
}

// Summary is what Run did.
type Summary struct {
	// Summary holds the drain's counts (of a drain, a move or a rollout: one run of the
	// engine each); zero for a cordon or an uncordon.
	drain.Summary
	// Changes says what a cordon or an uncordon did to each node.
	Changes []NodeChange
	// Moves is a move's per-node result.
	Moves []*roll.NodeMove
	// Rollout is what a rollout did.
	Rollout *roll.RolloutResult
}

// Operator plans and runs Requests against one cluster.
type Operator struct {
	// Kube is the cluster's clientset (required).
	Kube kubernetes.Interface
	// EventKube posts the drain's node Events: a clientset with a rate limiter of its own,
	// so that an Event never waits in front of a cordon or an eviction. Default: Kube.
	EventKube kubernetes.Interface
	// Pools reads and writes NodePools; needed for a move and for a Pool request.
	Pools client.Client
	// Logger receives diagnostics (never user-facing progress). Default: discard.
	Logger klog.Logger
	// Clock stamps the layer's own events. Default: the real clock.
	Clock clock.PassiveClock
	// User names the user when the API server will not say (no SelfSubjectReview): the
	// kubeconfig's user, for the preflight's messages and the origin record.
	User string

	mu        sync.Mutex
	user      string // the API server's answer to who the user is, once asked
	userKnown bool
}

// UsageError is a Request that cannot be carried out as given (nothing was changed): the
// one usage-error type, drain.UsageError (exit 2 in the commands).
type UsageError = drain.UsageError

func usagef(format string, args ...any) error { return drain.Usagef(format, args...) }

// NodesError is a cordon or an uncordon that failed on some nodes. Each failure was also
// reported as a node.failed event.
type NodesError struct {
	// Failed holds one message per node that failed.
	Failed []string
}

func (e *NodesError) Error() string { return strings.Join(e.Failed, "; ") }

func (o *Operator) check(req *Request) error {
	if o.Kube == nil {
		return errors.New("operation: a clientset is required")
	}
	switch req.Action {
	case Cordon, Uncordon, Drain:
	case Rollout:
		if req.Pool == "" {
			return usagef("a rollout needs a pool")
		}
		if o.Pools == nil {
			return errors.New("operation: a rollout needs a NodePool client")
		}
	case Move:
		if req.To == "" {
			return usagef("a move needs a target pool")
		}
		if o.Pools == nil {
			return errors.New("operation: a move needs a NodePool client")
		}
	default:
		return usagef("unknown action %q", req.Action)
	}
	// The settings come validated by the front end (drain.Settings.Validate) and the
	// engine's door asserts them (drain.NewEngine); a cordon and an uncordon go to no
	// engine, but their dry run decides whether anything is sent: asserted here.
	if req.Action == Cordon || req.Action == Uncordon {
		if err := req.Drain.AssertValid(); err != nil {
			return err
		}
	}
	// The dry run's zero value is DefaultSettings' (none), read here once for every action.
	if req.Drain.DryRun == "" {
		req.Drain.DryRun = drain.DefaultSettings().DryRun
	}
	return nil
}

func (o *Operator) now() time.Time {
	if o.Clock == nil {
		return time.Now()
	}
	return o.Clock.Now()
}

func (o *Operator) logger() klog.Logger {
	if o.Logger.GetSink() == nil {
		return klog.Background()
	}
	return o.Logger
}

// Plan computes what req would do, changing nothing. For a move it is the label and taint
// change per node; plan the drain it includes with a Drain request of the same nodes.
// req.Resolved, when set, is used instead of resolving the nodes again (a move's plan
// followed by its drain's, say); the plan carries its resolution in Plan.Resolved.
func (o *Operator) Plan(ctx context.Context, req Request) (*Plan, error) {
	if err := o.check(&req); err != nil {
		return nil, err
	}
	if req.Action == Rollout {
		return nil, usagef("a rollout has no plan of its own: plan a drain of the pool")
	}
	rz := req.Resolved
	if rz == nil {
		var err error
		if rz, err = o.resolve(ctx, req); err != nil {
			return nil, err
		}
	}
	names := rz.Nodes
	var err error
	if req.Action == Move {
		// A move's plan is the first step of its run (Request.Moves): ask first.
		if err := o.preflight(ctx, req, names); err != nil {
			return nil, err
		}
	}
	p := &Plan{Action: req.Action, Nodes: names, Resolved: rz}
	switch req.Action {
	case Cordon, Uncordon:
		p.Changes, err = o.planCordon(ctx, req, names)
	case Drain:
		p.Drain, err = o.planDrain(ctx, req, names)
	case Move:
		p.Move, err = o.planMove(ctx, req, rz)
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Run carries req out and sends its events, in order, on events; it returns when every
// goroutine it started has ended and nothing more will be sent. It is the one entry of
// every action, rollouts included: before anything changes it resolves the nodes once
// (a rollout's: the pool's members that lack its NoExecute taints), asks the API server
// whether the user may make every call the action will make (an *access.Denied
// otherwise, nothing changed), records who runs it and writes the Node conditions
// (KEP-5683) as the events go. The caller must read events until Run returns (Run never
// closes the channel). Cancelling ctx stops the action; the nodes keep what was done (a
// drain, a move or a rollout resumes when run again).
func (o *Operator) Run(ctx context.Context, req Request, events chan<- event.Event) (Summary, error) {
	if err := o.check(&req); err != nil {
		return Summary{}, err
	}
	if events == nil {
		return Summary{}, errors.New("operation: an events channel is required")
	}
	if req.Action == Rollout {
		ro := &roll.Rollout{Kube: o.Kube, Client: o.Pools}
		pending, err := ro.Start(ctx, req.Pool)
		if err != nil || len(pending) == 0 {
			return Summary{Rollout: &roll.RolloutResult{}}, err
		}
		return o.run(ctx, req, target{Resolved: &Resolved{Nodes: pending}, rollout: ro}, events)
	}
	rz := req.Resolved
	if rz == nil {
		var err error
		if rz, err = o.Resolve(ctx, req); err != nil {
			return Summary{}, err
		}
	}
	names, left := o.leaveDisrupting(req, rz.Nodes, rz.disrupting, events)
	if left != nil && len(names) == 0 {
		return Summary{}, left // every node left to Karpenter
	}
	kept := *rz
	kept.Nodes = names
	sum, err := o.run(ctx, req, target{Resolved: &kept}, events)
	if err == nil && left != nil {
		err = left // the others went; the nodes left to Karpenter make it blocked by policy
	}
	return sum, err
}

// target is what a request resolved to, carried from the resolution to the run: the
// nodes (as read), the pool of a pool request (read once) and a rollout as its Start
// left it.
type target struct {
	*Resolved
	rollout *roll.Rollout
}

// run is Run once the nodes are resolved and those Karpenter disrupts left out.
func (o *Operator) run(ctx context.Context, req Request, t target, events chan<- event.Event) (Summary, error) {
	if req.Moves == nil { // a move planned by Plan was asked about there
		if err := o.preflight(ctx, req, t.Nodes); err != nil {
			if t.rollout != nil {
				t.rollout.Finish(ctx, err) // the pool's condition says why nothing rolled
			}
			return Summary{}, err
		}
	}
	o.withOrigin(ctx, &req)
	if tap := o.newConditionTap(req); tap != nil {
		// The Node conditions (KEP-5683) follow the events (conditions.go).
		in, out := make(chan event.Event), events
		tapped := make(chan struct{})
		go func() {
			defer close(tapped)
			tap.run(ctx, in, out)
		}()
		defer func() {
			close(in)
			<-tapped
		}()
		events = in
	}
	switch req.Action {
	case Cordon, Uncordon:
		return o.runCordon(ctx, req, t.Nodes, events)
	case Drain:
		return o.runDrain(ctx, req, t.Nodes, t.pool, events)
	case Rollout:
		return o.runRollout(ctx, req, t.rollout, t.Nodes, events)
	default:
		return o.runMove(ctx, req, t.Resolved, events)
	}
}

// emit stamps ev and sends it. The caller reads until Run returns, so the send ends.
func (o *Operator) emit(events chan<- event.Event, ev event.Event) {
	if ev.Time.IsZero() {
		ev.Time = o.now()
	}
	events <- ev
}

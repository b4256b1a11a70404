package operation

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/surge"
)

// engine builds the drain engine with req's settings, sending on events.
func (o *Operator) engine(req Request, events chan<- event.Event) (*drain.Engine, error) {
	cfg := req.Drain
	cfg.Client, cfg.Events, cfg.DryRun = o.Kube, events, req.DryRun
	if cfg.Surge == nil {
		cfg.Surge = surge.New(o.Kube)
		if !req.Surge {
			cfg.Surge = surge.New(o.Kube).ResumeOnly()
		}
	}
	if req.Surge && cfg.Permit == nil {
		cfg.Permit = o.surgePermit(req.DryRun)
	}
	if cfg.Logger.GetSink() == nil {
		cfg.Logger = o.logger()
	}
	eng, err := drain.NewEngine(cfg)
	if err != nil {
		return nil, &UsageError{msg: err.Error()}
	}
	return eng, nil
}

// planDrain is the drain engine's plan of names (nothing is sent on any channel).
func (o *Operator) planDrain(ctx context.Context, req Request, names []string) (*event.Plan, error) {
	eng, err := o.engine(req, make(chan event.Event))
	if err != nil {
		return nil, err
	}
	return eng.Plan(ctx, names)
}

// runDrain drains names: the members of a pool roll batch by batch (at most its
// maxUnavailable, unless MaxParallelNodes is set); anything else is one run of the engine.
// A dry run of a pool plans with the pool's maxUnavailable at once.
func (o *Operator) runDrain(ctx context.Context, req Request, names []string, pool *v1alpha1.NodePool, events chan<- event.Event) (Summary, error) {
	if pool != nil && req.Drain.MaxParallelNodes == 0 {
		if req.DryRun == drain.DryRunNone {
			return o.runPool(ctx, req, names, pool, events)
		}
		req.Drain.MaxParallelNodes = pool.MaxUnavailableOrDefault()
	}
	eng, err := o.engine(req, events)
	if err != nil {
		return Summary{}, err
	}
	sum, err := eng.Run(ctx, names)
	return Summary{Summary: sum}, err
}

// runPool is a pool's rolling drain, one run of the engine as a sliding window (poolRoom
// says when a node may start; the engine takes members out of service first): each node
// cordoned as it starts, at most the pool's maxUnavailable of its members out of service
// at once, and a node starts as soon as another finishes. Drain.Timeout bounds the whole
// drain.
func (o *Operator) runPool(ctx context.Context, req Request, names []string, pool *v1alpha1.NodePool, events chan<- event.Event) (Summary, error) {
	room := &poolRoom{kube: o.Kube, pool: pool}
	req.Drain.MaxParallelNodes = pool.MaxUnavailableOrDefault()
	req.Drain.Rolling = room
	eng, err := o.engine(req, events)
	if err != nil {
		return Summary{}, err
	}
	sum, err := eng.Run(ctx, names)
	return Summary{Summary: sum}, err
}

// poolRoom lets the next node of a pool's rolling drain start while the pool's members
// out of service stay within its maxUnavailable. It implements drain.Admitter.
type poolRoom struct {
	kube kubernetes.Interface
	pool *v1alpha1.NodePool
	rv   string          // the resourceVersion of the last look (Wait watches from it)
	out  map[string]bool // the members out of service at the last look
}

// outOfService lists the pool's members by whether each is cordoned or NotReady.
func (p *poolRoom) outOfService(ctx context.Context) (map[string]bool, error) {
	list, err := p.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: nodepool.RoleLabel(p.pool.Name)})
	if err != nil {
		return nil, fmt.Errorf("list the nodes of pool %s: %w", p.pool.Name, err)
	}
	out := map[string]bool{}
	for i := range list.Items {
		out[list.Items[i].Name] = nodepool.Unavailable(&list.Items[i])
	}
	p.rv, p.out = list.ResourceVersion, out
	return out, nil
}

// Unavailable implements drain.Admitter: whether node was out of service at the last look.
func (p *poolRoom) Unavailable(node string) bool { return p.out[node] }

// Room implements drain.Admitter. Out of service are the run's nodes in progress and
// every other member cordoned or NotReady, except the run's nodes drained or given up
// (they stay cordoned, as a drain leaves them); a node may start while they are fewer
// than maxUnavailable, or at once if it is out of service itself (taking it makes
// nothing less available).
func (p *poolRoom) Room(ctx context.Context, a drain.Admission) (string, error) {
	limit := p.pool.MaxUnavailableOrDefault()
	out, err := p.outOfService(ctx)
	if err != nil {
		return "", err
	}
	if out[a.Node] {
		return "", nil
	}
	counted := slices.Clone(a.Running)
	for n, o := range out {
		if o && n != a.Node && !slices.Contains(a.Running, n) && !slices.Contains(a.Done, n) {
			counted = append(counted, n)
		}
	}
	if len(counted) < limit {
		return "", nil
	}
	slices.Sort(counted)
	return fmt.Sprintf("waiting: pool %s has %d node(s) out of service (%s), its maxUnavailable is %d",
		p.pool.Name, len(counted), strings.Join(counted, ", "), limit), nil
}

// Wait implements drain.Admitter: it returns at the first change of a member since the
// last look (a watch from that look's resourceVersion), or with ctx's error.
func (p *poolRoom) Wait(ctx context.Context) error {
	return nodepool.WaitForNodeChange(ctx, p.kube, metav1.ListOptions{LabelSelector: nodepool.RoleLabel(p.pool.Name), ResourceVersion: p.rv})
}

// BatchDrainer drains the batches of a rolling move or rollout through the drain
// engine, with the request's settings, each batch given what is left of the whole
// operation's timeout. Every batch's events go to one channel. It implements
// nodepool.Drainer and nodepool.TimedDrainer.
type BatchDrainer struct {
	o      *Operator
	req    Request
	events chan<- event.Event
	total  drain.Summary
}

// Drainer returns a BatchDrainer with req's drain settings, sending on events.
func (o *Operator) Drainer(req Request, events chan<- event.Event) *BatchDrainer {
	if req.DryRun == "" {
		req.DryRun = drain.DryRunNone
	}
	return &BatchDrainer{o: o, req: req, events: events}
}

// Run implements nodepool.Drainer: it drains nodes with the request's own timeout.
func (d *BatchDrainer) Run(ctx context.Context, nodes []string) (drain.Summary, error) {
	return d.RunWithin(ctx, nodes, d.req.Drain.Timeout)
}

// RunWithin implements nodepool.TimedDrainer: it drains nodes within timeout (0: none).
func (d *BatchDrainer) RunWithin(ctx context.Context, nodes []string, timeout time.Duration) (drain.Summary, error) {
	req := d.req
	req.Drain.Timeout = timeout
	eng, err := d.o.engine(req, d.events)
	if err != nil {
		return drain.Summary{}, err
	}
	sum, err := eng.Run(ctx, nodes)
	d.total = d.total.Add(sum)
	return sum, err
}

// Total is every batch's summary added up (what is pending is the last batch's).
func (d *BatchDrainer) Total() drain.Summary { return d.total }

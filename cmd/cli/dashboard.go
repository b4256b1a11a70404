package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/spf13/cobra"
	"golang.org/x/term"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui/confirm"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui/data"
)

// NewCmdDashboard builds "kubectl maintenance dashboard" (alias ui).
func NewCmdDashboard(c *Common) *cobra.Command {
	var logFile string
	cmd := &cobra.Command{
		Use:     "dashboard",
		Aliases: []string{"ui"},
		Short:   "Interactive terminal dashboard: nodes, pools, PDB budgets, live drain progress; act on selected nodes",
		Long: `An interactive dashboard (needs a terminal). Views: 1 Nodes, 2 Pools, 3 PDBs, 4 Progress,
5 Events (tab cycles). On Nodes: space selects, a selects all visible, / filters; then
c cordon, u uncordon, d drain, m move to a pool. Every action shows its plan first and asks
for confirmation; drain options can be set in the dialog. q quits (asking first while an
action runs; the nodes stay resumable). Data comes from watches, live.`,
		Args: noArgsUsage,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !term.IsTerminal(int(os.Stdin.Fd())) || !term.IsTerminal(int(os.Stdout.Fd())) {
				return UsageErrorf("the dashboard needs a terminal (stdin and stdout); use plan, drain and -o json in scripts")
			}
			cs, err := c.Client()
			if err != nil {
				return err
			}
			pc, err := c.PoolClient()
			if err != nil {
				return err
			}
			cfg, err := c.RESTConfig()
			if err != nil {
				return err
			}
			dyn, err := dynamic.NewForConfig(cfg)
			if err != nil {
				return fmt.Errorf("build dynamic client: %w", err)
			}
			// klog must not write to the screen the dashboard owns.
			var logOut io.Writer = io.Discard
			if logFile != "" {
				f, err := os.Create(logFile)
				if err != nil {
					return UsageErrorf("open --log-file: %v", err)
				}
				defer func() { _ = f.Close() }()
				logOut = f
			}
			klog.LogToStderr(false)
			klog.SetOutput(logOut)
			ctx, cancel := context.WithCancel(cmd.Context())
			defer cancel()
			b, err := newBackend(ctx, c, cs, pc, dyn)
			if err != nil {
				return err
			}
			_, noColor := os.LookupEnv("NO_COLOR")
			p := tea.NewProgram(tui.New(b, noColor), tea.WithContext(ctx))
			_, err = p.Run()
			if err != nil && ctx.Err() == nil {
				return fmt.Errorf("dashboard: %w", err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&logFile, "log-file", "", "write client logs (-v) to this file while the dashboard owns the screen (default: discarded)")
	return cmd
}

// backend feeds the dashboard from informers and runs its actions with the engines.
type backend struct {
	ctx   context.Context
	c     *Common
	cs    kubernetes.Interface
	pc    client.Client
	snaps chan data.Snapshot

	nodes, pods, pdbs cache.GenericLister
	pools             cache.GenericLister

	mu     sync.Mutex
	cancel context.CancelFunc
}

// snapshotEvery bounds how often the dashboard's model is rebuilt: changes arriving in
// between are folded into one snapshot (screen refreshes, not API calls).
const snapshotEvery = 250 * time.Millisecond

func newBackend(ctx context.Context, c *Common, cs kubernetes.Interface, pc client.Client, dyn dynamic.Interface) (*backend, error) {
	b := &backend{ctx: ctx, c: c, cs: cs, pc: pc, snaps: make(chan data.Snapshot, 1)}
	changed := make(chan struct{}, 1)
	poke := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { signal(changed) },
		UpdateFunc: func(any, any) { signal(changed) },
		DeleteFunc: func(any) { signal(changed) },
	}
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithTransform(trimForDashboard))
	informers := []cache.SharedIndexInformer{f.Core().V1().Nodes().Informer(), f.Core().V1().Pods().Informer(), f.Policy().V1().PodDisruptionBudgets().Informer()}
	b.nodes = cache.NewGenericLister(informers[0].GetIndexer(), corev1.Resource("nodes"))
	b.pods = cache.NewGenericLister(informers[1].GetIndexer(), corev1.Resource("pods"))
	b.pdbs = cache.NewGenericLister(informers[2].GetIndexer(), policyv1.Resource("poddisruptionbudgets"))
	if err := pc.List(ctx, &v1alpha1.NodePoolList{}, client.Limit(1)); err == nil {
		df := dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)
		inf := df.ForResource(v1alpha1.GroupVersion.WithResource("nodepools")).Informer()
		informers = append(informers, inf)
		b.pools = cache.NewGenericLister(inf.GetIndexer(), v1alpha1.GroupVersion.WithResource("nodepools").GroupResource())
		df.Start(ctx.Done())
	}
	for _, inf := range informers {
		if _, err := inf.AddEventHandler(poke); err != nil {
			return nil, fmt.Errorf("watch: %w", err)
		}
	}
	f.Start(ctx.Done())
	for _, inf := range informers {
		if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
			return nil, fmt.Errorf("watch the cluster: %w", ctx.Err())
		}
	}
	go b.feed(changed)
	signal(changed)
	return b, nil
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// feed rebuilds the snapshot after changes, at most every snapshotEvery, keeping only
// the newest undelivered one.
func (b *backend) feed(changed <-chan struct{}) {
	for {
		select {
		case <-b.ctx.Done():
			return
		case <-changed:
		}
		s := b.snapshot()
		select {
		case <-b.snaps:
		default:
		}
		b.snaps <- s
		select {
		case <-b.ctx.Done():
			return
		case <-time.After(snapshotEvery):
		}
	}
}

func (b *backend) snapshot() data.Snapshot {
	var nodes []*corev1.Node
	var pods []*corev1.Pod
	var pdbs []*policyv1.PodDisruptionBudget
	var pools []*v1alpha1.NodePool
	objs, _ := b.nodes.List(labels.Everything())
	for _, o := range objs {
		nodes = append(nodes, o.(*corev1.Node))
	}
	objs, _ = b.pods.List(labels.Everything())
	for _, o := range objs {
		pods = append(pods, o.(*corev1.Pod))
	}
	objs, _ = b.pdbs.List(labels.Everything())
	for _, o := range objs {
		pdbs = append(pdbs, o.(*policyv1.PodDisruptionBudget))
	}
	if b.pools != nil {
		objs, _ = b.pools.List(labels.Everything())
		for _, o := range objs {
			p := &v1alpha1.NodePool{}
			if u, ok := o.(interface{ UnstructuredContent() map[string]any }); ok &&
				runtime.DefaultUnstructuredConverter.FromUnstructured(u.UnstructuredContent(), p) == nil {
				pools = append(pools, p)
			}
		}
	}
	return data.Build(nodes, pods, pdbs, pools, time.Now())
}

// Snapshots implements tui.Backend.
func (b *backend) Snapshots() <-chan data.Snapshot { return b.snaps }

func (b *backend) drainOptions(o confirm.Options) *DrainOptions {
	return &DrainOptions{Common: b.c, GracePeriod: o.GracePeriodSeconds, Timeout: o.Timeout, IgnoreDaemonSets: o.IgnoreDaemonSets,
		DeleteEmptyDirData: o.DeleteEmptyDirData, Force: o.Force, ChunkSize: drain.DefaultChunkSize, DryRun: "none",
		MaxParallelNodes: drain.DefaultMaxParallelNodes}
}

// Plan implements tui.Backend: the drain's plan, as the plan command prints it.
func (b *backend) Plan(req confirm.Request) (string, error) {
	switch req.Action {
	case confirm.Cordon:
		return fmt.Sprintf("Mark %d node(s) unschedulable; no pod is evicted.", len(req.Nodes)), nil
	case confirm.Uncordon:
		return fmt.Sprintf("Make %d node(s) schedulable again (a node cordoned by someone else before a drain stays cordoned).", len(req.Nodes)), nil
	}
	var head string
	if req.Action == confirm.Move {
		moves, _, err := (&nodepool.Mover{Kube: b.cs, Pools: b.pc}).Plan(b.ctx, req.Nodes, req.Pool, nil)
		if err != nil {
			return "", err
		}
		var hb bytes.Buffer
		for _, mv := range moves {
			fmt.Fprintf(&hb, "node/%s -> %s: %v\n", mv.Node, mv.To, mv.Diff)
		}
		head = hb.String() + "\n"
	}
	eng, err := drain.NewEngine(b.drainOptions(req.Options).engineConfig(b.cs, make(chan drain.Event), klog.Background()))
	if err != nil {
		return "", err
	}
	plan, err := eng.Plan(b.ctx, req.Nodes)
	if err != nil {
		return "", err
	}
	var out bytes.Buffer
	printPlan(&out, plan)
	return head + out.String(), nil
}

// Start implements tui.Backend.
func (b *backend) Start(req confirm.Request) (<-chan drain.Event, error) {
	ctx, cancel := context.WithCancel(b.ctx)
	b.mu.Lock()
	b.cancel = cancel
	b.mu.Unlock()
	events := make(chan drain.Event, 256)
	emit := func(ev drain.Event) {
		ev.Time = time.Now()
		events <- ev
	}
	go func() {
		defer close(events)
		defer cancel()
		var err error
		switch req.Action {
		case confirm.Cordon, confirm.Uncordon:
			err = b.cordon(ctx, req, emit)
		case confirm.Drain:
			err = b.runDrain(ctx, req, events, req.Nodes)
		case confirm.Move:
			m := &nodepool.Mover{Kube: b.cs, Pools: b.pc}
			moves, target, perr := m.Plan(ctx, req.Nodes, req.Pool, nil)
			if err = perr; err == nil {
				err = m.Run(ctx, moves, target, drainerFunc(func(ctx context.Context, names []string) (drain.Summary, error) {
					return drain.Summary{}, b.runDrain(ctx, req, events, names)
				}))
				for _, mv := range moves {
					emit(drain.Event{Type: drain.EventWarning, Node: mv.Node, Message: fmt.Sprintf("node/%s moved to pool %s", mv.Node, mv.To)})
				}
			}
		}
		if err != nil {
			emit(drain.Event{Type: drain.EventNodeFailed, Message: err.Error()})
		}
	}()
	return events, nil
}

type drainerFunc func(ctx context.Context, names []string) (drain.Summary, error)

func (f drainerFunc) Run(ctx context.Context, names []string) (drain.Summary, error) {
	return f(ctx, names)
}

func (b *backend) runDrain(ctx context.Context, req confirm.Request, events chan<- drain.Event, names []string) error {
	eng, err := drain.NewEngine(b.drainOptions(req.Options).engineConfig(b.cs, events, klog.Background()))
	if err != nil {
		return err
	}
	_, err = eng.Run(ctx, names)
	return err
}

func (b *backend) cordon(ctx context.Context, req confirm.Request, emit func(drain.Event)) error {
	for _, name := range req.Nodes {
		n, err := b.cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("get node %s: %w", name, err)
		}
		if req.Action == confirm.Cordon {
			already, err := drain.Cordon(ctx, b.cs, n, false)
			if err != nil {
				return err
			}
			emit(drain.Event{Type: drain.EventNodeCordoned, Node: name, Already: already})
			emit(drain.Event{Type: drain.EventNodeDrained, Node: name, Message: "cordoned"})
			continue
		}
		res, err := drain.Uncordon(ctx, b.cs, n, false, false)
		if err != nil {
			return err
		}
		msg := map[drain.UncordonResult]string{drain.Uncordoned: "uncordoned", drain.AlreadySchedulable: "already uncordoned",
			drain.LeftCordoned: "left cordoned: it was cordoned before this tool drained it"}[res]
		emit(drain.Event{Type: drain.EventWarning, Node: name, Message: "node/" + name + " " + msg})
		emit(drain.Event{Type: drain.EventNodeDrained, Node: name, Message: msg})
	}
	return nil
}

// Cancel implements tui.Backend.
func (b *backend) Cancel() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cancel != nil {
		b.cancel()
	}
}

// trimForDashboard drops what the dashboard never reads from cached objects.
func trimForDashboard(obj any) (any, error) {
	switch o := obj.(type) {
	case *corev1.Pod:
		o.ManagedFields = nil
		o.Spec.Containers, o.Spec.InitContainers, o.Spec.Volumes = nil, nil, nil
		o.Status.ContainerStatuses, o.Status.InitContainerStatuses = nil, nil
	case *corev1.Node:
		o.ManagedFields = nil
		o.Status.Images = nil
	case *policyv1.PodDisruptionBudget:
		o.ManagedFields = nil
	}
	return obj, nil
}

package operation

import (
	"context"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

// The status read model: every node this tool has touched, from the cluster alone (the
// nodes' state label and annotations, and their cordon's owner), with the pods left on
// each and what blocks them (the drain's own plan, read-only). Front ends print it.

// NodeStatus is one touched node's status (its JSON is status's -o json).
type NodeStatus struct {
	Name    string     `json:"-"`
	State   string     `json:"state"`
	Since   *time.Time `json:"since,omitempty"`
	Command string     `json:"command,omitempty"`
	User    string     `json:"user,omitempty"`
	// HeldBy names the live run that holds the node ("maintenance/<name>" for the
	// controller's run of a Maintenance, else "run <id> (pid P on HOST)"); empty when none.
	HeldBy        string      `json:"heldBy,omitempty"`
	Blocked       string      `json:"blockedReason,omitempty"`
	Unschedulable bool        `json:"unschedulable"`
	CordonedByUs  bool        `json:"cordonedByUs"`
	PodsLeft      int         `json:"podsLeft"`
	Pods          []PodStatus `json:"pods"`
}

// PodStatus is a pod left on a node, and what blocks it ("" when nothing does).
type PodStatus struct {
	Pod     string `json:"pod"`
	PDB     string `json:"pdb,omitempty"`
	Blocker string `json:"blockedBy,omitempty"`
}

// StatusRequest selects the nodes whose status is read: Names (only those; each must
// exist unless Selector is set) among the nodes Selector matches (every node when empty).
type StatusRequest struct {
	Names    []string
	Selector string
}

// Status reads the touched nodes once. A name that is no node is a usage error
// (drain.NodeNotFoundError), as for drain and uncordon.
func (o *Operator) Status(ctx context.Context, req StatusRequest) ([]NodeStatus, error) {
	list, err := o.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: req.Selector})
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	nodes := make([]*corev1.Node, len(list.Items))
	exists := map[string]bool{}
	for i := range list.Items {
		nodes[i] = &list.Items[i]
		exists[list.Items[i].Name] = true
	}
	if req.Selector == "" {
		for _, n := range req.Names {
			if !exists[n] {
				return nil, &drain.NodeNotFoundError{Name: n}
			}
		}
	}
	return o.collectStatus(ctx, req.Names, nodes)
}

// WatchStatus reads the touched nodes, then again at every change of a node (a watch,
// through an informer) and every interval (a pod leaving does not change the node), and
// passes each reading to seen, until ctx ends (nil) or seen returns an error. A reading
// that fails is logged and tried again at the next change.
func (o *Operator) WatchStatus(ctx context.Context, req StatusRequest, interval time.Duration, seen func([]NodeStatus) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	f := informers.NewSharedInformerFactoryWithOptions(o.Kube, 0, informers.WithTweakListOptions(func(lo *metav1.ListOptions) { lo.LabelSelector = req.Selector }))
	defer f.Shutdown()
	inf := f.Core().V1().Nodes().Informer()
	dirty := make(chan struct{}, 1)
	poke := func(any) {
		select {
		case dirty <- struct{}{}:
		default:
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: poke, UpdateFunc: func(_, n any) { poke(n) }, DeleteFunc: poke}); err != nil {
		return fmt.Errorf("watch nodes: %w", err)
	}
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return fmt.Errorf("watch nodes: %w", ctx.Err())
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		var nodes []*corev1.Node
		for _, obj := range inf.GetStore().List() {
			nodes = append(nodes, obj.(*corev1.Node))
		}
		st, err := o.collectStatus(ctx, req.Names, nodes)
		if err != nil && ctx.Err() == nil {
			o.logger().V(2).Info("status: could not look at the nodes; trying again", "err", err)
		}
		if err == nil {
			if err := seen(st); err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-dirty:
		case <-tick.C:
		}
	}
}

// heldBy names the live run recorded on a node ("" when none holds it).
func heldBy(rec noderecord.Record, now time.Time) string {
	if !noderecord.DefaultLiveness.Live(rec, now) {
		return ""
	}
	if _, ok := rec.Run.Maintenance(); ok {
		return rec.Run.Command
	}
	if rec.Run.Host != "" && rec.Run.PID > 0 {
		return fmt.Sprintf("run %s (pid %d on %s)", rec.Run.ID, rec.Run.PID, rec.Run.Host)
	}
	return "run " + rec.Run.ID
}

// collectStatus reads the touched nodes among nodes (only the named ones when names
// were given) and plans their pods left, read-only.
func (o *Operator) collectStatus(ctx context.Context, names []string, nodes []*corev1.Node) ([]NodeStatus, error) {
	named := map[string]bool{}
	for _, n := range names {
		named[n] = true
	}
	var out []NodeStatus
	var touched []string
	for _, n := range nodes {
		if (len(named) > 0 && !named[n.Name]) || !noderecord.Touched(n) {
			continue
		}
		s := noderecord.Read(n, nodepool.MoveAnnotation)
		ns := NodeStatus{Name: n.Name, State: s.State, Command: s.Command, User: s.User, Blocked: s.Blocked,
			Unschedulable: n.Spec.Unschedulable, CordonedByUs: s.CordonedByUs, Pods: []PodStatus{}}
		if !s.Since.IsZero() {
			ns.Since = &s.Since
		}
		ns.HeldBy = heldBy(s, o.now())
		out = append(out, ns)
		touched = append(touched, n.Name)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	if len(touched) == 0 {
		return out, nil
	}
	plans, err := o.planLeft(ctx, touched)
	if err != nil {
		return nil, err
	}
	for i := range out {
		np, ok := plans[out[i].Name]
		if !ok {
			continue
		}
		for _, s := range np.Steps {
			ps := PodStatus{Pod: s.Pod.Namespace + "/" + s.Pod.Name, PDB: pdb.JoinKeys(s.Decision.Budgets)}
			switch {
			case s.Wave == 0:
				ps.Blocker = s.Blocker
			case s.WaitsOn != "":
				ps.Blocker = fmt.Sprintf("waits for pdb %s to recover", s.WaitsOn)
			}
			out[i].Pods = append(out[i].Pods, ps)
		}
		out[i].PodsLeft = len(out[i].Pods)
	}
	return out, nil
}

// planLeft is the drain engine's plan for the nodes (nothing is changed), with the
// filters that let every pod a drain could evict be counted. A node gone meanwhile is
// left out.
func (o *Operator) planLeft(ctx context.Context, names []string) (map[string]event.NodePlan, error) {
	set := drain.DefaultSettings()
	set.Force, set.IgnoreDaemonSets, set.DeleteEmptyDirData = true, true, true
	set.WaitForVolumeDetach, set.Settle = false, 0 // what is left, not when it is drained
	eng, err := o.engine(Request{Drain: set}, make(chan event.Event), wiring{})
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	out := map[string]event.NodePlan{}
	p, err := eng.Plan(ctx, names)
	if err != nil && !drain.IsUsage(err) {
		return nil, fmt.Errorf("plan the pods left: %w", err)
	}
	if err != nil { // a node was deleted meanwhile: plan the others one by one
		for _, n := range names {
			if p, err := eng.Plan(ctx, []string{n}); err == nil {
				out[n] = p.Nodes[0]
			}
		}
		return out, nil
	}
	for _, n := range p.Nodes {
		out[n.Name] = n
	}
	return out, nil
}

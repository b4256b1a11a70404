package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

// StatusOptions is the "status" command: every node this tool has touched, from the
// cluster alone (the nodes' state label and annotations, and their cordon's owner).
type StatusOptions struct {
	*Common
	Names    []string
	Selector string
	Output   *OutputFlags
	// Watch follows changes until interrupted.
	Watch bool
	// Interval is how often a watch looks at the pods left (a pod leaving does not
	// change the node object).
	Interval time.Duration
	// Now is the clock for the SINCE column.
	Now func() time.Time
}

// StatusKind types a node's status when it is printed as an object (apiVersion
// PlanAPIVersion). No API server serves it.
const StatusKind = "NodeMaintenanceStatus"

// NewCmdStatus builds "kubectl maintenance status".
func NewCmdStatus(c *Common) *cobra.Command {
	o := &StatusOptions{Common: c, Output: NewOutputFlags(true), Interval: 2 * time.Second, Now: time.Now}
	cmd := &cobra.Command{
		Use:   "status [NODE...] [-l SELECTOR] [-o wide|json|yaml] [--watch]",
		Short: "Show every node this tool has touched: its state, since when, who started it, and the pods left",
		Long: `Show, from the cluster alone, every node kubectl maintenance has touched: those carrying
its state label (kubectl-maintenance.io/state) or annotations, or a cordon it made. For
each: the state (cordoned, draining, drained, blocked, or moving during a pool move),
since when, the command and the user that started it, and the pods left to evict with
what blocks each (the drain's own plan, computed read-only). --watch follows the nodes
(a watch, and a look at their pods every few seconds) until Ctrl-C: run it in a second
shell to follow a drain running elsewhere. The state is also a node label:
  kubectl get nodes -L kubectl-maintenance.io/state`,
		Example: `  kubectl maintenance status
  kubectl maintenance status -o wide
  kubectl maintenance status node-1 -o json
  kubectl maintenance status --watch`,
		ValidArgsFunction: completeNodes(c),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Names = args
			if err := validateListing(o.Output, o.Selector); err != nil {
				return err
			}
			cs, err := o.Client()
			if err != nil {
				return err
			}
			if o.Watch {
				return o.RunWatch(cmd.Context(), cs)
			}
			return o.Run(cmd.Context(), cs)
		},
	}
	cmd.Flags().StringVarP(&o.Selector, "selector", "l", o.Selector, "label selector of the nodes to look at")
	cmd.Flags().BoolVarP(&o.Watch, "watch", "w", o.Watch, "after the list, print a node again each time its state or its pods left change, until Ctrl-C")
	o.Output.AddFlags(cmd)
	return cmd
}

// nodeStatus is one node's status, as printed by -o json|yaml.
type nodeStatus struct {
	Name          string      `json:"-"`
	State         string      `json:"state"`
	Since         *time.Time  `json:"since,omitempty"`
	Command       string      `json:"command,omitempty"`
	User          string      `json:"user,omitempty"`
	Blocked       string      `json:"blockedReason,omitempty"`
	Unschedulable bool        `json:"unschedulable"`
	CordonedByUs  bool        `json:"cordonedByUs"`
	PodsLeft      int         `json:"podsLeft"`
	Pods          []podStatus `json:"pods"`
}

// podStatus is a pod left on a node, and what blocks it ("" when nothing does).
type podStatus struct {
	Pod     string `json:"pod"`
	PDB     string `json:"pdb,omitempty"`
	Blocker string `json:"blockedBy,omitempty"`
}

// Run prints the status of the touched nodes once.
func (o *StatusOptions) Run(ctx context.Context, cs kubernetes.Interface) error {
	list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: o.Selector})
	if err != nil {
		return fmt.Errorf("list nodes: %w", err)
	}
	nodes := make([]*corev1.Node, len(list.Items))
	exists := map[string]bool{}
	for i := range list.Items {
		nodes[i] = &list.Items[i]
		exists[list.Items[i].Name] = true
	}
	if o.Selector == "" { // a name that is no node is a typo, as for drain and uncordon
		for _, n := range o.Names {
			if !exists[n] {
				return WithExitCode(ExitUsage, &drain.NodeNotFoundError{Name: n})
			}
		}
	}
	st, err := o.collect(ctx, cs, nodes)
	if err != nil {
		return err
	}
	return o.print(st, o.Output.NoHeaders)
}

// collect reads the touched nodes among nodes (only the named ones when names were
// given) and plans their pods left, read-only.
func (o *StatusOptions) collect(ctx context.Context, cs kubernetes.Interface, nodes []*corev1.Node) ([]nodeStatus, error) {
	named := map[string]bool{}
	for _, n := range o.Names {
		named[n] = true
	}
	var out []nodeStatus
	var names []string
	for _, n := range nodes {
		if (len(named) > 0 && !named[n.Name]) || !noderecord.Touched(n) {
			continue
		}
		s := noderecord.Read(n, nodepool.MoveAnnotation)
		ns := nodeStatus{Name: n.Name, State: s.State, Command: s.Command, User: s.User, Blocked: s.Blocked,
			Unschedulable: n.Spec.Unschedulable, CordonedByUs: s.CordonedByUs, Pods: []podStatus{}}
		if !s.Since.IsZero() {
			ns.Since = &s.Since
		}
		out = append(out, ns)
		names = append(names, n.Name)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	if len(names) == 0 {
		return out, nil
	}
	plans, err := o.plan(ctx, cs, names)
	if err != nil {
		return nil, err
	}
	for i := range out {
		np, ok := plans[out[i].Name]
		if !ok {
			continue
		}
		for _, s := range np.Steps {
			ps := podStatus{Pod: s.Pod.Namespace + "/" + s.Pod.Name, PDB: pdb.JoinKeys(s.Decision.Budgets)}
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

// plan is the drain engine's plan for the nodes (nothing is changed), with the filters
// that let every pod a drain could evict be counted. A node gone meanwhile is left out.
func (o *StatusOptions) plan(ctx context.Context, cs kubernetes.Interface, names []string) (map[string]event.NodePlan, error) {
	eng, err := drain.NewEngine(drain.Config{Client: cs, Events: make(chan event.Event), Logger: klog.FromContext(ctx),
		Force: true, IgnoreDaemonSets: true, DeleteEmptyDirData: true, GracePeriodSeconds: -1})
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

// print writes the statuses: a table (wide adds the command, the cordon's owner and every
// blocker) or kubectl's object formats.
func (o *StatusOptions) print(st []nodeStatus, noHeaders bool) error {
	saved := o.Output.NoHeaders
	o.Output.NoHeaders = noHeaders
	defer func() { o.Output.NoHeaders = saved }()
	if o.Output.IsTable() {
		if len(st) == 0 && !noHeaders {
			fmt.Fprintln(o.ErrOut, "No nodes touched by kubectl maintenance.")
			return nil
		}
		return o.Output.Print(o.Out, o.table(st), nil)
	}
	objs := make([]runtime.Object, 0, len(st))
	for _, s := range st {
		u, err := s.object()
		if err != nil {
			return err
		}
		objs = append(objs, u)
	}
	if o.Watch {
		for _, u := range objs {
			if err := o.Output.Print(o.Out, nil, u); err != nil {
				return err
			}
		}
		return nil
	}
	return o.Output.Print(o.Out, nil, asList(objs, len(o.Names) == 1))
}

func (s nodeStatus) object() (*unstructured.Unstructured, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encode status of node %s: %w", s.Name, err)
	}
	var status map[string]any
	if err := json.Unmarshal(b, &status); err != nil {
		return nil, fmt.Errorf("encode status of node %s: %w", s.Name, err)
	}
	u := &unstructured.Unstructured{Object: map[string]any{"status": status}}
	u.SetAPIVersion(PlanAPIVersion)
	u.SetKind(StatusKind)
	u.SetName(s.Name)
	return u, nil
}

func (o *StatusOptions) table(st []nodeStatus) *metav1.Table {
	t := &metav1.Table{ColumnDefinitions: []metav1.TableColumnDefinition{
		column("Name", "string", 0), column("State", "string", 0), column("Since", "string", 0),
		column("User", "string", 0), column("Pods-Left", "integer", 0), column("Blocked-By", "string", 0),
		column("Cordoned-By-Us", "boolean", 1), column("Command", "string", 1),
	}}
	now := o.Now()
	for _, s := range st {
		since := "<unknown>"
		if s.Since != nil {
			since = age(metav1.NewTime(*s.Since), now)
		}
		t.Rows = append(t.Rows, metav1.TableRow{Cells: []any{s.Name, orNone(s.State), since, orNone(s.User),
			int64(s.PodsLeft), s.blockedBy(o.Output.Format == "wide"), s.CordonedByUs, orNone(s.Command)}})
	}
	return t
}

// blockedBy sums up what blocks the pods left: the distinct blockers (all with wide, the
// first and a count otherwise).
func (s nodeStatus) blockedBy(all bool) string {
	var seen []string
	for _, p := range s.Pods {
		if p.Blocker != "" && !contains(seen, p.Blocker) {
			seen = append(seen, p.Blocker)
		}
	}
	switch {
	case len(seen) == 0:
		return "<none>"
	case all || len(seen) == 1:
		return strings.Join(seen, "; ")
	}
	return fmt.Sprintf("%s (and %d more)", seen[0], len(seen)-1)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// RunWatch prints the touched nodes, then each node again when its state or its pods
// left change (a node no longer touched is printed once with state <none>), until ctx
// ends. It watches the nodes through an informer, and looks at their pods every Interval.
func (o *StatusOptions) RunWatch(ctx context.Context, cs kubernetes.Interface) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithTweakListOptions(func(lo *metav1.ListOptions) { lo.LabelSelector = o.Selector }))
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
	tick := time.NewTicker(o.Interval)
	defer tick.Stop()
	last := map[string]string{}
	looked, headerDone := false, false
	for {
		var nodes []*corev1.Node
		for _, obj := range inf.GetStore().List() {
			nodes = append(nodes, obj.(*corev1.Node))
		}
		st, err := o.collect(ctx, cs, nodes)
		if err != nil && ctx.Err() == nil {
			klog.FromContext(ctx).V(2).Info("status: could not look at the nodes; trying again", "err", err)
		}
		if err == nil {
			changed := o.changes(st, last)
			if len(changed) > 0 || !looked {
				// A watch's later rows come without the header, as kubectl get -w prints them.
				if err := o.print(changed, o.Output.NoHeaders || headerDone); err != nil {
					return err
				}
				looked, headerDone = true, headerDone || len(changed) > 0
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

// changes returns the statuses that differ from last (and updates last); a node that
// left is returned with state "<none>".
func (o *StatusOptions) changes(st []nodeStatus, last map[string]string) []nodeStatus {
	var out []nodeStatus
	now := map[string]bool{}
	for _, s := range st {
		now[s.Name] = true
		b, _ := json.Marshal(s)
		if key := string(b); last[s.Name] != key {
			last[s.Name] = key
			out = append(out, s)
		}
	}
	for name := range last {
		if !now[name] {
			delete(last, name)
			out = append(out, nodeStatus{Name: name, Pods: []podStatus{}})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

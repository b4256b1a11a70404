package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/operation"
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
			names, err := operation.NodeArgs(args) // NAME, node/NAME, nodes/NAME, as kubectl
			if err != nil {
				return err
			}
			o.Names = names
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

// Run prints the status of the touched nodes once (the operations layer's read model).
func (o *StatusOptions) Run(ctx context.Context, cs kubernetes.Interface) error {
	st, err := o.operator(ctx, cs).Status(ctx, operation.StatusRequest{Names: o.Names, Selector: o.Selector})
	if err != nil {
		if drain.IsUsage(err) {
			return WithExitCode(ExitUsage, err)
		}
		return err
	}
	return o.print(st, o.Output.NoHeaders)
}

func (o *StatusOptions) operator(ctx context.Context, cs kubernetes.Interface) *operation.Operator {
	return &operation.Operator{Kube: cs, Logger: klog.FromContext(ctx)}
}

// print writes the statuses: a table (wide adds the command, the cordon's owner and every
// blocker) or kubectl's object formats.
func (o *StatusOptions) print(st []operation.NodeStatus, noHeaders bool) error {
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
		if o.Output.Format == "name" { // node/NAME, as plan -o name: input to every command
			objs = append(objs, nodeObject(s.Name))
			continue
		}
		u, err := statusObject(s)
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

func statusObject(s operation.NodeStatus) (*unstructured.Unstructured, error) {
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

func (o *StatusOptions) table(st []operation.NodeStatus) *metav1.Table {
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
			int64(s.PodsLeft), blockedBy(s, o.Output.Format == "wide"), s.CordonedByUs, orNone(s.Command)}})
	}
	return t
}

// blockedBy sums up what blocks the pods left: the distinct blockers (all with wide, the
// first and a count otherwise).
func blockedBy(s operation.NodeStatus, all bool) string {
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
// ends: a printer over the operations layer's WatchStatus.
func (o *StatusOptions) RunWatch(ctx context.Context, cs kubernetes.Interface) error {
	last := map[string]string{}
	looked, headerDone := false, false
	return o.operator(ctx, cs).WatchStatus(ctx, operation.StatusRequest{Names: o.Names, Selector: o.Selector}, o.Interval, func(st []operation.NodeStatus) error {
		changed := o.changes(st, last)
		if len(changed) == 0 && looked {
			return nil
		}
		// A watch's later rows come without the header, as kubectl get -w prints them.
		if err := o.print(changed, o.Output.NoHeaders || headerDone); err != nil {
			return err
		}
		looked, headerDone = true, headerDone || len(changed) > 0
		return nil
	})
}

// changes returns the statuses that differ from last (and updates last); a node that
// left is returned with state "<none>".
func (o *StatusOptions) changes(st []operation.NodeStatus, last map[string]string) []operation.NodeStatus {
	var out []operation.NodeStatus
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
			out = append(out, operation.NodeStatus{Name: name, Pods: []operation.PodStatus{}})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

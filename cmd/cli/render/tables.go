package render

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/kubectl-maintenance/kubectl-maintenance/dashboard/source"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/operation"
)

// The kinds of what the commands print as objects (-o json|yaml|jsonpath|custom-columns|
// go-template), in APIVersion. No API server serves them.
const (
	APIVersion = "maintenance.kubectl-maintenance.io/v1alpha1"
	// PlanKind is a drain's plan (plan -o json).
	PlanKind = "DrainPlan"
	// StatusKind is a node's status (status -o json).
	StatusKind = "NodeMaintenanceStatus"
)

// column is a table column: priority 1 shows only with -o wide.
func column(name, typ string, priority int32) metav1.TableColumnDefinition {
	c := metav1.TableColumnDefinition{Name: name, Type: typ, Priority: priority}
	if name == "Name" {
		c.Format = "name"
	}
	return c
}

// Age is how long ago t was, as kubectl prints ages ("<unknown>" for no time).
func Age(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

func or(s, none string) string {
	if s == "" {
		return none
	}
	return s
}

// NodesTable is the nodes as kubectl get prints a table: NAME STATUS POOLS PODS AGE, and
// with -o wide VERSION INTERNAL-IP OS-IMAGE CONTAINER-RUNTIME; pods counts each node's pods.
func NodesTable(nodes []corev1.Node, pods map[string]int, now time.Time) *metav1.Table {
	t := &metav1.Table{ColumnDefinitions: []metav1.TableColumnDefinition{
		column("Name", "string", 0), column("Status", "string", 0), column("Pools", "string", 0),
		column("Pods", "integer", 0), column("Age", "string", 0),
		column("Version", "string", 1), column("Internal-IP", "string", 1), column("OS-Image", "string", 1),
		column("Container-Runtime", "string", 1),
	}}
	for i := range nodes {
		n := &nodes[i]
		ip := "<none>"
		for _, a := range n.Status.Addresses {
			if a.Type == corev1.NodeInternalIP {
				ip = a.Address
			}
		}
		info := n.Status.NodeInfo
		t.Rows = append(t.Rows, metav1.TableRow{Cells: []any{n.Name, source.NodeStatus(n), or(strings.Join(nodepool.PoolsOf(n), ","), "<none>"),
			int64(pods[n.Name]), Age(n.CreationTimestamp, now), info.KubeletVersion, ip, or(info.OSImage, "<unknown>"), or(info.ContainerRuntimeVersion, "<unknown>")},
			Object: runtime.RawExtension{Object: n}})
	}
	return t
}

// PoolsTable is NAME NODES MAINTENANCE TAINTS HANDLER AGE, and LABELS with -o wide.
// MAINTENANCE is "nodes cordoned / maxUnavailable" among nodes.
func PoolsTable(pools []v1alpha1.NodePool, nodes []corev1.Node, now time.Time) *metav1.Table {
	t := &metav1.Table{ColumnDefinitions: []metav1.TableColumnDefinition{
		column("Name", "string", 0), column("Nodes", "integer", 0), column("Maintenance", "string", 0),
		column("Taints", "string", 0), column("Handler", "string", 0), column("Age", "string", 0),
		column("Labels", "string", 1),
	}}
	for i := range pools {
		p := &pools[i]
		members, maint := 0, 0
		for j := range nodes {
			if _, ok := nodes[j].Labels[nodepool.RoleLabel(p.Name)]; ok {
				members++
				if nodes[j].Spec.Unschedulable {
					maint++
				}
			}
		}
		var taints, labels []string
		for _, tn := range p.Spec.Taints {
			taints = append(taints, fmt.Sprintf("%s=%s:%s", tn.Key, tn.Value, tn.Effect))
		}
		for k, v := range p.Spec.Labels {
			labels = append(labels, fmt.Sprintf("%s=%s", k, v))
		}
		sort.Strings(labels)
		handler := "<none>"
		if p.Spec.RuntimeClass != nil {
			handler = p.Spec.RuntimeClass.Handler
		}
		t.Rows = append(t.Rows, metav1.TableRow{Cells: []any{p.Name, int64(members), fmt.Sprintf("%d/%d", maint, p.MaxUnavailableOrDefault()),
			or(strings.Join(taints, ","), "<none>"), handler, Age(p.CreationTimestamp, now), or(strings.Join(labels, ","), "<none>")},
			Object: runtime.RawExtension{Object: p}})
	}
	return t
}

// StatusTable is the status read model as a table: NAME STATE SINCE USER HELD-BY
// PODS-LEFT BLOCKED-BY, and CORDONED-BY-US and COMMAND with wide (which also lists every
// blocker).
func StatusTable(st []operation.NodeStatus, wide bool, now time.Time) *metav1.Table {
	t := &metav1.Table{ColumnDefinitions: []metav1.TableColumnDefinition{
		column("Name", "string", 0), column("State", "string", 0), column("Since", "string", 0),
		column("User", "string", 0), column("Held-By", "string", 0), column("Pods-Left", "integer", 0), column("Blocked-By", "string", 0),
		column("Cordoned-By-Us", "boolean", 1), column("Command", "string", 1),
	}}
	for _, s := range st {
		since := "<unknown>"
		if s.Since != nil {
			since = Age(metav1.NewTime(*s.Since), now)
		}
		t.Rows = append(t.Rows, metav1.TableRow{Cells: []any{s.Name, or(s.State, "<none>"), since, or(s.User, "<none>"),
			or(s.HeldBy, "<none>"), int64(s.PodsLeft), blockedBy(s, wide), s.CordonedByUs, or(s.Command, "<none>")}})
	}
	return t
}

// blockedBy sums up what blocks the pods left: the distinct blockers (all with wide, the
// first and a count otherwise).
func blockedBy(s operation.NodeStatus, all bool) string {
	var seen []string
	for _, p := range s.Pods {
		if p.Blocker != "" && !slices.Contains(seen, p.Blocker) {
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

// StatusChanges returns the statuses that differ from last (and updates last, by node:
// the status's JSON); a node that left is returned with no state, as status --watch
// prints it again.
func StatusChanges(st []operation.NodeStatus, last map[string]string) []operation.NodeStatus {
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

// StatusObject is a node's status as a StatusKind object (its fields under status).
func StatusObject(s operation.NodeStatus) (*unstructured.Unstructured, error) {
	u, err := object(s, "status", StatusKind)
	if err != nil {
		return nil, fmt.Errorf("encode status of node %s: %w", s.Name, err)
	}
	u.SetName(s.Name)
	return u, nil
}

// PlanObject is a drain's plan as a PlanKind object, with the fields of its JSON form.
func PlanObject(plan *event.Plan) (*unstructured.Unstructured, error) {
	u, err := object(ToPlanJSON(plan), "", PlanKind)
	if err != nil {
		return nil, fmt.Errorf("encode plan: %w", err)
	}
	return u, nil
}

// object is v's JSON as an object of kind: its fields at the top, or under field.
func object(v any, field, kind string) (*unstructured.Unstructured, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var fields map[string]any
	if err := json.Unmarshal(b, &fields); err != nil {
		return nil, err
	}
	if field != "" {
		fields = map[string]any{field: fields}
	}
	u := &unstructured.Unstructured{Object: fields}
	u.SetAPIVersion(APIVersion)
	u.SetKind(kind)
	return u, nil
}

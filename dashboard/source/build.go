package source

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui/data"

	"github.com/kubectl-maintenance/kubectl-maintenance/predicate"
)

// Build computes the dashboard's read model. NEVER modify the objects: they belong to informer stores.
func Build(nodes []*corev1.Node, pods []*corev1.Pod, pdbs []*policyv1.PodDisruptionBudget, pools []*v1alpha1.NodePool, now time.Time) data.Snapshot {
	ix := pdb.NewIndex(pdbs)
	type counts struct {
		pods, evictable, blocked int
		blocker                  string
	}
	per := make(map[string]*counts, len(nodes))
	covered := map[string][]string{} // budget key -> "ns/pod on node" of the pods it covers
	var waiting []data.PodRow
	for _, p := range pods {
		if p.Spec.NodeName == "" || !Running(p) {
			continue
		}
		c := per[p.Spec.NodeName]
		if c == nil {
			c = &counts{}
			per[p.Spec.NodeName] = c
		}
		c.pods++ // PODS counts what the nodes command counts: every pod not finished
		if !drainable(p) {
			continue
		}
		d := pdb.Decide(p, ix.For(p))
		key := p.Namespace + "/" + p.Name
		for _, b := range d.Budgets {
			covered[b.Key()] = append(covered[b.Key()], key+" on "+p.Spec.NodeName)
		}
		switch {
		case d.Goes():
			c.evictable++
			continue
		case d.Blocks():
			c.blocked++
			if c.blocker == "" {
				c.blocker = pdb.JoinKeys(d.Budgets)
			}
		}
		row := data.PodRow{Key: key, Node: p.Spec.NodeName, Never: d.Blocks(), Reason: d.Reason}
		for _, b := range d.Budgets {
			row.Budgets = append(row.Budgets, b.Key())
		}
		waiting = append(waiting, row)
	}
	var s data.Snapshot
	sort.Slice(waiting, func(i, j int) bool {
		if waiting[i].Node != waiting[j].Node {
			return waiting[i].Node < waiting[j].Node
		}
		return waiting[i].Key < waiting[j].Key
	})
	s.Pods = waiting
	s.Nodes = make([]data.NodeRow, 0, len(nodes))
	for _, n := range nodes {
		c := per[n.Name]
		if c == nil {
			c = &counts{}
		}
		s.Nodes = append(s.Nodes, data.NodeRow{Name: n.Name, Status: NodeStatus(n), Unschedulable: n.Spec.Unschedulable,
			Pools: nodepool.PoolsOf(n), Pods: c.pods, Evictable: c.evictable, Blocked: c.blocked, Blocker: c.blocker,
			Version: n.Status.NodeInfo.KubeletVersion, Age: age(n.CreationTimestamp, now)})
	}
	sort.Slice(s.Nodes, func(i, j int) bool { return s.Nodes[i].Name < s.Nodes[j].Name })
	for _, p := range pools {
		row := data.PoolRow{Name: p.Name, MaxUnavailable: p.MaxUnavailableOrDefault(), Handler: "<none>"}
		if p.Spec.RuntimeClass != nil {
			row.Handler = p.Spec.RuntimeClass.Handler
		}
		var ts []string
		for _, t := range p.Spec.Taints {
			ts = append(ts, fmt.Sprintf("%s=%s:%s", t.Key, t.Value, t.Effect))
		}
		row.Taints = strings.Join(ts, ",")
		for _, n := range nodes {
			if _, ok := n.Labels[nodepool.RoleLabel(p.Name)]; ok {
				row.Nodes++
				if n.Spec.Unschedulable {
					row.InMaintenance++
				}
			}
		}
		s.Pools = append(s.Pools, row)
		s.PoolNames = append(s.PoolNames, p.Name)
	}
	sort.Slice(s.Pools, func(i, j int) bool { return s.Pools[i].Name < s.Pools[j].Name })
	sort.Strings(s.PoolNames)
	for _, b := range ix.All() {
		st := b.PDB.Status
		never, why := b.NeverAllows()
		row := data.PDBRow{Key: b.Key(), MinAvailable: "N/A", MaxUnavailable: "N/A", Allowed: st.DisruptionsAllowed,
			Current: st.CurrentHealthy, Desired: st.DesiredHealthy, Expected: st.ExpectedPods, Stale: b.Stale(), Never: never,
			NeverWhy: why, Pods: covered[b.Key()]}
		sort.Strings(row.Pods)
		if v := b.PDB.Spec.MinAvailable; v != nil {
			row.MinAvailable = v.String()
		}
		if v := b.PDB.Spec.MaxUnavailable; v != nil {
			row.MaxUnavailable = v.String()
		}
		s.PDBs = append(s.PDBs, row)
	}
	return s
}

// Running reports whether a pod counts in a node's PODS column (the dashboard and the
// nodes command alike): every pod that has not finished, DaemonSet and mirror pods too,
// as kubectl describe node's "Non-terminated Pods" counts them.
func Running(p *corev1.Pod) bool {
	return p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
}

// drainable mirrors kubectl's filters: DaemonSet, mirror and finished pods are not drained.
func drainable(p *corev1.Pod) bool {
	if !Running(p) {
		return false
	}
	return !predicate.MirrorOrDaemonSetPod(p)
}

// NodeStatus renders a node's status the way kubectl get nodes does ("Ready",
// "Ready,SchedulingDisabled", "NotReady", "Unknown").
func NodeStatus(n *corev1.Node) string {
	s := "Unknown"
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			switch c.Status {
			case corev1.ConditionTrue:
				s = "Ready"
			case corev1.ConditionFalse:
				s = "NotReady"
			}
		}
	}
	if n.Spec.Unschedulable {
		s += ",SchedulingDisabled"
	}
	return s
}

func age(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

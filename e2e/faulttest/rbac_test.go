package faulttest

import (
	"fmt"
	"maps"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

// maintainerRules is every permission the plugin's drain, cordon and uncordon use.
func maintainerRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list", "watch", "patch", "update"}},
		{APIGroups: []string{""}, Resources: []string{"nodes/status"}, Verbs: []string{"patch"}},
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{""}, Resources: []string{"pods/eviction"}, Verbs: []string{"create"}},
		{APIGroups: []string{"policy"}, Resources: []string{"poddisruptionbudgets"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"storage.k8s.io"}, Resources: []string{"volumeattachments"}, Verbs: []string{"list", "watch"}},
		{APIGroups: []string{""}, Resources: []string{"persistentvolumeclaims"}, Verbs: []string{"get"}},
		{APIGroups: []string{"apps"}, Resources: []string{"daemonsets", "replicasets", "statefulsets"}, Verbs: []string{"get", "list"}},
		{APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch", "update"}},
		{APIGroups: []string{"maintenance.kubectl-maintenance.io"}, Resources: []string{"nodepools"}, Verbs: []string{"get", "list", "watch"}},
	}
}

// without returns rules minus the verbs of resource (in every group).
func without(rules []rbacv1.PolicyRule, resource string, verbs ...string) []rbacv1.PolicyRule {
	drop := map[string]bool{}
	for _, v := range verbs {
		drop[v] = true
	}
	var out []rbacv1.PolicyRule
	for _, r := range rules {
		if len(r.Resources) != 1 || r.Resources[0] != resource {
			out = append(out, r)
			continue
		}
		var keep []string
		for _, v := range r.Verbs {
			if !drop[v] {
				keep = append(keep, v)
			}
		}
		if len(keep) > 0 {
			r.Verbs = keep
			out = append(out, r)
		}
	}
	return out
}

// userKubeconfig is fixture's Env.User: a ServiceAccount bound (cluster-wide) to rules,
// as a kubeconfig path and the user name.
func userKubeconfig(t *testing.T, e *fixture.Env, name string, rules []rbacv1.PolicyRule) (string, string) {
	t.Helper()
	u := e.User(t, name, rules)
	return u.Kubeconfig, u.Name
}

// Issue 10, test 5: a user without one permission gets one line naming it before anything
// changes, a non-zero exit, and the node stays as it was.
func TestUserWithoutAPermissionChangesNothing(t *testing.T) {
	t.Parallel()
	e := fixture.NewEnv(t, shared, plugin, "a", "b")
	e.AddNodes(0)
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", 2, e.Here(fixture.PodOptions{})); err != nil {
		t.Fatal(err)
	}
	before := e.Ready("web", 2)
	e.AddNodes(1) // room for the replacements of the one drain that is allowed
	e.Guard()
	node := e.Node(e.Nodes[0])

	noEvict, noEvictUser := userKubeconfig(t, e, "no-evict", without(maintainerRules(), "pods/eviction", "create"))
	noPatch, noPatchUser := userKubeconfig(t, e, "no-patch", without(maintainerRules(), "nodes", "patch", "update"))
	noPools, noPoolsUser := userKubeconfig(t, e, "no-pools", without(maintainerRules(), "nodepools", "get", "list", "watch"))
	noVolumes, noVolumesUser := userKubeconfig(t, e, "no-volumes", without(maintainerRules(), "volumeattachments", "list", "watch"))
	maintainer, maintainerUser := userKubeconfig(t, e, "maintainer", maintainerRules()) // may not update poddisruptionbudgets/status
	tests := []struct {
		name       string
		kubeconfig string
		args       []string
		want       string
	}{
		{"drain without create pods/eviction", noEvict, []string{"drain", e.Nodes[0]},
			fmt.Sprintf(`error: cannot create pods/eviction in namespace %q (user %q)`, e.NS, noEvictUser)},
		{"server dry-run drain without create pods/eviction", noEvict, []string{"drain", e.Nodes[0], "--dry-run=server"},
			fmt.Sprintf(`error: cannot create pods/eviction in namespace %q (user %q)`, e.NS, noEvictUser)},
		{"drain without patch nodes", noPatch, []string{"drain", e.Nodes[0], "-o", "json"},
			fmt.Sprintf(`error: cannot patch nodes (user %q)`, noPatchUser)},
		{"cordon without patch nodes", noPatch, []string{"cordon", e.Nodes[0]},
			fmt.Sprintf(`error: cannot patch nodes (user %q)`, noPatchUser)},
		{"uncordon without patch nodes", noPatch, []string{"uncordon", e.Nodes[0]},
			fmt.Sprintf(`error: cannot patch nodes (user %q)`, noPatchUser)},
		{"drain without list volumeattachments (the volume wait, on by default)", noVolumes, []string{"drain", e.Nodes[0]},
			fmt.Sprintf(`error: cannot list volumeattachments.storage.k8s.io (user %q)`, noVolumesUser)},
		{"drain --clear-disruption-holds without update poddisruptionbudgets/status", maintainer, []string{"drain", e.Nodes[0], "--clear-disruption-holds"},
			fmt.Sprintf(`error: cannot update poddisruptionbudgets.policy/status in namespace %q (user %q)`, e.NS, maintainerUser)},
		{"pool move without get nodepools", noPools, []string{"pool", "move", e.Nodes[0], "--to", "blue"},
			fmt.Sprintf(`error: cannot get nodepools.maintenance.kubectl-maintenance.io (user %q)`, noPoolsUser)},
		{"pool move without create pods/eviction", noEvict, []string{"pool", "move", e.Nodes[0], "--to", "blue"},
			fmt.Sprintf(`error: cannot create pods/eviction in namespace %q (user %q)`, e.NS, noEvictUser)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := run(t, e.Ctx, tc.kubeconfig, tc.args...)
			if res.Code != 1 {
				t.Errorf("exit %d, want 1", res.Code)
			}
			if got := strings.TrimRight(res.Stderr, "\n"); got != tc.want {
				t.Errorf("stderr:\n%s\nwant the one line:\n%s", got, tc.want)
			}
			if res.Stdout != "" {
				t.Errorf("something was printed before the error:\n%s", res.Stdout)
			}
			if n := e.Node(e.Nodes[0]); n.Spec.Unschedulable || !maps.Equal(fixture.WithoutSystemKeys(n.Annotations), fixture.WithoutSystemKeys(node.Annotations)) || !maps.Equal(fixture.WithoutSystemKeys(n.Labels), fixture.WithoutSystemKeys(node.Labels)) {
				t.Errorf("node %s changed: unschedulable=%v annotations=%v labels=%v", n.Name, n.Spec.Unschedulable, n.Annotations, n.Labels)
			}
		})
	}
	after := e.Ready("web", 2)
	for i := range before {
		found := false
		for _, p := range after {
			found = found || p.UID == before[i].UID
		}
		if !found {
			t.Errorf("pod %s is gone after the refused commands", before[i].Name)
		}
	}

	// Events are best effort: a user who may do everything else drains.
	t.Run("drain without create events", func(t *testing.T) {
		noEvents, _ := userKubeconfig(t, e, "no-events", without(maintainerRules(), "events", "create", "patch", "update"))
		res := run(t, e.Ctx, noEvents, "drain", e.Nodes[0])
		if res.Code != 0 {
			t.Errorf("drain by a user who may not create Events: exit %d, want 0", res.Code)
		}
		if n := strings.Count(res.Stderr, "cannot record Events on the nodes"); n != 1 {
			t.Errorf("drain by a user who may not create Events: %d warnings about it, want 1:\n%s", n, res.Stderr)
		}
		if left := appPodsOn(e, "web", e.Nodes[0]); len(left) > 0 {
			t.Errorf("node %s still runs %v", e.Nodes[0], left)
		}
	})
}

// Issue 22, test 7: the Node conditions (KEP-5683) are best effort too: a user who may
// not patch nodes/status gets one warning, the drain finishes and leaves no condition;
// the same drain by a user who may sets Drained, and an uncordon clears it.
func TestNodeConditionsWithAndWithoutNodesStatus(t *testing.T) {
	t.Parallel()
	e := fixture.NewEnv(t, shared, plugin, "a", "b", "c")
	e.AddNodes(0, 1)
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", 4, e.Here(fixture.PodOptions{})); err != nil {
		t.Fatal(err)
	}
	e.Ready("web", 4)
	e.PDB("web", fixture.PDBSpec{App: "web", MaxUnavailable: fixture.Int(1)}, 1)
	e.AddNodes(2)
	e.Guard()
	conds := func(node string) map[corev1.NodeConditionType]corev1.NodeCondition {
		out := map[corev1.NodeConditionType]corev1.NodeCondition{}
		for _, c := range e.Node(node).Status.Conditions {
			switch c.Type {
			case "DrainInProgress", "Drained", "MaintenanceInProgress":
				out[c.Type] = c
			}
		}
		return out
	}

	noStatus, _ := userKubeconfig(t, e, "no-status", without(maintainerRules(), "nodes/status", "patch"))
	res := run(t, e.Ctx, noStatus, "drain", e.Nodes[0], "--ignore-daemonsets", "--timeout", "2m")
	if res.Code != 0 {
		t.Errorf("drain by a user who may not patch nodes/status: exit %d, want 0", res.Code)
	}
	if n := strings.Count(res.Stderr, "cannot patch nodes/status"); n != 1 {
		t.Errorf("%d warnings about nodes/status, want 1:\n%s", n, res.Stderr)
	}
	if left := appPodsOn(e, "web", e.Nodes[0]); len(left) > 0 {
		t.Errorf("node %s still runs %v", e.Nodes[0], left)
	}
	if c := conds(e.Nodes[0]); len(c) != 0 {
		t.Errorf("node %s has conditions %v written without the permission", e.Nodes[0], c)
	}

	maintainer, _ := userKubeconfig(t, e, "maintainer", maintainerRules())
	res = run(t, e.Ctx, maintainer, "drain", e.Nodes[1], "--ignore-daemonsets", "--timeout", "2m")
	if res.Code != 0 || strings.Contains(res.Stderr, "nodes/status") {
		t.Errorf("drain by a maintainer: exit %d, stderr:\n%s", res.Code, res.Stderr)
	}
	c := conds(e.Nodes[1])
	if c["Drained"].Status != corev1.ConditionTrue || c["DrainInProgress"].Status != corev1.ConditionFalse ||
		!strings.Contains(c["Drained"].Message, "drain "+e.Nodes[1]) {
		t.Errorf("node %s after its drain: conditions %+v; want Drained True naming the command, DrainInProgress False", e.Nodes[1], c)
	}
	if ready := e.Node(e.Nodes[1]).Status.Conditions; len(ready) == 0 {
		t.Errorf("node %s lost its other conditions", e.Nodes[1])
	}
	res = run(t, e.Ctx, maintainer, "uncordon", e.Nodes[1])
	if res.Code != 0 {
		t.Errorf("uncordon: exit %d:\n%s", res.Code, res.Stderr)
	}
	c = conds(e.Nodes[1])
	if c["Drained"].Status != corev1.ConditionFalse || c["Drained"].Reason != "Uncordoned" {
		t.Errorf("node %s after uncordon: conditions %+v; want Drained False (Uncordoned)", e.Nodes[1], c)
	}
}

// --surge scales Deployments: a user who may read them but not patch them gets one line
// naming the permission once the plan knows which Deployment it would scale, before
// anything is printed or changed (no cordon, no surge).
func TestSurgeWithoutPatchDeploymentsChangesNothing(t *testing.T) {
	t.Parallel()
	e := fixture.NewEnv(t, shared, plugin, "a", "b")
	e.AddNodes(0)
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "solo", 1, e.Here(fixture.PodOptions{})); err != nil {
		t.Fatal(err)
	}
	before := e.Ready("solo", 1)
	e.PDB("solo", fixture.PDBSpec{App: "solo", MinAvailable: fixture.Int(1)}, 0) // never allows one
	e.AddNodes(1)
	e.Guard()
	node := e.Node(e.Nodes[0])
	rules := append(maintainerRules(),
		rbacv1.PolicyRule{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"get", "list"}},
		rbacv1.PolicyRule{APIGroups: []string{"autoscaling"}, Resources: []string{"horizontalpodautoscalers"}, Verbs: []string{"list"}})
	kubeconfig, user := userKubeconfig(t, e, "no-scale", rules)

	res := run(t, e.Ctx, kubeconfig, "drain", e.Nodes[0], "--surge")
	want := fmt.Sprintf(`error: cannot patch deployments.apps in namespace %q (user %q)`, e.NS, user)
	if res.Code != 1 {
		t.Errorf("exit %d, want 1", res.Code)
	}
	if got := strings.TrimRight(res.Stderr, "\n"); got != want {
		t.Errorf("stderr:\n%s\nwant the one line:\n%s", got, want)
	}
	if res.Stdout != "" {
		t.Errorf("something was printed before the error:\n%s", res.Stdout)
	}
	if n := e.Node(e.Nodes[0]); n.Spec.Unschedulable || !maps.Equal(fixture.WithoutSystemKeys(n.Annotations), fixture.WithoutSystemKeys(node.Annotations)) {
		t.Errorf("node %s changed: unschedulable=%v annotations=%v", n.Name, n.Spec.Unschedulable, n.Annotations)
	}
	d, err := e.C.AppsV1().Deployments(e.NS).Get(e.Ctx, "solo", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *d.Spec.Replicas != 1 {
		t.Errorf("deployment solo scaled to %d", *d.Spec.Replicas)
	}
	if after := e.Ready("solo", 1); after[0].UID != before[0].UID {
		t.Errorf("pod %s is gone after the refused drain", before[0].Name)
	}
}

package pooltest

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
	"github.com/kubectl-maintenance/kubectl-maintenance/operation"
)

// Issue 32, test 3: a rollout enters by the one door every action takes. A user who may
// do everything a rollout does but evict is refused before any change (no node cordoned,
// no pod moved); run by one who may, the rolled nodes record the command and carry
// MaintenanceInProgress while they roll.
func TestRolloutGoesThroughPreflightOriginAndConditions(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a", "b", "s")
	blue := e.NS + "-blue"
	applyPool(e, poolSpecYAML(blue, blue, 1))
	poolNodes(e, blue, 0, 1)
	applyPool(e, poolSpecYAML(blue, blue, 1))
	o := fixture.PodOptions{ReadyDelay: time.Second, NodeSelector: map[string]string{"test": e.NS}, Tolerations: tolerateAll}
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", 2, o); err != nil {
		t.Fatal(err)
	}
	before := e.Ready("web", 2)
	e.PDB("web", fixture.PDBSpec{App: "web", MaxUnavailable: fixture.Int(1)}, 1)
	e.AddNodes(2) // a spare outside the pool takes the replacements
	e.Guard()
	if r := applyPool(e, poolSpecYAML(blue, blue, 1, "example.com/isolated=yes:NoExecute")); r.Code != 3 {
		t.Fatalf("pool apply with a NoExecute taint over intolerant pods: exit %d, want 3 (held back)", r.Code)
	}

	// Everything a rollout needs but create pods/eviction.
	noEvict := e.User(t, "noevict", []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list", "watch", "patch"}},
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"policy"}, Resources: []string{"poddisruptionbudgets"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"storage.k8s.io"}, Resources: []string{"volumeattachments"}, Verbs: []string{"list", "watch"}},
		{APIGroups: []string{""}, Resources: []string{"persistentvolumeclaims"}, Verbs: []string{"get"}},
		{APIGroups: []string{"maintenance.kubectl-maintenance.io"}, Resources: []string{"nodepools", "nodepools/status"}, Verbs: []string{"get", "list", "watch", "update", "patch"}},
	})
	cordoned := unschedulablePeak(e, e.Nodes[:2])
	r := e.Run("--kubeconfig", noEvict.Kubeconfig, "pool", "sync", blue, "--rollout", "--ignore-daemonsets", "--timeout", "1m")
	if peak := cordoned(); peak != 0 {
		t.Errorf("the refused rollout cordoned %d node(s)", peak)
	}
	if r.Code != 1 {
		t.Errorf("rollout without pods/eviction: exit %d, want 1 (RBAC)\n%s", r.Code, r.Stderr)
	}
	fixture.MustContain(t, "stderr", r.Stderr, "cannot create pods/eviction")
	same := map[string]bool{}
	for _, p := range e.Ready("web", 2) {
		same[string(p.UID)] = true
	}
	for _, p := range before {
		if !same[string(p.UID)] {
			t.Errorf("pod %s replaced by the refused rollout", p.Name)
		}
	}

	inProgress := peakOf(e, e.Nodes[:2], func(n *corev1.Node) bool {
		for _, c := range n.Status.Conditions {
			if c.Type == operation.ConditionMaintenanceInProgress && c.Status == corev1.ConditionTrue {
				return true
			}
		}
		return false
	})
	recorded := peakOf(e, e.Nodes[:2], func(n *corev1.Node) bool {
		return strings.Contains(n.Annotations[noderecord.AnnotationCommand], "pool sync "+blue+" --rollout")
	})
	r = e.Run("pool", "sync", blue, "--rollout", "--ignore-daemonsets", "--timeout", "3m")
	sawCondition, sawCommand := inProgress(), recorded()
	if r.Code != 0 {
		t.Fatalf("pool sync --rollout: exit %d\n%s", r.Code, r.Stderr)
	}
	if sawCondition == 0 {
		t.Error("no rolled node carried MaintenanceInProgress=True while it rolled")
	}
	if sawCommand == 0 {
		t.Error("no rolled node recorded the rollout's command")
	}
	for _, name := range e.Nodes[:2] {
		for _, c := range e.Node(name).Status.Conditions {
			if c.Type == operation.ConditionMaintenanceInProgress && c.Status != corev1.ConditionFalse {
				t.Errorf("node %s: MaintenanceInProgress %s after the rollout, want False", name, c.Status)
			}
		}
	}
}

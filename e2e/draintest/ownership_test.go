package draintest

import (
	"context"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// Issue 21, test 4: --surge --on-blocked=skip over nodes where one pod cannot be surged
// (a one-replica Deployment under maxUnavailable: 0). The run is not refused: the other
// node drains, the one with that pod is given up with the reason (it cannot be surged),
// and the run ends 3.
func TestSurgeRefusalFollowsOnBlockedSkip(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a", "b", "spare")
	e.AddNodes(0)
	oneReplica(t, e, "strict", time.Second, fixture.PDBSpec{MaxUnavailable: fixture.Int(0)})
	e.AddNodes(1)
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", 2, fixture.PodOptions{NodeSelector: map[string]string{"kubernetes.io/hostname": e.Nodes[1]}}); err != nil {
		t.Fatal(err)
	}
	e.Ready("web", 2)
	e.AddNodes(2)
	guardSurge(t, e)
	before := deploymentState(t, e, "strict")

	r := e.Run("drain", e.Nodes[0], e.Nodes[1], "--surge", "--on-blocked=skip", "--blocked-after", "5s", "--timeout", "2m")
	if r.Code != 3 {
		t.Errorf("drain exit %d, want 3", r.Code)
	}
	mustContain(t, "output", r.Stdout+r.Stderr, "node/"+e.Nodes[1]+" drained", "node/"+e.Nodes[0]+" given up")
	n := e.Node(e.Nodes[0])
	rec := noderecord.Read(n, "")
	if !n.Spec.Unschedulable || rec.State != noderecord.StateBlocked || !strings.Contains(rec.Blocked, e.NS+"/strict") {
		t.Errorf("node %s: unschedulable %v, record %+v; want cordoned, blocked, naming pdb strict", e.Nodes[0], n.Spec.Unschedulable, rec)
	}
	if got := noderecord.Read(e.Node(e.Nodes[1]), "").State; got != noderecord.StateDrained {
		t.Errorf("node %s state %q, want drained", e.Nodes[1], got)
	}
	if got := deploymentState(t, e, "strict"); got != before {
		t.Errorf("deployment strict: %s, want it unchanged: %s", got, before)
	}
}

// Issue 21, test 6: an admission policy denies the evictions of some pods. The node
// fails, stays cordoned in state failed with the server's reason (not "draining"), and
// the summary counts as evicted exactly the pods whose eviction the API server accepted.
func TestEvictionDeniedByAnAdmissionPolicyFailsTheNodeTruthfully(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a", "spare")
	e.AddNodes(0)
	for _, app := range []string{"web", "locked"} {
		if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, app, 2, e.Here(fixture.PodOptions{})); err != nil {
			t.Fatal(err)
		}
		e.Ready(app, 2)
	}
	name := e.NS + "-deny-locked"
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods/eviction"}},
				}}}},
			Validations: []admissionregistrationv1.Validation{{
				Expression: `!(request.namespace == "` + e.NS + `" && request.name.startsWith("locked-"))`,
				Message:    "evictions of locked pods are denied by policy",
			}},
		},
	}
	if _, err := e.C.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(e.Ctx, policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}},
	}
	if _, err := e.C.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(e.Ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		_ = e.C.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Delete(ctx, name, metav1.DeleteOptions{})
		_ = e.C.AdmissionregistrationV1().ValidatingAdmissionPolicies().Delete(ctx, name, metav1.DeleteOptions{})
	})
	// The policy is in force once a probe eviction of a locked pod is denied by it
	// (policies reach the API server's admission through an informer).
	locked, err := fixture.WaitPodsReady(e.Ctx, e.C, e.NS, "app=locked", 2)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, e, "the admission policy in force", func() bool {
		err := e.C.PolicyV1().Evictions(e.NS).Evict(e.Ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: locked[0].Name, Namespace: e.NS},
			DeleteOptions: &metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}})
		return err != nil && strings.Contains(err.Error(), "denied by policy")
	})
	e.AddNodes(1)
	e.Guard()
	before := e.PodsOn(e.Nodes[0])

	r := e.Run("drain", e.Nodes[0], "--timeout", "2m", "-o", "json")
	if r.Code != 1 {
		t.Errorf("drain exit %d, want 1", r.Code)
	}
	n := e.Node(e.Nodes[0])
	rec := noderecord.Read(n, "")
	if !n.Spec.Unschedulable || rec.State != noderecord.StateFailed || !strings.Contains(rec.Blocked, "denied by policy") || !rec.Heartbeat.IsZero() {
		t.Errorf("node %s: unschedulable %v, record %+v; want cordoned, failed with the policy's reason, no heartbeat", e.Nodes[0], n.Spec.Unschedulable, rec)
	}
	// Accepted evictions: the pods that were on the node and are gone or going (the guard
	// holds that nothing else deleted them).
	accepted := 0
	for _, p := range before {
		cur, err := e.C.CoreV1().Pods(p.Namespace).Get(e.Ctx, p.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) || (err == nil && (cur.UID != p.UID || cur.DeletionTimestamp != nil)) {
			accepted++
		}
	}
	sum := r.Summary(t)
	if got, want := int(sum["pods_evicted"].(float64)), accepted; got != want {
		t.Errorf("summary: %d pod(s) evicted; the API server accepted %d evictions", got, want)
	}
}

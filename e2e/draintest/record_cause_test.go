package draintest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

// Cause (f): a budget held by the eviction record of an earlier, interrupted run. The
// record is put in status.disruptedPods as the API server's eviction handler writes it,
// for a pod that goes on running (its deletion never happened); the real disruption
// controller keeps it for 2 minutes and counts the pod unhealthy, so the budget allows
// nothing. The plan and the wait line name the record, the pod, and when it expires.
func TestEvictionRecordOfAnEarlierRunIsNamedWithItsExpiry(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a", "b")
	e.AddNodes()
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", 4, e.Here(fixture.PodOptions{SpreadByHostname: true})); err != nil {
		t.Fatal(err)
	}
	e.Ready("web", 4)
	e.PDB("web", fixture.PDBSpec{App: "web", MaxUnavailable: fixture.Int(1)}, 1)
	other := e.PodsOn(e.Nodes[1])
	if len(other) == 0 {
		t.Fatalf("no pod on %s", e.Nodes[1])
	}
	held := other[0].Name
	at := time.Now()
	pdbs := e.C.PolicyV1().PodDisruptionBudgets(e.NS)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p, err := pdbs.Get(e.Ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		p.Status.DisruptedPods = map[string]metav1.Time{held: {Time: at}}
		p.Status.DisruptionsAllowed = 0
		_, err = pdbs.UpdateStatus(e.Ctx, p, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// The disruption controller keeps the record (the pod still runs) and counts the pod
	// unhealthy.
	if _, err := fixture.WaitPDB(e.Ctx, e.C, e.NS, "web", func(p *policyv1.PodDisruptionBudget) bool {
		_, kept := p.Status.DisruptedPods[held]
		return kept && p.Status.DisruptionsAllowed == 0 && p.Status.CurrentHealthy == 3
	}); err != nil {
		t.Fatal(err)
	}
	g := e.Guard()

	r, lines := stream(t, e, 0, nil, "drain", e.Nodes[0], "--timeout", "15s")
	if r.Code != 124 {
		t.Fatalf("drain exit %d, want 124 (the record holds the budget for 2 minutes)", r.Code)
	}
	expiry := at.Add(2 * time.Minute).UTC().Format("15:04:05Z")
	var planCause, waitCause string
	for _, ev := range lines {
		switch ev["type"] {
		case "plan":
			planCause = fmt.Sprint(ev["plan"])
		case "pod.eviction_blocked":
			if c, _ := ev["cause"].(string); strings.Contains(c, "eviction record") {
				waitCause = c
			}
		}
	}
	fixture.MustContain(t, "plan", planCause, "eviction record of an earlier, interrupted run", e.NS+"/"+held)
	fixture.MustContain(t, "wait cause", waitCause, "eviction record of an earlier, interrupted run", e.NS+"/"+held, "drops the record at "+expiry)
	if g.Deleted != 0 {
		t.Errorf("%d pods evicted, want none while the record holds the budget", g.Deleted)
	}
}

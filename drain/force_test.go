package drain

import (
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

func TestForceVerdict(t *testing.T) {
	never := map[string]bool{"shop/db": true}
	tests := map[string]struct {
		parkedOn []string
		want     string
	}{
		"a pod waiting on a budget is forced":              {parkedOn: []string{"shop/web"}, want: ""},
		"a pod under two budgets, neither kept, is forced": {parkedOn: []string{"shop/web", "shop/all"}, want: ""},
		"a pod not waiting on a budget is not":             {parkedOn: nil, want: "not waiting on a budget"},
		"a pod of a never-force budget is not":             {parkedOn: []string{"shop/db"}, want: "pdb shop/db is never forced (--never-force)"},
		"one never-force budget of two keeps the pod":      {parkedOn: []string{"shop/web", "shop/db"}, want: "pdb shop/db is never forced (--never-force)"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := forceVerdict(tc.parkedOn, never); got != tc.want {
				t.Errorf("forceVerdict(%v) = %q, want %q", tc.parkedOn, got, tc.want)
			}
		})
	}
}

// The force deadline is the blocked clock of --on-blocked=skip with ForceAfter as limit.
func TestForceDeadlineIsTheBlockedClock(t *testing.T) {
	now := time.Unix(1000, 0)
	parked := pendingPod{parked: true}
	cfg := Config{Settings: Settings{Policy: Policy{OnBlocked: OnBlockedForce, ForceAfter: 5 * time.Second, BlockedAfter: time.Hour}}}
	tests := map[string]struct {
		movedAt time.Time
		pods    []pendingPod
		want    bool
	}{
		"blocked exactly force-after":            {now.Add(-5 * time.Second), []pendingPod{parked}, true},
		"blocked less than force-after":          {now.Add(-4 * time.Second), []pendingPod{parked}, false},
		"a pod terminating: not blocked":         {now.Add(-time.Minute), []pendingPod{parked, {terminating: true}}, false},
		"a pod queued, not parked: not blocked":  {now.Add(-time.Minute), []pendingPod{parked, {}}, false},
		"a clock that never started: not forced": {time.Time{}, []pendingPod{parked}, false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := nodeBlocked(now, tc.movedAt, cfg.blockedAfter(), tc.pods); got != tc.want {
				t.Errorf("nodeBlocked = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestWouldForce(t *testing.T) {
	budget := func(name string, allowed int32) *pdb.Budget {
		return &pdb.Budget{PDB: &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name},
			Status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed}}}
	}
	pod := func(name string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name}}
	}
	step := func(p string, v pdb.Verdict, bs ...*pdb.Budget) pdb.Step {
		return pdb.Step{Pod: pod(p), Decision: pdb.Decision{Verdict: v, Budgets: bs, Reason: string(v)}}
	}
	nodes := []event.NodePlan{{Name: "n1", Steps: []pdb.Step{
		step("web-1", pdb.Allowed, budget("web", 1)),
		step("db-1", pdb.Exhausted, budget("db", 0)),
		step("ledger-1", pdb.Never, budget("ledger", 0)),
		step("free-1", pdb.NoPDB),
		step("stale-1", pdb.Stale, budget("stale", 0)),
	}}}
	tests := map[string]struct {
		never map[string]bool
		want  []string
	}{
		"pods whose budget allows nothing":       {never: nil, want: []string{"shop/db-1", "shop/ledger-1"}},
		"without the budgets never to force":     {never: map[string]bool{"shop/ledger": true}, want: []string{"shop/db-1"}},
		"nothing when every such budget is kept": {never: map[string]bool{"shop/ledger": true, "shop/db": true}, want: nil},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, b := range wouldForce(nodes, tc.never) {
				got = append(got, b.Pod)
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("wouldForce = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestNodeDead(t *testing.T) {
	since := metav1.NewTime(time.Date(2026, 11, 28, 4, 0, 0, 0, time.UTC))
	node := func(conds ...corev1.NodeCondition) *corev1.Node {
		return &corev1.Node{Status: corev1.NodeStatus{Conditions: conds}}
	}
	tests := map[string]struct {
		n    *corev1.Node
		want string
	}{
		"ready":              {node(corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue}), ""},
		"no Ready condition": {node(), ""},
		"unknown":            {node(corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Reason: "NodeStatusUnknown", LastTransitionTime: since}), "Ready=Unknown since 2026-11-28T04:00:00Z (NodeStatusUnknown)"},
		"false":              {node(corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionFalse, Reason: "KubeletNotReady"}), "Ready=False (KubeletNotReady)"},
		"another condition false is not dead": {node(corev1.NodeCondition{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse},
			corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue}), ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := NodeDead(tc.n); got != tc.want {
				t.Errorf("NodeDead = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestDeadNodeWaits(t *testing.T) {
	tests := map[string]struct {
		skipSeconds int
		deadWait    time.Duration
		dead        bool
		want        time.Duration
		wantDead    bool
	}{
		"a live node waits for ever by default":        {want: 0},
		"a live node keeps --skip-wait-for-delete":     {skipSeconds: 30, want: 30 * time.Second},
		"a dead node waits the default dead-node wait": {dead: true, want: DefaultDeadNodeDeleteWait, wantDead: true},
		"a dead node takes the shorter of the two":     {dead: true, skipSeconds: 5, want: 5 * time.Second},
		"a dead node with its own wait":                {dead: true, deadWait: time.Minute, skipSeconds: 120, want: time.Minute, wantDead: true},
		"a dead-node wait of for ever keeps the other": {dead: true, deadWait: -1, skipSeconds: 30, want: 30 * time.Second},
		"a dead-node wait of for ever waits for ever":  {dead: true, deadWait: -1, want: 0},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := &run{e: &Engine{cfg: Config{Settings: Settings{SkipWaitForDeleteTimeoutSeconds: tc.skipSeconds, Policy: Policy{DeadNodeDeleteWait: tc.deadWait}}}},
				planned: plannedState{dead: map[string]string{}}}
			if tc.dead {
				r.planned.dead["n1"] = "Ready=Unknown"
			}
			got, dead := r.skipWaitLocked("n1")
			if got != tc.want || dead != tc.wantDead {
				t.Errorf("skipWaitLocked = %s, %v; want %s, %v", got, dead, tc.want, tc.wantDead)
			}
		})
	}
}

// --on-blocked=force: the pod a budget holds is deleted (with its UID as precondition), not
// evicted, once the node has been blocked for ForceAfter; the run ends finished by force,
// the pod counted apart, with Warning Events on the budget and the node. A budget in
// NeverForce keeps its pod: nothing is deleted and the run waits until its timeout.
func TestForceDeletesTheBlockedPod(t *testing.T) {
	tests := map[string]struct {
		never      []string
		wantForced bool
	}{
		"the blocked pod is deleted":          {wantForced: true},
		"a never-force budget keeps its pods": {never: []string{"ns/web"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			budget := testPDB(0)
			budget.Spec.Selector.MatchLabels = map[string]string{"app": "held"}
			budget.Status.CurrentHealthy, budget.Status.DesiredHealthy, budget.Status.ExpectedPods = 1, 1, 2
			held := podOn("held", "n1", "u1")
			held.Labels = map[string]string{"app": "held"}
			g := newRig(t, Config{RecordEvents: true, Settings: Settings{Timeout: time.Minute, Policy: Policy{OnBlocked: OnBlockedForce, ForceAfter: 10 * time.Second, NeverForce: tc.never}}},
				testNode("n1"), held, budget)
			g.start("n1")
			<-g.run
			res := g.finishStepping(time.Second)
			var deletes []k8stesting.DeleteAction
			for _, a := range g.client.Actions() {
				if d, ok := a.(k8stesting.DeleteAction); ok && a.GetResource().Resource == "pods" {
					deletes = append(deletes, d)
				}
			}
			if !tc.wantForced {
				var te *TimeoutError
				if len(deletes) != 0 || !errors.As(res.err, &te) || res.sum.PodsForced != 0 {
					t.Fatalf("Run = %v, %d delete(s), %d forced; want a timeout and nothing deleted", res.err, len(deletes), res.sum.PodsForced)
				}
				return
			}
			var fe *ForcedError
			if !errors.As(res.err, &fe) || len(fe.Pods) != 1 || fe.Pods[0].Pod != "ns/held" || fe.Pods[0].PDB != "ns/web" {
				t.Fatalf("Run = %v, want a ForcedError naming ns/held under ns/web", res.err)
			}
			if len(deletes) != 1 || deletes[0].GetName() != "held" || deletes[0].GetDeleteOptions().Preconditions == nil ||
				*deletes[0].GetDeleteOptions().Preconditions.UID != "u1" {
				t.Errorf("deletes %+v, want one of held with its UID as precondition", deletes)
			}
			if res.sum.PodsForced != 1 || res.sum.PodsEvicted != 0 || res.sum.NodesDrained != 1 || res.sum.Forced[0].Budget.DesiredHealthy != 1 {
				t.Errorf("summary %+v", res.sum)
			}
			regarding := map[string]bool{}
			for _, a := range g.client.Actions() {
				if c, ok := a.(k8stesting.CreateAction); ok && a.GetResource().Resource == "events" {
					if e, ok := c.GetObject().(*eventsv1.Event); ok && e.Reason == ReasonPodForced && e.Type == corev1.EventTypeWarning {
						regarding[e.Regarding.Kind+"/"+e.Regarding.Name] = true
					}
				}
			}
			if !regarding["PodDisruptionBudget/web"] || !regarding["Node/n1"] {
				t.Errorf("PodForced Warning Events on %v, want on PodDisruptionBudget/web and Node/n1", regarding)
			}
		})
	}
}

package mnttest

import (
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// Test 6: the API server refuses what can never run, with a message a person reads, and
// creates nothing.
func TestMaintenanceCELRefusesBadSpecs(t *testing.T) {
	e := newEnv(t)
	mc := mclient(t)
	nodes := []string{"n1"}
	neg := mntv1.DurationOf(-1e9)
	cases := map[string]struct {
		spec mntv1.MaintenanceSpec
		want string
	}{
		"a move without a target": {mntv1.MaintenanceSpec{Action: mntv1.ActionMove, Nodes: nodes}, "a Move needs its target pool"},
		"a target without a move": {mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: nodes, To: "blue"}, "only for action Move"},
		"names and a selector":    {mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: nodes, Selector: "a=b"}, "not both"},
		"a pool and names":        {mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: nodes, Pool: "blue"}, "don't also give spec.nodes"},
		"no nodes":                {mntv1.MaintenanceSpec{Action: mntv1.ActionDrain}, "no nodes"},
		"an unknown action":       {mntv1.MaintenanceSpec{Action: "Reboot", Nodes: nodes}, "action must be Drain, Cordon, Uncordon or Move"},
		"an unknown policy":       {mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: nodes, Policy: mntv1.Policy{OnBlocked: "retry"}}, "onBlocked must be wait, skip, fail or force"},
		"a negative timeout":      {mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: nodes, Drain: mntv1.DrainSettings{Timeout: neg}}, "timeout must not be negative"},
		"a negative blockedAfter": {mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: nodes, Policy: mntv1.Policy{BlockedAfter: neg}}, "blockedAfter must not be negative"},
		"a grace period below -1": {mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: nodes, Drain: mntv1.DrainSettings{GracePeriodSeconds: ptr.To(int32(-5))}}, "gracePeriodSeconds must be -1"},
		"negative parallelism":    {mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: nodes, Policy: mntv1.Policy{MaxParallelNodes: -1}}, "maxParallelNodes must not be negative"},
		"surge on a cordon":       {mntv1.MaintenanceSpec{Action: mntv1.ActionCordon, Nodes: nodes, Policy: mntv1.Policy{Surge: true}}, "policy.surge is only for a Drain or a Move"},
		"a negative soak":         {mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Pool: "blue", Policy: mntv1.Policy{Soak: neg}}, "soak must not be negative"},
		"a soak without a pool":   {mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: nodes, Policy: mntv1.Policy{Soak: mntv1.DurationOf(6e10)}}, "policy.soak is for a rolling pool operation"},
	}
	i := 0
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			i++
			obj := e.NS + "-" + strings.ToLower(strings.ReplaceAll(strings.ReplaceAll(name, " ", "-"), "'", ""))
			m := &mntv1.Maintenance{ObjectMeta: metav1.ObjectMeta{Name: obj}, Spec: tc.spec}
			err := mc.Create(e.Ctx, m)
			if !apierrors.IsInvalid(err) {
				t.Fatalf("create: %v, want Invalid", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("message %q does not say %q", err.Error(), tc.want)
			}
			if err := mc.Get(e.Ctx, types.NamespacedName{Name: obj}, &mntv1.Maintenance{}); !apierrors.IsNotFound(err) {
				t.Errorf("after the refusal: %v, want NotFound", err)
			}
		})
	}
	t.Logf("%d bad specs refused", i)
}

// Issue 30, test 2: what the API server now refuses: durations Go cannot read, days, an
// empty node name, a node name that is no DNS subdomain.
func TestMaintenanceCELRefusesBadValues(t *testing.T) {
	e := newEnv(t)
	mc := mclient(t)
	dur := func(s string) *mntv1.Duration { d := mntv1.Duration(s); return &d }
	cases := map[string]struct {
		spec mntv1.MaintenanceSpec
		want string
	}{
		"timeout abc":              {mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: []string{"n1"}, Drain: mntv1.DrainSettings{Timeout: dur("abc")}}, "timeout must be a duration such as 90s"},
		"timeout 1d":               {mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: []string{"n1"}, Drain: mntv1.DrainSettings{Timeout: dur("1d")}}, "1d is not one: write 24h"},
		"blockedAfter 1d":          {mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: []string{"n1"}, Policy: mntv1.Policy{BlockedAfter: dur("1d")}}, "blockedAfter must be a duration"},
		"blockedAfter xyz":         {mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: []string{"n1"}, Policy: mntv1.Policy{BlockedAfter: dur("xyz")}}, "blockedAfter must be a duration"},
		"soak 5 minutes":           {mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Pool: "blue", Policy: mntv1.Policy{Soak: dur("5 minutes")}}, "soak must be a duration"},
		"an empty node name":       {mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: []string{""}}, "spec.nodes[0]"},
		"a node name in capitals":  {mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: []string{"Node-1"}}, "spec.nodes[0]"},
		"a pool name with a slash": {mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Pool: "a/b"}, "spec.pool"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obj := e.NS + "-" + strings.ToLower(strings.ReplaceAll(name, " ", "-"))
			err := mc.Create(e.Ctx, &mntv1.Maintenance{ObjectMeta: metav1.ObjectMeta{Name: obj}, Spec: tc.spec})
			if !apierrors.IsInvalid(err) {
				t.Fatalf("create: %v, want Invalid", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("message %q does not say %q", err.Error(), tc.want)
			}
		})
	}
	// Valid forms are still taken.
	for _, v := range []string{"0", "90s", "1h30m", "1.5h", "500ms"} {
		obj := e.NS + "-ok-" + strings.ReplaceAll(v, ".", "-")
		m := &mntv1.Maintenance{ObjectMeta: metav1.ObjectMeta{Name: obj}, Spec: mntv1.MaintenanceSpec{Action: mntv1.ActionCordon, Nodes: []string{"n1"}, Paused: true, Drain: mntv1.DrainSettings{Timeout: dur(v)}}}
		if err := mc.Create(e.Ctx, m); err != nil {
			t.Errorf("timeout %q refused: %v", v, err)
			continue
		}
		_ = mc.Delete(e.Ctx, m)
	}
}

// Issue 30, test 4: once created, only spec.paused and spec.reason may change.
func TestMaintenanceSpecImmutable(t *testing.T) {
	e := newEnv(t)
	mc := mclient(t)
	create(e, mc, e.NS, mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: []string{e.NS + "-x"}, Paused: true})
	refused := map[string]string{
		"the nodes":     `{"spec":{"nodes":["other"]}}`,
		"a new timeout": `{"spec":{"drain":{"timeout":"5m"}}}`,
		"a policy":      `{"spec":{"policy":{"onBlocked":"skip"}}}`,
		"a selector":    `{"spec":{"nodes":null,"selector":"a=b"}}`,
	}
	for name, body := range refused {
		err := mc.Patch(e.Ctx, &mntv1.Maintenance{ObjectMeta: metav1.ObjectMeta{Name: e.NS}}, client.RawPatch(types.MergePatchType, []byte(body)))
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "only spec.paused and spec.reason may change") {
			t.Errorf("%s: %v, want Invalid saying only paused and reason may change", name, err)
		}
	}
	for name, body := range map[string]string{"paused": `{"spec":{"paused":false}}`, "reason": `{"spec":{"reason":"CHG-42"}}`} {
		if err := mc.Patch(e.Ctx, &mntv1.Maintenance{ObjectMeta: metav1.ObjectMeta{Name: e.NS}}, client.RawPatch(types.MergePatchType, []byte(body))); err != nil {
			t.Errorf("%s: %v, want accepted", name, err)
		}
	}
	if m := get(e, mc, e.NS); m.Spec.Reason != "CHG-42" || m.Spec.Paused || len(m.Spec.Nodes) != 1 || m.Spec.Nodes[0] != e.NS+"-x" {
		t.Errorf("spec after the edits: %+v", m.Spec)
	}
}

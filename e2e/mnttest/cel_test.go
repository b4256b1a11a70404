package mnttest

import (
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// Test 6: the API server refuses what can never run, with a message a person reads, and
// creates nothing.
func TestMaintenanceCELRefusesBadSpecs(t *testing.T) {
	e := newEnv(t)
	mc := mclient(t)
	nodes := []string{"n1"}
	neg := &metav1.Duration{Duration: -1e9}
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
		"an unknown policy":       {mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: nodes, Policy: mntv1.Policy{OnBlocked: "retry"}}, "onBlocked must be wait, skip or fail"},
		"a negative timeout":      {mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: nodes, Drain: mntv1.DrainSettings{Timeout: neg}}, "timeout must not be negative"},
		"a negative blockedAfter": {mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: nodes, Policy: mntv1.Policy{BlockedAfter: neg}}, "blockedAfter must not be negative"},
		"a grace period below -1": {mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: nodes, Drain: mntv1.DrainSettings{GracePeriodSeconds: ptr.To(int32(-5))}}, "gracePeriodSeconds must be -1"},
		"negative parallelism":    {mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: nodes, Policy: mntv1.Policy{MaxParallelNodes: -1}}, "maxParallelNodes must not be negative"},
		"surge on a cordon":       {mntv1.MaintenanceSpec{Action: mntv1.ActionCordon, Nodes: nodes, Policy: mntv1.Policy{Surge: true}}, "policy.surge is only for a Drain or a Move"},
		"a negative soak":         {mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Pool: "blue", Policy: mntv1.Policy{Soak: neg}}, "soak must not be negative"},
		"a soak without a pool":   {mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: nodes, Policy: mntv1.Policy{Soak: &metav1.Duration{Duration: 6e10}}}, "policy.soak is for a rolling pool operation"},
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

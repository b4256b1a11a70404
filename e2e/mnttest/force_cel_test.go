package mnttest

import (
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// Force at a deadline and dead nodes in a Maintenance: the API server refuses force
// without an explicit forceAfter (and forceAfter or neverForce without force), a
// neverForce entry that is no NAMESPACE/NAME and a negative deadNodeDeleteWait, and
// creates nothing; force with its forceAfter is accepted.
func TestMaintenanceCELRefusesForceWithoutForceAfter(t *testing.T) {
	e := newEnv(t)
	mc := mclient(t)
	nodes := []string{"n1"}
	dur := func(s string) *mntv1.Duration { d := mntv1.Duration(s); return &d }
	cases := map[string]struct {
		policy mntv1.Policy
		drain  mntv1.DrainSettings
		want   string // "" when accepted
	}{
		"force without forceAfter":        {policy: mntv1.Policy{OnBlocked: "force"}, want: "onBlocked force needs an explicit forceAfter"},
		"forceAfter without force":        {policy: mntv1.Policy{OnBlocked: "skip", ForceAfter: dur("5m")}, want: "forceAfter needs onBlocked force"},
		"neverForce without force":        {policy: mntv1.Policy{NeverForce: []string{"shop/db"}}, want: "neverForce needs onBlocked force"},
		"a neverForce entry with no name": {policy: mntv1.Policy{OnBlocked: "force", ForceAfter: dur("5m"), NeverForce: []string{"db"}}, want: "spec.policy.neverForce[0]"},
		"a negative forceAfter":           {policy: mntv1.Policy{OnBlocked: "force", ForceAfter: dur("-5m")}, want: "forceAfter must not be negative"},
		"a negative deadNodeDeleteWait":   {drain: mntv1.DrainSettings{DeadNodeDeleteWait: dur("-1s")}, want: "deadNodeDeleteWait must not be negative"},
		"force with its forceAfter":       {policy: mntv1.Policy{OnBlocked: "force", ForceAfter: dur("5m"), NeverForce: []string{"shop/db"}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obj := e.NS + "-" + strings.ToLower(strings.ReplaceAll(name, " ", "-"))
			m := &mntv1.Maintenance{ObjectMeta: metav1.ObjectMeta{Name: obj},
				Spec: mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: nodes, Policy: tc.policy, Drain: tc.drain, Paused: true}}
			err := mc.Create(e.Ctx, m)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("create: %v, want it accepted", err)
				}
				_ = mc.Delete(e.Ctx, m)
				return
			}
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("create: %v, want Invalid saying %q", err, tc.want)
			}
			if err := mc.Get(e.Ctx, types.NamespacedName{Name: obj}, &mntv1.Maintenance{}); !apierrors.IsNotFound(err) {
				t.Errorf("after the refusal: %v, want NotFound", err)
			}
		})
	}
}

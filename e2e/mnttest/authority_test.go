package mnttest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-maintenance/kubectl-maintenance/access"
	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance"
	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// Issue 30, finding 3: with the admission policy installed, a Maintenance is refused unless
// its creator may do what it asks, with a message naming what is missing; the requester
// cannot be forged; and the nodes a Drain Maintenance changes name the requester.
func TestPolicyRefusesMaintenancesBeyondTheUsersRights(t *testing.T) {
	e := newEnv(t, "a", "spare")
	only := e.User(t, "only-maintenances", []rbacv1.PolicyRule{maintenancesCreate, maintenancesUpdate})
	nodes := e.User(t, "nodes-no-evict", []rbacv1.PolicyRule{maintenancesCreate, nodesPatch})
	maint := e.User(t, "maintainer", []rbacv1.PolicyRule{maintenancesCreate, maintenancesUpdate, nodesPatch, podsEvict})
	onlyC, nodesC, maintC := userClient(t, only), userClient(t, nodes), userClient(t, maint)
	installPolicy(t, e, onlyC)

	nowhere := []string{e.NS + "-nowhere"}
	spec := func(a mntv1.Action) mntv1.MaintenanceSpec { return mntv1.MaintenanceSpec{Action: a, Nodes: nowhere} }
	forced := spec(mntv1.ActionUncordon)
	forced.Drain.Force = true
	clears := spec(mntv1.ActionDrain)
	clears.Drain.ClearDisruptionHolds = true
	tests := []struct {
		name string
		c    client.Client
		spec mntv1.MaintenanceSpec
		by   string // the requested-by annotation ("" for none)
		want string // the policy's message; "" when allowed
	}{
		{"a Drain by a user who may only create Maintenances", onlyC, spec(mntv1.ActionDrain), "",
			"creating a Drain Maintenance needs the rights it uses: you may not patch nodes, nor create pods/eviction (cluster-wide)"},
		{"a Cordon by the same user", onlyC, spec(mntv1.ActionCordon), "",
			"creating a Cordon Maintenance needs the rights it uses: you may not patch nodes"},
		{"a forced Uncordon by the same user", onlyC, forced, "",
			"creating an Uncordon Maintenance needs the rights it uses: you may not patch nodes"},
		{"a Drain by a user who may patch nodes but not evict", nodesC, spec(mntv1.ActionDrain), "",
			"creating a Drain Maintenance needs the rights it uses: you may not create pods/eviction (cluster-wide)"},
		{"a Cordon by the user who may patch nodes", nodesC, spec(mntv1.ActionCordon), nodes.Name, ""},
		{"a Drain by a maintainer, as themself", maintC, spec(mntv1.ActionDrain), maint.Name, ""},
		{"a Drain by a maintainer, unannotated", maintC, spec(mntv1.ActionDrain), "", ""},
		{"a Drain by a maintainer naming someone else", maintC, spec(mntv1.ActionDrain), "system:admin",
			`annotation maintenance.kubectl-maintenance.io/requested-by names the user who creates the Maintenance: it must be "` + maint.Name + `", not "system:admin"`},
		{"a Drain that clears holds by a maintainer who may not update budgets' status", maintC, clears, "",
			"creating a Drain Maintenance needs the rights it uses: you may not update poddisruptionbudgets.policy/status (cluster-wide; drain.clearDisruptionHolds)"},
		{"a Move by a maintainer who may not update the target pool", maintC,
			mntv1.MaintenanceSpec{Action: mntv1.ActionMove, Nodes: nowhere, To: "blue"}, "",
			"creating a Move Maintenance needs the rights it uses: you may not update nodepools.maintenance.kubectl-maintenance.io/blue"},
		{"a pool Drain by a maintainer who may not update the pool", maintC,
			mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Pool: "green"}, "",
			"creating a Drain Maintenance needs the rights it uses: you may not update nodepools.maintenance.kubectl-maintenance.io/green"},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := &mntv1.Maintenance{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-case-%d", e.NS, i)}, Spec: tc.spec}
			if tc.by != "" {
				m.Annotations = map[string]string{maintenance.AnnotationRequestedBy: tc.by}
			}
			err := tc.c.Create(e.Ctx, m, client.DryRunAll) // nothing stored, nothing to run
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (!apierrors.IsForbidden(err) || err.Error() != refusal(m.Name, tc.want)):
				t.Errorf("create: %v\nwant Forbidden: %s", err, refusal(m.Name, tc.want))
			case tc.want != "":
				t.Logf("refused: %s", err)
			}
		})
	}

	t.Run("updates: pausing needs no rights, resuming does, the requester never changes", func(t *testing.T) {
		mc := mclient(t) // the admin, who may do everything
		m := drainOf(e, "updates", map[string]string{maintenance.AnnotationRequestedBy: maint.Name})
		if err := maintC.Create(e.Ctx, m); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = mc.Delete(context.Background(), m) })
		steps := []struct {
			name  string
			c     client.Client
			patch string
			want  string
		}{
			{"pause by a user without the rights", onlyC, `{"spec":{"paused":true}}`, ""},
			{"a new reason on the paused object by the same user", onlyC, `{"spec":{"reason":"CHG-1"}}`, ""},
			{"resume by the same user", onlyC, `{"spec":{"paused":false}}`,
				"changing a Drain Maintenance needs the rights it uses: you may not patch nodes, nor create pods/eviction (cluster-wide)"},
			{"a new requester, by the maintainer", maintC, `{"metadata":{"annotations":{"` + maintenance.AnnotationRequestedBy + `":"` + only.Name + `"}}}`,
				"annotation maintenance.kubectl-maintenance.io/requested-by cannot change: it records who created the Maintenance"},
			{"the requester removed, by the admin", mc, `{"metadata":{"annotations":{"` + maintenance.AnnotationRequestedBy + `":null}}}`,
				"annotation maintenance.kubectl-maintenance.io/requested-by cannot change: it records who created the Maintenance"},
			{"resume by the maintainer", maintC, `{"spec":{"paused":false}}`, ""},
		}
		for _, s := range steps {
			target := &mntv1.Maintenance{ObjectMeta: metav1.ObjectMeta{Name: m.Name}}
			err := s.c.Patch(e.Ctx, target, client.RawPatch(types.MergePatchType, []byte(s.patch)))
			switch {
			case s.want == "" && err != nil:
				t.Errorf("%s: refused: %v", s.name, err)
			case s.want != "" && (!apierrors.IsForbidden(err) || err.Error() != refusal(m.Name, s.want)):
				t.Errorf("%s: %v\nwant Forbidden: %s", s.name, err, refusal(m.Name, s.want))
			case s.want != "":
				t.Logf("%s: refused: %s", s.name, err)
			}
		}
	})

	t.Run("the CLI says which rights are missing", func(t *testing.T) {
		r := e.Run("--kubeconfig", only.Kubeconfig, "drain", e.Nodes[0], "--server-side", "--detach")
		if r.Code != 1 {
			t.Errorf("drain --server-side by a user who may only create Maintenances: exit %d, want 1", r.Code)
		}
		fixture.MustContain(t, "stderr", r.Stderr,
			"creating a Drain Maintenance needs the rights it uses: you may not patch nodes, nor create pods/eviction (cluster-wide)")
	})

	t.Run("a Drain the maintainer asked for names them on the node", func(t *testing.T) {
		requesterOnTheNode(t, e, maint)
	})
}

// requesterOnTheNode: the maintainer drains node a with --server-side; the controller
// (the admin) runs it; the node's record, its Drained condition and its Events name the
// maintainer, via the controller.
func requesterOnTheNode(t *testing.T, e *fixture.Env, maint fixture.User) {
	e.AddNodes(0)
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", 2, e.Here(fixture.PodOptions{})); err != nil {
		t.Fatal(err)
	}
	e.Ready("web", 2)
	e.AddNodes(1)
	e.Guard()
	runController(e)
	name := e.NS + "-by-maintainer"
	// The later --kubeconfig wins: the CLI acts as the maintainer.
	r := e.Run("--kubeconfig", maint.Kubeconfig, "drain", e.Nodes[0], "--ignore-daemonsets", "--server-side", "--detach", "--name", name)
	if r.Code != 0 {
		t.Fatalf("drain --server-side by the maintainer: exit %d", r.Code)
	}
	mc := mclient(t)
	t.Cleanup(func() {
		_ = mc.Delete(context.Background(), &mntv1.Maintenance{ObjectMeta: metav1.ObjectMeta{Name: name}})
	})
	if got := get(e, mc, name).Annotations[maintenance.AnnotationRequestedBy]; got != maint.Name {
		t.Errorf("requested-by %q, want %q (the CLI's user)", got, maint.Name)
	}
	m, _ := waitFor(e, mc, name, "the end", func(m *mntv1.Maintenance) bool { return m.Status.Phase.Done() })
	if m.Status.Phase != mntv1.PhaseSucceeded {
		t.Fatalf("phase %s (%s), want Succeeded", m.Status.Phase, m.Status.Message)
	}
	want := maint.Name + " (via " + access.WhoAmI(e.Ctx, e.C, "") + ")"
	node := e.Node(e.Nodes[0])
	if got := node.Annotations[noderecord.AnnotationUser]; got != want {
		t.Errorf("node annotation %s = %q, want %q", noderecord.AnnotationUser, got, want)
	}
	drained := nodeCondition(e, e.Nodes[0], "Drained")
	if drained.Status != corev1.ConditionTrue || !strings.Contains(drained.Message, "maintenance/"+name+" (user "+want+")") {
		t.Errorf("condition Drained %s: %q; want True naming maintenance/%s and the user %s", drained.Status, drained.Message, name, want)
	}
	t.Logf("node %s: %s=%q; Drained: %q", node.Name, noderecord.AnnotationUser, node.Annotations[noderecord.AnnotationUser], drained.Message)
	nodeEventsName(t, e, e.Nodes[0], want)
}

// nodeEventsName checks that every Event the drain recorded on node names user (the
// controller's recorder writes them on its own time: up to a minute is waited for
// Drained).
func nodeEventsName(t *testing.T, e *fixture.Env, node, user string) {
	t.Helper()
	var mine []eventsv1.Event
	poll(t, e, "the node's Drained Event", func() bool {
		list, err := e.C.EventsV1().Events(metav1.NamespaceDefault).List(e.Ctx, metav1.ListOptions{
			FieldSelector: fields.OneTermEqualSelector("regarding.name", node).String()})
		if err != nil {
			t.Fatal(err)
		}
		mine = mine[:0]
		drained := false
		for _, ev := range list.Items {
			if ev.ReportingController == drain.ReportingController {
				mine = append(mine, ev)
				drained = drained || ev.Reason == "Drained"
			}
		}
		return drained
	})
	for _, ev := range mine {
		if !strings.HasSuffix(ev.Note, " (user "+user+")") {
			t.Errorf("Event %s on node %s: note %q does not name the user %s", ev.Reason, node, ev.Note, user)
		} else {
			t.Logf("Event %s: %s", ev.Reason, ev.Note)
		}
	}
}

// The user roles of config/rbac/roles.yaml aggregate into the built-in view, edit and
// admin: a user bound to edit may create Maintenances (and, without the policy, does);
// with the policy installed, edit alone is not enough to drain.
func TestUserRolesAggregateIntoViewEditAdmin(t *testing.T) {
	e := newEnv(t)
	for _, obj := range manifests(t, "rbac") {
		role, ok := obj.(*rbacv1.ClusterRole)
		if !ok || !strings.HasPrefix(role.Name, "kubectl-maintenance-") || role.Name == "kubectl-maintenance-controller" {
			continue // roles.yaml's roles only: the controller's RBAC is not this test's
		}
		if _, err := e.C.RbacV1().ClusterRoles().Create(e.Ctx, role, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = e.C.RbacV1().ClusterRoles().Delete(context.Background(), role.Name, metav1.DeleteOptions{})
		})
	}
	users := map[string]fixture.User{}
	for _, role := range []string{"view", "edit", "admin"} {
		users[role] = e.User(t, "bound-to-"+role, nil, role)
	}
	const group = "maintenance.kubectl-maintenance.io"
	tests := []struct {
		role, verb, group, resource string
		want                        bool
	}{
		{"view", "list", group, "maintenances", true},
		{"view", "watch", group, "nodepools", true},
		{"view", "create", group, "maintenances", false},
		{"edit", "create", group, "maintenances", true},
		{"edit", "patch", group, "maintenances", true},
		{"edit", "delete", group, "maintenances", true},
		{"edit", "get", group, "nodepools", true},
		{"edit", "update", group, "nodepools", false},
		{"edit", "patch", "", "nodes", false},
		{"edit", "create", "", "pods/eviction", true}, // edit bound cluster-wide: the policy's second right
		{"admin", "create", group, "nodepools", true},
		{"admin", "delete", group, "maintenances", true},
	}
	for _, tc := range tests {
		t.Run(tc.role+" "+tc.verb+" "+tc.resource, func(t *testing.T) {
			// The aggregation controller fills the built-in roles in shortly after.
			var got bool
			poll(t, e, "the aggregation", func() bool {
				got = canI(t, e, users[tc.role], tc.verb, tc.group, tc.resource)
				return got == tc.want
			})
		})
	}

	edit := userClient(t, users["edit"])
	// Without the policy (a previous test's binding may take a moment to go): edit creates.
	poll(t, e, "a Drain created by an edit user without the policy", func() bool {
		return edit.Create(e.Ctx, drainOf(e, "by-edit", nil), client.DryRunAll) == nil
	})
	installPolicy(t, e, edit)
	m := drainOf(e, "by-edit", nil)
	err := edit.Create(e.Ctx, m, client.DryRunAll)
	if want := refusal(m.Name, "creating a Drain Maintenance needs the rights it uses: you may not patch nodes"); !apierrors.IsForbidden(err) || err.Error() != want {
		t.Errorf("a Drain by an edit user with the policy: %v; want Forbidden: %s", err, want)
	}
	t.Logf("with the policy, edit alone: %v", err)
}

// canI is `kubectl auth can-i verb resource[/subresource]` (cluster-wide) as u: a
// SelfSubjectAccessReview.
func canI(t *testing.T, e *fixture.Env, u fixture.User, verb, group, resource string) bool {
	t.Helper()
	resource, sub, _ := strings.Cut(resource, "/")
	cs, err := kubernetes.NewForConfig(u.Config)
	if err != nil {
		t.Fatal(err)
	}
	r, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(e.Ctx, &authorizationv1.SelfSubjectAccessReview{
		Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
			Verb: verb, Group: group, Resource: resource, Subresource: sub}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return r.Status.Allowed
}

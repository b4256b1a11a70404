package access

import (
	"bytes"
	"os"
	"sort"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// The controller's ClusterRole in config/rbac grants exactly what Controller asks for at
// start: no call the code makes is missing from it, and it grants nothing the code never
// calls.
func TestControllerRoleMatchesTheCode(t *testing.T) {
	raw, err := os.ReadFile("../config/rbac/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var role *rbacv1.ClusterRole
	for _, doc := range bytes.Split(raw, []byte("\n---")) {
		var r rbacv1.ClusterRole
		if err := yaml.Unmarshal(doc, &r); err != nil {
			t.Fatal(err)
		}
		if r.Kind == "ClusterRole" && r.Name == "kubectl-maintenance-controller" {
			role = &r
		}
	}
	if role == nil {
		t.Fatal("no ClusterRole kubectl-maintenance-controller in config/rbac/rbac.yaml")
	}
	granted := map[string]bool{}
	for _, rule := range role.Rules {
		for _, g := range rule.APIGroups {
			for _, res := range rule.Resources {
				for _, v := range rule.Verbs {
					granted[v+" "+res+" "+g] = true
				}
			}
		}
	}
	wanted := map[string]bool{}
	for _, c := range Controller() {
		res := c.Resource
		if c.Subresource != "" {
			res += "/" + c.Subresource
		}
		wanted[c.Verb+" "+res+" "+c.Group] = true
	}
	diff := func(a, b map[string]bool) []string {
		var out []string
		for k := range a {
			if !b[k] {
				out = append(out, k)
			}
		}
		sort.Strings(out)
		return out
	}
	if d := diff(wanted, granted); len(d) > 0 {
		t.Errorf("the code calls what config/rbac/rbac.yaml does not grant:\n%s", strings.Join(d, "\n"))
	}
	if d := diff(granted, wanted); len(d) > 0 {
		t.Errorf("config/rbac/rbac.yaml grants what access.Controller() does not list:\n%s", strings.Join(d, "\n"))
	}
}

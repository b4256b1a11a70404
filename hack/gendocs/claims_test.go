package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-maintenance/kubectl-maintenance/config/crd"
)

// Prose that restates what the code defines, held to the code where a check can: the
// README's exit-code table is the generated one, operations.md's RBAC table has a row for
// every rule of the controller's ClusterRole, and the user guide's phase list names every
// phase the CRD allows.
func TestDocsClaimsMatchTheCode(t *testing.T) {
	t.Run("README exit codes", func(t *testing.T) {
		readme, gen := tableRows(t, "README.md", "## Exit codes", true), tableRows(t, "docs/reference/exit-codes.md", "# Exit codes", true)
		if len(readme) == 0 || strings.Join(readme, "\n") != strings.Join(gen, "\n") {
			t.Errorf("README.md's exit-code table differs from docs/reference/exit-codes.md:\nREADME:\n%s\ngenerated:\n%s", strings.Join(readme, "\n"), strings.Join(gen, "\n"))
		}
	})
	t.Run("operations.md RBAC rows", func(t *testing.T) {
		rows := tableRows(t, "docs/operations.md", "## RBAC", false)
		for _, rule := range controllerRules(t) {
			for _, res := range rule.Resources {
				row := ""
				for _, r := range rows {
					if strings.Contains(strings.SplitN(r, "|", 3)[1], "`"+res+"`") {
						row = r
						break
					}
				}
				if row == "" {
					t.Errorf("operations.md's RBAC table has no row for %s (config/rbac/rbac.yaml grants %v)", res, rule.Verbs)
					continue
				}
				verbs := strings.SplitN(row, "|", 4)[2]
				for _, v := range rule.Verbs {
					if !regexp.MustCompile(`\b` + v + `\b`).MatchString(verbs) {
						t.Errorf("operations.md's RBAC row for %s does not say %s: %s", res, v, row)
					}
				}
			}
		}
	})
	t.Run("user guide phases", func(t *testing.T) {
		guide := read(t, "docs/user-guide.md")
		i := strings.Index(guide, "**Status**: `phase` (")
		if i < 0 {
			t.Fatal("docs/user-guide.md has no **Status**: `phase` (...) paragraph")
		}
		list := guide[i : i+strings.Index(guide[i:], ")")+200]
		for _, p := range phases(t) {
			if !strings.Contains(list, p) {
				t.Errorf("docs/user-guide.md's phase list does not name %s", p)
			}
		}
	})
}

func read(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, file))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// tableRows are the rows of the first table after heading in file, header and rule
// included; with plain, backticks dropped (the generated pages have none).
func tableRows(t *testing.T, file, heading string, plain bool) []string {
	t.Helper()
	s := read(t, file)
	i := strings.Index(s, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("%s has no %q", file, heading)
	}
	var rows []string
	for _, line := range strings.Split(s[i+1:], "\n") {
		if strings.HasPrefix(line, "|") {
			if plain {
				line = strings.ReplaceAll(line, "`", "")
			}
			rows = append(rows, line)
		} else if len(rows) > 0 {
			break
		}
	}
	return rows
}

// controllerRules are the rules of the ClusterRole kubectl-maintenance-controller.
func controllerRules(t *testing.T) []rbacv1.PolicyRule {
	t.Helper()
	d := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(read(t, "config/rbac/rbac.yaml")), 4096)
	for {
		var cr rbacv1.ClusterRole
		if err := d.Decode(&cr); err != nil {
			t.Fatalf("no ClusterRole kubectl-maintenance-controller in config/rbac/rbac.yaml: %v", err)
		}
		if cr.Kind == "ClusterRole" && cr.Name == "kubectl-maintenance-controller" {
			return cr.Rules
		}
	}
}

// phases are the values the Maintenance CRD allows in status.phase.
func phases(t *testing.T) []string {
	t.Helper()
	var c apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(crd.Maintenances, &c); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"].Properties["phase"].Enum {
		out = append(out, strings.Trim(string(e.Raw), `"`))
	}
	if len(out) == 0 {
		t.Fatal("status.phase has no enum in the CRD")
	}
	return out
}

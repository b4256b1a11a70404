package mnttest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/cluster"
	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance"
	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// example is one Maintenance the docs show, as written there.
type example struct {
	where string         // file:line
	obj   map[string]any // the YAML block, parsed
}

var yamlBlock = regexp.MustCompile("(?ms)^```ya?ml\n(.*?)^```")

// docExamples extracts every Maintenance from the YAML blocks of README.md and docs/
// (a block whose kind is Maintenance, or a spec fragment with an action) and from
// config/samples (which the docs point to).
func docExamples(t *testing.T) []example {
	t.Helper()
	root, err := cluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	files := []string{filepath.Join(root, "README.md")}
	_ = filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			files = append(files, p)
		}
		return nil
	})
	samples, _ := filepath.Glob(filepath.Join(root, "config", "samples", "maintenance-*.yaml"))
	var out []example
	for _, f := range append(files, samples...) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		blocks := [][]int{{0, 0, 0, len(data)}}
		if strings.HasSuffix(f, ".md") {
			blocks = yamlBlock.FindAllSubmatchIndex(data, -1)
		}
		for _, b := range blocks {
			obj := map[string]any{}
			if err := yaml.Unmarshal(data[b[2]:b[3]], &obj); err != nil {
				continue // a list or not YAML of an object: not a Maintenance
			}
			spec, _ := obj["spec"].(map[string]any)
			if obj["kind"] == "Maintenance" || (obj["kind"] == nil && spec != nil && spec["action"] != nil) {
				line := 1 + strings.Count(string(data[:b[2]]), "\n")
				out = append(out, example{where: fmt.Sprintf("%s:%d", rel, line), obj: obj})
			}
		}
	}
	return out
}

// Issue 39, test 2: every Maintenance example in README.md, docs/ and config/samples,
// applied with the pinned kubectl as written (only its names replaced by the test's
// nodes and pool), runs to its expected end: Succeeded, or Scheduled for a window not
// open now.
func TestDocExamplesRun(t *testing.T) {
	examples := docExamples(t)
	if len(examples) < 3 {
		t.Fatalf("found %d Maintenance examples in the docs, want at least the user guide's 3", len(examples))
	}
	e := newEnv(t, "a", "b", "c", "spare")
	e.AddNodes(0, 1, 2)
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", 6, e.Here(fixture.PodOptions{})); err != nil {
		t.Fatal(err)
	}
	e.Ready("web", 6)
	e.PDB("web", fixture.PDBSpec{App: "web", MaxUnavailable: fixture.Int(1)}, 1)
	e.AddNodes(3)
	plainPool(e, e.Nodes[2])
	e.Guard()
	mc := mclient(t)
	startController(e)
	nodeN := regexp.MustCompile(`^node-([0-9]+)$`)
	for i, ex := range examples {
		name := fmt.Sprintf("%s-ex%d", e.NS, i)
		obj := ex.obj
		obj["apiVersion"], obj["kind"] = mntv1.GroupVersion.String(), "Maintenance"
		obj["metadata"] = map[string]any{"name": name}
		spec := obj["spec"].(map[string]any)
		var nodes []string
		if list, ok := spec["nodes"].([]any); ok {
			for j, n := range list {
				k := 0
				if m := nodeN.FindStringSubmatch(fmt.Sprint(n)); m != nil {
					k, _ = strconv.Atoi(m[1])
					k--
				}
				if k < 0 || k > 1 {
					t.Fatalf("%s: node %v: the test maps node-1 and node-2 only", ex.where, n)
				}
				list[j] = e.Nodes[k]
				nodes = append(nodes, e.Nodes[k])
			}
		}
		if _, ok := spec["pool"]; ok {
			spec["pool"] = e.NS
			nodes = append(nodes, e.Nodes[2])
		}
		manifest, err := yaml.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		deleteLater(e, mc, name)
		kubectlApply(e, string(manifest))
		_, windowed := spec["window"]
		m, seen := waitFor(e, mc, name, "its end", func(m *mntv1.Maintenance) bool {
			return m.Status.Phase.Done() || (windowed && m.Status.Phase == mntv1.PhaseScheduled)
		})
		t.Logf("%s: maintenance/%s: phases %v, nodes %s, message %q", ex.where, name, seen, nodeStates(m), m.Status.Message)
		switch {
		case !hasString(m.Finalizers, maintenance.Finalizer):
			t.Errorf("%s: finalizers %v, want %s", ex.where, m.Finalizers, maintenance.Finalizer)
		case m.Status.Phase == mntv1.PhaseScheduled && m.Status.NextStart == nil:
			t.Errorf("%s: Scheduled without a nextStart: %+v", ex.where, m.Status)
		case m.Status.Phase != mntv1.PhaseSucceeded && m.Status.Phase != mntv1.PhaseScheduled:
			t.Errorf("%s: phase %s (%s), want Succeeded", ex.where, m.Status.Phase, m.Status.Message)
		}
		specUntouched(e, mc, name, map[string]bool{"drain": spec["drain"] != nil, "policy": spec["policy"] != nil})
		// The next example finds its nodes as this one found them: the object gone, the
		// nodes uncordoned.
		if err := mc.Delete(e.Ctx, m); err != nil {
			t.Fatal(err)
		}
		waitGone(e, mc, name)
		if len(nodes) > 0 {
			if r := e.Run(append([]string{"uncordon"}, nodes...)...); r.Code != 0 {
				t.Fatalf("%s: uncordon: exit %d", ex.where, r.Code)
			}
		}
	}
}

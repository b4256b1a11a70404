package pooltest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

// TestApplySeveralDocumentsAndSayWhatChanged applies a file of two pools, then a
// directory with one changed and one the same, then stdin; each pool is reported as the
// API server kept it. A bad document anywhere changes nothing.
func TestApplySeveralDocumentsAndSayWhatChanged(t *testing.T) {
	e := newEnv(t)
	blue, green := e.NS+"-blue", e.NS+"-green"
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	both := write("both.yaml", poolYAML(blue, "v1", "one", "")+"---\n"+poolYAML(green, "v1", "one", ""))
	r := e.Run("pool", "apply", "-f", both)
	fixture.MustContain(t, "first apply", r.Stdout, blue+" created", green+" created")

	sub := filepath.Join(dir, "pools")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	_ = write("pools/a-blue.yaml", poolYAML(blue, "v2", "one", ""))
	_ = write("pools/b-green.yml", poolYAML(green, "v1", "one", ""))
	_ = write("pools/notes.txt", "not a pool")
	r = e.Run("pool", "apply", "-f", sub)
	fixture.MustContain(t, "directory apply", r.Stdout, blue+" configured", green+" unchanged")
	if r.Code != 0 {
		t.Fatalf("directory apply exit %d: %s", r.Code, r.Stderr)
	}

	// One bad document (an unknown field) among good ones: exit 2, nothing applied.
	bad := write("bad.yaml", poolYAML(blue, "v3", "one", "")+"---\n"+strings.Replace(poolYAML(green, "v9", "one", ""), "spec:", "spec:\n  maxUnavailabel: 1", 1))
	r = e.Run("pool", "apply", "-f", bad)
	if r.Code != 2 || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 || !strings.Contains(r.Stderr, "document 2") {
		t.Errorf("a bad document: exit %d, stderr %q; want exit 2 and one line naming document 2", r.Code, r.Stderr)
	}
	r = e.Run("pool", "get", blue, "-o", "jsonpath={.spec.labels.example\\.com/tier}")
	if r.Stdout != "v2" {
		t.Errorf("after the refused apply the blue pool's label is %q, want v2 (unchanged)", r.Stdout)
	}
}

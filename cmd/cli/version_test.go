package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/buildinfo"
)

func TestVersionClientOutputs(t *testing.T) {
	want := buildinfo.Client(version, commit, date)
	t.Run("json", func(t *testing.T) {
		out, errOut, code := run("version", "--client", "-o", "json")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var doc buildinfo.Document
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, out)
		}
		if doc.ClientVersion != want || doc.ServerVersion != nil {
			t.Errorf("got %+v, want client %+v and no server", doc, want)
		}
	})
	t.Run("yaml", func(t *testing.T) {
		out, errOut, code := run("version", "--client", "-o", "yaml")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var doc buildinfo.Document
		if err := yaml.UnmarshalStrict([]byte(out), &doc); err != nil {
			t.Fatalf("not YAML: %v\n%s", err, out)
		}
		if doc.ClientVersion != want {
			t.Errorf("got %+v, want %+v", doc.ClientVersion, want)
		}
	})
	t.Run("text", func(t *testing.T) {
		out, errOut, code := run("version", "--client")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		if !strings.HasPrefix(out, "Client Version: "+want.Version+" (commit "+want.Commit) || strings.Count(out, "\n") != 1 {
			t.Errorf("got %q", out)
		}
	})
	t.Run("an unknown format is a usage error", func(t *testing.T) {
		_, errOut, code := run("version", "--client", "-o", "wide")
		if code != ExitUsage || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "json or yaml") {
			t.Errorf("exit %d, stderr %q", code, errOut)
		}
	})
}

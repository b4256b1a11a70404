// Package freshtest checks that the project's own set-up works on a machine that has
// never built it: the pinned tools build from an empty Go module cache and an empty tool
// cache, as `make demo` and `make test` do on a fresh clone.
package freshtest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The patched kwok (the one tool hack/build-tools.sh copies out of the module cache)
// builds with an empty GOMODCACHE and an empty KM_TOOLS_DIR: the script asks Go to
// download the module and say where it is (a `go list -m` on an empty cache printed
// nothing and the copy failed with "cp: cannot stat ”"). The other binaries are linked
// from the machine's tool cache so that the test builds kwok alone (a few minutes).
func TestToolsBuildFromAnEmptyModuleCache(t *testing.T) {
	if testing.Short() {
		t.Skip("builds kwok from the module proxy: minutes")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(root, "hack", "build-tools.sh")
	out, err := exec.Command(script).Output() // the machine's tools (make test built them)
	if err != nil {
		t.Fatalf("%s: %v", script, err)
	}
	machine := strings.TrimSpace(string(out))
	tools := t.TempDir()
	for _, b := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl"} {
		if err := os.Symlink(filepath.Join(machine, b), filepath.Join(tools, b)); err != nil {
			t.Fatal(err)
		}
	}
	modcache := t.TempDir()
	cmd := exec.Command(script)
	// -modcacherw: the module cache's files are read-only otherwise, and the test's
	// temporary directory could not be removed.
	cmd.Env = append(os.Environ(), "GOMODCACHE="+modcache, "KM_TOOLS_DIR="+tools, "GOFLAGS=-modcacherw")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	began := time.Now()
	out, err = cmd.Output()
	t.Logf("build-tools.sh with an empty module cache: %s\n%s", time.Since(began).Round(time.Second), tail(stderr.String(), 2000))
	if err != nil {
		t.Fatalf("build-tools.sh: %v", err)
	}
	if got := strings.TrimSpace(string(out)); got != tools {
		t.Errorf("build-tools.sh printed %q, want the tool directory %q", got, tools)
	}
	if entries, _ := os.ReadDir(modcache); len(entries) == 0 {
		t.Errorf("the empty module cache is still empty: the build did not download (GOMODCACHE not honoured)")
	}
	ver, err := exec.Command(filepath.Join(tools, "kwok"), "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("kwok --version: %v\n%s", err, ver)
	}
	if !strings.Contains(string(ver), "0.8.0") {
		t.Errorf("kwok --version: %q, want v0.8.0", ver)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

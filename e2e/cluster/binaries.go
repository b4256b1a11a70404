package cluster

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// Binaries returns the directory of the pinned component binaries: $KM_TOOLS_DIR when set,
// else the per-machine cache filled by hack/build-tools.sh (which it runs; the first run
// builds everything from the Go module proxy, later runs return at once).
func Binaries(ctx context.Context) (string, error) {
	if d := os.Getenv("KM_TOOLS_DIR"); d != "" {
		if _, err := os.Stat(filepath.Join(d, "kube-apiserver")); err == nil {
			return d, nil
		}
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(root, "hack", "build-tools.sh"))
	cmd.Stdout = &out
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build control-plane binaries (hack/build-tools.sh): %w\n%s", err, errb.String())
	}
	return strings.TrimSpace(out.String()), nil
}

// RepoRoot finds the project's root: the nearest directory above the working directory
// holding hack/build-tools.sh, else the one above this source file.
func RepoRoot() (string, error) {
	if wd, err := os.Getwd(); err == nil {
		for d := wd; ; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "hack", "build-tools.sh")); err == nil {
				return d, nil
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	if _, file, _, ok := runtime.Caller(0); ok {
		d := filepath.Join(filepath.Dir(file), "..", "..")
		if _, err := os.Stat(filepath.Join(d, "hack", "build-tools.sh")); err == nil {
			return filepath.Clean(d), nil
		}
	}
	return "", fmt.Errorf("find the project root (hack/build-tools.sh) from the working directory")
}

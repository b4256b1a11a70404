// Command gendocs writes the generated reference under docs/reference from the code, so
// that the reference cannot drift from it: one Markdown page per command of "kubectl
// maintenance" (cobra's doc generator over the real command tree), the exit codes (from
// the table the root command's --help prints), the NDJSON event types (from the
// constants of package event), the Prometheus metrics (metrics.Catalog) and the API (the
// CRDs' schema: api.md). `make docs`
// runs it; hack/verify-docs.sh runs it into a temporary directory and compares.
//
// The output is deterministic: no generation date, no value of the machine it runs on
// (the one flag default that depends on $HOME is written as $HOME).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kubectl-maintenance/kubectl-maintenance/config/crd"
)

func main() {
	out := flag.String("out", "docs/reference", "directory to write the reference into (its commands/ is replaced)")
	root := flag.String("root", ".", "the repository's root (package event's source is read from ROOT/event)")
	flag.Parse()
	if err := run(*root, *out); err != nil {
		fmt.Fprintf(os.Stderr, "gendocs: %v\n", err)
		os.Exit(1)
	}
}

// run writes the whole reference into out.
func run(root, out string) error {
	cmds := filepath.Join(out, "commands")
	if err := os.RemoveAll(cmds); err != nil {
		return fmt.Errorf("clear %s: %w", cmds, err)
	}
	if err := os.MkdirAll(cmds, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", cmds, err)
	}
	if err := writeCommands(cmds); err != nil {
		return err
	}
	exit, err := exitCodesPage()
	if err != nil {
		return err
	}
	if err := writeFile(filepath.Join(out, "exit-codes.md"), exit); err != nil {
		return err
	}
	events, err := eventsPage(filepath.Join(root, "event"))
	if err != nil {
		return err
	}
	if err := writeFile(filepath.Join(out, "metrics.md"), metricsPage()); err != nil {
		return err
	}
	api, err := apiPage(crd.All())
	if err != nil {
		return err
	}
	if err := writeFile(filepath.Join(out, "api.md"), api); err != nil {
		return err
	}
	return writeFile(filepath.Join(out, "events.md"), events)
}

func writeFile(path string, content []byte) error {
	if err := os.WriteFile(path, content, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

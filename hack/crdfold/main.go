// Command crdfold folds the line breaks controller-gen keeps from Go comments out of a
// CRD's descriptions, in place: `kubectl explain` wraps a description itself, so a Go
// comment's break left in it cut sentences in the middle of a line. A blank line (a new
// paragraph) stays. hack/generate.sh runs it on config/crd/bases after controller-gen.
package main

import (
	"fmt"
	"os"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"
)

func main() {
	for _, path := range os.Args[1:] {
		if err := fold(path); err != nil {
			fmt.Fprintf(os.Stderr, "crdfold: %v\n", err)
			os.Exit(1)
		}
	}
}

func fold(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return fmt.Errorf("decode %s: %w", path, err)
	}
	walk(doc)
	out, err := yaml.Marshal(doc)
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	if err := os.WriteFile(path, append([]byte("---\n"), out...), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// walk folds every "description" string under v.
func walk(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && k == "description" {
				x[k] = Fold(s)
				continue
			}
			walk(e)
		}
	case []any:
		for _, e := range x {
			walk(e)
		}
	}
}

var lineBreak = regexp.MustCompile(`([^\n])\n([^\n])`)

// Fold joins the lines of each paragraph of s with a space.
func Fold(s string) string {
	return strings.TrimSpace(lineBreak.ReplaceAllString(lineBreak.ReplaceAllString(s, "$1 $2"), "$1 $2"))
}

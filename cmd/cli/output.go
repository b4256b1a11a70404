package cli

import (
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/printflags"
)

// OutputFlags are kubectl's output flags (-o, --no-headers, --template): package
// printflags.
type OutputFlags = printflags.Flags

// NewOutputFlags returns the flags; table is false for a command whose default output
// is not a table.
func NewOutputFlags(table bool) *OutputFlags { return printflags.New(table) }

// asList wraps objects in a v1 List, as kubectl get prints several (printflags.AsList).
func asList(items []runtime.Object, single bool) runtime.Object {
	return printflags.AsList(items, single)
}

// validateListing checks the flags of a command that lists nodes: -o and a label selector
// (--selector), without calling the API.
func validateListing(out *OutputFlags, selector string) error {
	if err := out.Validate(); err != nil {
		return err
	}
	if _, err := labels.Parse(selector); err != nil {
		return UsageErrorf("invalid --selector %q: %v", selector, err)
	}
	return nil
}

package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/kubectl-maintenance/kubectl-maintenance/config/crd"
)

// The API reference is the CRDs' schema: the committed page is what the committed CRDs
// make (make verify-docs checks the same), and a changed field description, a changed
// default or a changed rule changes the page, so that verify-docs fails until it is
// regenerated.
func TestAPIPageFollowsTheCRDs(t *testing.T) {
	got, err := apiPage(crd.All())
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile("../../docs/reference/api.md")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, committed) {
		t.Error("docs/reference/api.md is stale: run make docs")
	}
	cases := []struct{ name, old, new string }{
		{"a field's description", "Reason is free text for people", "Reason is free text for auditors"},
		{"a default", "default: 500", "default: 250"},
		{"a rule's message", "onBlocked must be wait, skip, fail or force", "onBlocked must be one of four"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := string(crd.Maintenances)
			if !strings.Contains(m, tc.old) {
				t.Fatalf("the Maintenance CRD has no %q", tc.old)
			}
			changed, err := apiPage([][]byte{crd.NodePools, []byte(strings.Replace(m, tc.old, tc.new, 1))})
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Equal(changed, got) {
				t.Fatalf("the page did not change with %s", tc.name)
			}
			want := strings.TrimPrefix(tc.new, "default: ")
			if !strings.Contains(string(changed), want) {
				t.Errorf("the page does not say %q", want)
			}
		})
	}
}

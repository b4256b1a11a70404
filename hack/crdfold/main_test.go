package main

import "testing"

func TestFold(t *testing.T) {
	cases := map[string]struct{ in, want string }{
		"a Go comment's breaks":  {"Phase is where a Maintenance is. While the run goes on: Pending (not\nstarted), Running.", "Phase is where a Maintenance is. While the run goes on: Pending (not started), Running."},
		"a paragraph break kept": {"First line\nsecond.\n\nNext paragraph\nhere.", "First line second.\n\nNext paragraph here."},
		"one-letter lines":       {"a\nb\nc", "a b c"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Fold(tc.in); got != tc.want {
				t.Errorf("Fold(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

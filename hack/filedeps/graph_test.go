package main

import (
	"testing"
)

func TestCount(t *testing.T) {
	tests := []struct {
		name       string
		edges      [][3]string
		up, mutual int
	}{
		{"a chain has none", [][3]string{{"a.go", "b.go", "f"}, {"b.go", "c.go", "g"}}, 0, 0},
		{"a pair has one", [][3]string{{"a.go", "b.go", "f"}, {"b.go", "a.go", "g"}}, 1, 1},
		{"a ring of three has one", [][3]string{{"a.go", "b.go", "f"}, {"b.go", "c.go", "g"}, {"c.go", "a.go", "h"}}, 1, 0},
		{"two pairs have two", [][3]string{{"a.go", "b.go", "f"}, {"b.go", "a.go", "g"}, {"c.go", "d.go", "f"}, {"d.go", "c.go", "g"}}, 2, 2},
		{"a file's own names count nothing", [][3]string{{"a.go", "a.go", "f"}}, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := Graph{}
			for _, e := range tc.edges {
				g.Add(e[0], e[1], e[2])
			}
			r := Count(g)
			if len(r.Up) != tc.up || r.Mutual != tc.mutual {
				t.Errorf("up %d (%v), mutual %d; want %d, %d", len(r.Up), r.Up, r.Mutual, tc.up, tc.mutual)
			}
		})
	}
}

// TestDrainHasNoUpwardReference holds drain/'s files in layers (doc.go, "Files and
// layers"): a reference from a file to one above it fails the test and names it.
func TestDrainHasNoUpwardReference(t *testing.T) {
	if testing.Short() {
		t.Skip("loads and type-checks drain/")
	}
	g, err := Load("../../drain")
	if err != nil {
		t.Fatal(err)
	}
	r := Count(g)
	t.Logf("drain/: %d files, %d references, %d upward", len(r.Order), r.Edges, len(r.Up))
	if r.Edges < 100 {
		t.Fatalf("only %d references: the package was not read", r.Edges)
	}
	for _, e := range r.Up {
		t.Errorf("%s uses %s, which is above it: %v", e.From, e.To, e.Names)
	}
}

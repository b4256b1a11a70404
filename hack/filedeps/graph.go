// Command filedeps counts the file-to-file references inside one Go package and the ones
// that point up: file A references file B when an identifier used in A resolves (go/types)
// to a package-level declaration, method or field declared in B. Upward references are
// the back edges of an order of the files found by the Eades–Lin–Smyth greedy heuristic
// (an approximate minimum feedback arc set): in a package whose files form layers there
// are none. Issue 43 asked for fewer than 30 in drain/; make test holds drain/ at 0.
//
//	go run ./hack/filedeps [-max N] [-v] DIR
package main

import (
	"fmt"
	"sort"
)

// Edge is a reference from file From to file To, with the names behind it.
type Edge struct {
	From, To string
	Names    []string
}

// Graph is the set of file-to-file references of one package.
type Graph map[[2]string]map[string]bool

// Add records that from uses name, declared in to.
func (g Graph) Add(from, to, name string) {
	if from == to {
		return
	}
	k := [2]string{from, to}
	if g[k] == nil {
		g[k] = map[string]bool{}
	}
	g[k][name] = true
}

// Report is what Count finds: the files in layer order (users first), every edge, the
// ones that point up, and the pairs of files that use each other.
type Report struct {
	Order  []string
	Edges  int
	Up     []Edge
	Mutual int
}

// Count orders the files of g and returns its upward references.
func Count(g Graph) Report {
	nodes := map[string]bool{}
	out, in := map[string]map[string]bool{}, map[string]map[string]bool{}
	for k := range g {
		a, b := k[0], k[1]
		nodes[a], nodes[b] = true, true
		if out[a] == nil {
			out[a] = map[string]bool{}
		}
		if in[b] == nil {
			in[b] = map[string]bool{}
		}
		out[a][b], in[b][a] = true, true
	}
	mutual := 0
	for k := range g {
		if _, ok := g[[2]string{k[1], k[0]}]; ok && k[0] < k[1] {
			mutual++
		}
	}
	live := map[string]bool{}
	for n := range nodes {
		live[n] = true
	}
	deg := func(n string) (din, dout int) {
		for m := range out[n] {
			if live[m] {
				dout++
			}
		}
		for m := range in[n] {
			if live[m] {
				din++
			}
		}
		return din, dout
	}
	sorted := func() []string {
		s := make([]string, 0, len(live))
		for n := range live {
			s = append(s, n)
		}
		sort.Strings(s)
		return s
	}
	var left, right []string
	for len(live) > 0 {
		for changed := true; changed; {
			changed = false
			for _, n := range sorted() {
				din, dout := deg(n)
				switch {
				case dout == 0:
					right = append([]string{n}, right...)
				case din == 0:
					left = append(left, n)
				default:
					continue
				}
				delete(live, n)
				changed = true
			}
		}
		if len(live) == 0 {
			break
		}
		best, bd := "", -1<<30
		for _, n := range sorted() {
			din, dout := deg(n)
			if dout-din > bd {
				best, bd = n, dout-din
			}
		}
		left = append(left, best)
		delete(live, best)
	}
	order := append(left, right...)
	pos := map[string]int{}
	for i, n := range order {
		pos[n] = i
	}
	r := Report{Order: order, Edges: len(g), Mutual: mutual}
	for k, names := range g {
		if pos[k[0]] > pos[k[1]] {
			e := Edge{From: k[0], To: k[1]}
			for n := range names {
				e.Names = append(e.Names, n)
			}
			sort.Strings(e.Names)
			r.Up = append(r.Up, e)
		}
	}
	sort.Slice(r.Up, func(i, j int) bool {
		return fmt.Sprint(r.Up[i].From, r.Up[i].To) < fmt.Sprint(r.Up[j].From, r.Up[j].To)
	})
	return r
}

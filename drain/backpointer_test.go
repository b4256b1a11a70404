package drain

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// runHolders returns "Type.field" for every field of a struct type other than run, in
// the files parsed, whose type is *run, also inside a pointer, slice, array, map or
// channel type (issue 43: no part holds the run; each reaches it through a narrow
// interface handed to its constructor).
func runHolders(files []*ast.File) []string {
	var out []string
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok || ts.Name.Name == "run" {
				return true
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				return true
			}
			for _, fld := range st.Fields.List {
				if !holdsRun(fld.Type) {
					continue
				}
				names := []string{"(embedded)"}
				if len(fld.Names) > 0 {
					names = names[:0]
					for _, id := range fld.Names {
						names = append(names, id.Name)
					}
				}
				for _, name := range names {
					out = append(out, ts.Name.Name+"."+name)
				}
			}
			return true
		})
	}
	sort.Strings(out)
	return out
}

// holdsRun reports whether t is *run or a type built of it.
func holdsRun(t ast.Expr) bool {
	switch t := t.(type) {
	case *ast.StarExpr:
		if id, ok := t.X.(*ast.Ident); ok && id.Name == "run" {
			return true
		}
		return holdsRun(t.X)
	case *ast.ArrayType:
		return holdsRun(t.Elt)
	case *ast.MapType:
		return holdsRun(t.Key) || holdsRun(t.Value)
	case *ast.ChanType:
		return holdsRun(t.Value)
	case *ast.ParenExpr:
		return holdsRun(t.X)
	}
	return false
}

func TestRunHoldersFinds(t *testing.T) {
	for name, tc := range map[string]struct {
		src  string
		want []string
	}{
		"a pointer field":             {"type a struct{ r *run }", []string{"a.r"}},
		"two names in one field":      {"type a struct{ r, s *run }", []string{"a.r", "a.s"}},
		"embedded":                    {"type a struct{ *run }", []string{"a.(embedded)"}},
		"in a slice":                  {"type a struct{ rs []*run }", []string{"a.rs"}},
		"in a map value":              {"type a struct{ m map[string]*run }", []string{"a.m"}},
		"in a map key":                {"type a struct{ m map[*run]bool }", []string{"a.m"}},
		"behind a pointer":            {"type a struct{ p **run }", []string{"a.p"}},
		"in an array of slices":       {"type a struct{ p [2][]*run }", []string{"a.p"}},
		"in a channel":                {"type a struct{ c chan *run }", []string{"a.c"}},
		"run itself may":              {"type run struct{ parent *run }", nil},
		"an interface is fine":        {"type a struct{ r runFace }", nil},
		"a value of another type":     {"type a struct{ r *runner; s run2 }", nil},
		"a struct in a function body": {"func f() { type a struct{ r *run }; _ = a{} }", []string{"a.r"}},
	} {
		t.Run(name, func(t *testing.T) {
			f, err := parser.ParseFile(token.NewFileSet(), "x.go", "package drain\n"+tc.src, 0)
			if err != nil {
				t.Fatal(err)
			}
			if got := runHolders([]*ast.File{f}); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestNoPartHoldsTheRun(t *testing.T) {
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if got := runHolders(files); len(got) != 0 {
		t.Errorf("types other than run holding a *run: %q; a part reaches the run through a narrow interface the run implements (face.go)", got)
	}
}

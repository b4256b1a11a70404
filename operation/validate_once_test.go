package operation

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const drainPkg = "github.com/kubectl-maintenance/kubectl-maintenance/drain"

// The settings are validated once per front end and only asserted at the engines' door:
// in the product's code (tests aside) drain.Settings.Validate is called once by the CLI
// (DrainOptions.Validate, which drain, plan, pool move and pool sync share, before the
// request is made) and once by the controller (maintenance.Request, after
// SettingsFromSpec); drain.Config.Validate by no one; AssertValid only at the doors
// (drain.NewEngine, and this layer's check for a cordon or an uncordon). Read from the
// type-checked code, so a second call anywhere fails here.
func TestSettingsValidateOncePerFrontEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks the module's packages that use drain")
	}
	calls := settingsCalls(t)
	for fn, sites := range calls {
		t.Logf("%s: %d call(s): %s", fn, len(sites), strings.Join(sites, "; "))
	}
	want := map[string][]string{
		"(" + drainPkg + ".Settings).Validate": {
			"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli (*DrainOptions).Validate",
			"github.com/kubectl-maintenance/kubectl-maintenance/maintenance Request",
			drainPkg + " (Config).Validate", // Config.Validate, itself called by no one
		},
		"(" + drainPkg + ".Config).Validate": nil,
		"(" + drainPkg + ".Settings).AssertValid": {
			drainPkg + " NewEngine",
			"github.com/kubectl-maintenance/kubectl-maintenance/operation (*Operator).check",
		},
	}
	for fn, sites := range want {
		got := calls[fn]
		sort.Strings(got)
		sort.Strings(sites)
		if strings.Join(got, "\n") != strings.Join(sites, "\n") {
			t.Errorf("%s is called from\n\t%s\nwant\n\t%s", fn, strings.Join(got, "\n\t"), strings.Join(sites, "\n\t"))
		}
	}
}

// listed is what go list says of a package.
type listed struct {
	ImportPath, Dir, Export string
	GoFiles, Imports        []string
	DepOnly, Standard       bool
}

// settingsCalls type-checks every package of the module that imports drain (its
// non-test files, the imports read from the build cache's export data) and returns,
// for each method of drain.Settings and drain.Config called, where it is called from:
// "package function" per call.
func settingsCalls(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-export", "-deps", "-json=ImportPath,Dir,Export,GoFiles,Imports,DepOnly,Standard", "./...")
	cmd.Dir = ".."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v: %s", err, stderr.String())
	}
	exports := map[string]string{}
	var targets []listed
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		exports[p.ImportPath] = p.Export
		if !p.DepOnly && !p.Standard && (p.ImportPath == drainPkg || contains(p.Imports, drainPkg)) {
			targets = append(targets, p)
		}
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		if exports[path] == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(exports[path])
	})
	calls := map[string][]string{}
	for _, p := range targets {
		var files []*ast.File
		for _, name := range p.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
		if _, err := (&types.Config{Importer: imp}).Check(p.ImportPath, fset, files, info); err != nil {
			t.Fatalf("type-check %s: %v", p.ImportPath, err)
		}
		for _, f := range files {
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Body == nil {
					continue
				}
				ast.Inspect(fd.Body, func(n ast.Node) bool {
					sel, ok := n.(*ast.SelectorExpr)
					if !ok {
						return true
					}
					fn, ok := info.Uses[sel.Sel].(*types.Func)
					if !ok || fn.Pkg() == nil || fn.Pkg().Path() != drainPkg {
						return true
					}
					switch name := fn.FullName(); name {
					case "(" + drainPkg + ".Settings).Validate", "(" + drainPkg + ".Config).Validate", "(" + drainPkg + ".Settings).AssertValid":
						calls[name] = append(calls[name], p.ImportPath+" "+funcName(fd))
					}
					return true
				})
			}
		}
	}
	return calls
}

// funcName is "Name", "(T).Name" or "(*T).Name".
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	recv := fd.Recv.List[0].Type
	star := ""
	if s, ok := recv.(*ast.StarExpr); ok {
		star, recv = "*", s.X
	}
	if id, ok := recv.(*ast.Ident); ok {
		return "(" + star + id.Name + ")." + fd.Name.Name
	}
	return fd.Name.Name
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

package main

import (
	"flag"
	"fmt"
	"go/types"
	"os"
	"path/filepath"

	"golang.org/x/tools/go/packages"
)

func main() {
	maxUp := flag.Int("max", -1, "exit 1 when more references than this point up (-1: never)")
	verbose := flag.Bool("v", false, "print the order and every upward reference with its names")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: filedeps [-max N] [-v] DIR")
		os.Exit(2)
	}
	g, err := Load(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "filedeps:", err)
		os.Exit(1)
	}
	r := Count(g)
	fmt.Printf("files %d, references %d, upward %d, pairs of files using each other %d\n", len(r.Order), r.Edges, len(r.Up), r.Mutual)
	if *verbose {
		fmt.Println("order (users first):", r.Order)
		for _, e := range r.Up {
			fmt.Printf("up: %s -> %s %v\n", e.From, e.To, e.Names)
		}
	}
	if *maxUp >= 0 && len(r.Up) > *maxUp {
		os.Exit(1)
	}
}

// Load reads the package in dir (its non-test files) and returns its file references.
func Load(dir string) (Graph, error) {
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo, Dir: dir}
	pkgs, err := packages.Load(cfg, ".")
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", dir, err)
	}
	if len(pkgs) != 1 {
		return nil, fmt.Errorf("load %s: %d packages, want 1", dir, len(pkgs))
	}
	p := pkgs[0]
	if len(p.Errors) > 0 {
		return nil, fmt.Errorf("load %s: %v", dir, p.Errors[0])
	}
	g := Graph{}
	for id, obj := range p.TypesInfo.Uses {
		if obj == nil || obj.Pkg() != p.Types {
			continue
		}
		if obj.Parent() != nil && obj.Parent() != p.Types.Scope() {
			continue // a local
		}
		if _, ok := obj.(*types.PkgName); ok {
			continue
		}
		g.Add(filepath.Base(p.Fset.Position(id.Pos()).Filename), filepath.Base(p.Fset.Position(obj.Pos()).Filename), id.Name)
	}
	return g, nil
}

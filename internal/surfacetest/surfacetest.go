// Package surfacetest lists a package's exported identifiers, so that a
// package's test can hold them to a list: adding an export then means
// adding it to the list, a deliberate act. Libraries never import it.
package surfacetest

import (
	"go/ast"
	"go/build"
	"go/doc"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"testing"
)

// Exported gives, sorted, every exported identifier of the package in dir
// (outside its tests): its constants, variables, functions, types and
// their methods, a method as "Type.Method".
func Exported(t testing.TB, dir string) []string {
	t.Helper()
	pkg, err := build.ImportDir(dir, 0)
	if err != nil {
		t.Fatalf("read package %s: %v", dir, err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range pkg.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(pkg.Dir, name), nil, parser.ParseComments)
		if err != nil {
			t.Fatalf("parse %s: %v", name, err)
		}
		files = append(files, f)
	}
	p, err := doc.NewFromFiles(fset, files, pkg.ImportPath)
	if err != nil {
		t.Fatalf("read the documentation of %s: %v", dir, err)
	}
	var got []string
	values := func(vs []*doc.Value) {
		for _, v := range vs {
			got = append(got, v.Names...)
		}
	}
	funcs := func(recv string, fs []*doc.Func) {
		for _, f := range fs {
			got = append(got, recv+f.Name)
		}
	}
	values(p.Consts)
	values(p.Vars)
	funcs("", p.Funcs)
	for _, ty := range p.Types {
		got = append(got, ty.Name)
		values(ty.Consts)
		values(ty.Vars)
		funcs("", ty.Funcs)
		funcs(ty.Name+".", ty.Methods)
	}
	slices.Sort(got)
	return got
}

package provider

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// maxAdapterFuncLines is the longest an adapter function may be, counted
// from its func line to its closing brace (issue 43: "no adapter function
// over 100 lines apart from schemas"). A longer one mixes steps: split it
// along them, and move a decision about Flink or the operator into a domain
// package.
const maxAdapterFuncLines = 100

// No function or method of the package's non-test code is longer than
// maxAdapterFuncLines, except the Schema methods, which are declarations.
func TestAdapterFunctionsAreShort(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var long []string
	funcs := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			funcs++
			if fn.Name.Name == "Schema" {
				continue
			}
			lines := fset.Position(fn.End()).Line - fset.Position(fn.Type.Func).Line + 1
			if lines > maxAdapterFuncLines {
				long = append(long, fmt.Sprintf("%s: %d lines", funcLabel(fset, fn), lines))
			}
		}
	}
	if funcs < 100 {
		t.Fatalf("found only %d functions in the package: the scan is broken", funcs)
	}
	sort.Strings(long)
	for _, l := range long {
		t.Errorf("%s (at most %d apart from Schema): split it along its steps, moving decisions about Flink or the operator into a domain package",
			l, maxAdapterFuncLines)
	}
}

// funcLabel names a function as file:line (*recv).Name.
func funcLabel(fset *token.FileSet, fn *ast.FuncDecl) string {
	name := fn.Name.Name
	if fn.Recv != nil && len(fn.Recv.List) == 1 {
		recv := fn.Recv.List[0].Type
		star := ""
		if s, ok := recv.(*ast.StarExpr); ok {
			star, recv = "*", s.X
		}
		if id, ok := recv.(*ast.Ident); ok {
			name = "(" + star + id.Name + ")." + name
		}
	}
	p := fset.Position(fn.Type.Func)
	return fmt.Sprintf("%s:%d %s", p.Filename, p.Line, name)
}

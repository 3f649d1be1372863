package docgen

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Timeouts reads each resource's default timeouts from the code: the
// duration passed to timeouts.Value's Create/Read/Update/Delete(ctx,
// default) in internal/provider/resource_<name>.go and in the files of
// its parts, resource_<name>_<part>.go (resourceOf), constants resolved
// from the package.
func Timeouts(root string) (map[string]map[string]time.Duration, error) {
	dir := filepath.Join(root, "internal/provider")
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	consts := map[string]ast.Expr{}
	parsed := map[string]*ast.File{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
		if err != nil {
			return nil, err
		}
		parsed[f] = file
		for n, v := range stringVars(file) {
			if _, ok := consts[n]; !ok {
				consts[n] = v
			}
		}
	}
	out := map[string]map[string]time.Duration{}
	for f, file := range parsed {
		base := filepath.Base(f)
		if !strings.HasPrefix(base, "resource_") {
			continue
		}
		resource := "flinkstate_" + resourceOf(strings.TrimSuffix(strings.TrimPrefix(base, "resource_"), ".go"), parsed, dir)
		var ferr error
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) != 2 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			recv, ok := sel.X.(*ast.SelectorExpr)
			if !ok || recv.Sel.Name != "Timeouts" {
				return true
			}
			op := strings.ToLower(sel.Sel.Name)
			d, err := duration(call.Args[1], consts, 0)
			if err != nil {
				ferr = fmt.Errorf("%s: default of Timeouts.%s: %w", base, sel.Sel.Name, err)
				return false
			}
			if out[resource] == nil {
				out[resource] = map[string]time.Duration{}
			}
			if prev, ok := out[resource][op]; ok && prev != d {
				ferr = fmt.Errorf("%s: two defaults for %s: %s and %s", base, op, prev, d)
				return false
			}
			out[resource][op] = d
			return true
		})
		if ferr != nil {
			return nil, ferr
		}
	}
	return out, nil
}

// resourceOf is the resource a file resource_<name>.go belongs to: name,
// for a file that declares a resource (its Metadata method); for a part,
// the resource whose file name is the longest prefix of name.
func resourceOf(name string, files map[string]*ast.File, dir string) string {
	if f := files[filepath.Join(dir, "resource_"+name+".go")]; f == nil || declaresResource(f) {
		return name
	}
	for cut := strings.LastIndex(name, "_"); cut > 0; cut = strings.LastIndex(name[:cut], "_") {
		if _, ok := files[filepath.Join(dir, "resource_"+name[:cut]+".go")]; ok {
			return name[:cut]
		}
	}
	return name
}

// declaresResource: the file has a Metadata method.
func declaresResource(f *ast.File) bool {
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv != nil && fn.Name.Name == "Metadata" {
			return true
		}
	}
	return false
}

// duration evaluates N*time.Unit, time.Unit, or a constant holding one.
func duration(x ast.Expr, consts map[string]ast.Expr, depth int) (time.Duration, error) {
	if depth > 4 {
		return 0, fmt.Errorf("too deep")
	}
	switch x := x.(type) {
	case *ast.ParenExpr:
		return duration(x.X, consts, depth+1)
	case *ast.Ident:
		if v, ok := consts[x.Name]; ok {
			return duration(v, consts, depth+1)
		}
	case *ast.SelectorExpr:
		if pkg, ok := x.X.(*ast.Ident); ok && pkg.Name == "time" {
			switch x.Sel.Name {
			case "Second":
				return time.Second, nil
			case "Minute":
				return time.Minute, nil
			case "Hour":
				return time.Hour, nil
			}
		}
	case *ast.BasicLit:
		if x.Kind == token.INT {
			n, err := strconv.Atoi(x.Value)
			return time.Duration(n), err
		}
	case *ast.BinaryExpr:
		if x.Op == token.MUL {
			a, err := duration(x.X, consts, depth+1)
			if err != nil {
				return 0, err
			}
			b, err := duration(x.Y, consts, depth+1)
			// A constant expression such as 10 * time.Minute: one side is
			// a plain count, so the product is a duration.
			return time.Duration(int64(a) * int64(b)), err
		}
	}
	return 0, fmt.Errorf("cannot evaluate %T", x)
}

func short(d time.Duration) string {
	switch {
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return d.String()
}

// TimeoutTable renders the defaults as the provider page's table.
func TimeoutTable(root string) (string, error) {
	ts, err := Timeouts(root)
	if err != nil {
		return "", err
	}
	if len(ts) == 0 {
		return "", fmt.Errorf("no Timeouts defaults found")
	}
	var names []string
	for n := range ts {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("| resource | create | read | update | delete |\n|---|---|---|---|---|\n")
	for _, n := range names {
		fmt.Fprintf(&b, "| `%s` |", n)
		for _, op := range []string{"create", "read", "update", "delete"} {
			if d, ok := ts[n][op]; ok {
				fmt.Fprintf(&b, " %s |", short(d))
			} else {
				b.WriteString(" |")
			}
		}
		b.WriteString("\n")
	}
	// Every resource has an example directory (tfplugindocs renders its
	// page from it): those with no Timeouts defaults have no timeouts block.
	dirs, err := filepath.Glob(filepath.Join(root, "examples/resources/flinkstate_*"))
	if err != nil {
		return "", err
	}
	var none []string
	for _, d := range dirs {
		if n := filepath.Base(d); ts[n] == nil {
			none = append(none, "`"+n+"`")
		}
	}
	sort.Strings(none)
	if len(none) > 0 {
		fmt.Fprintf(&b, "\nNo `timeouts` block: %s.\n", strings.Join(none, ", "))
	}
	return b.String(), nil
}

// TimeoutsFor renders one resource's Timeouts section: its defaults, or
// that it has no timeouts block.
func TimeoutsFor(resource string) func(root string) (string, error) {
	return func(root string) (string, error) {
		ts, err := Timeouts(root)
		if err != nil {
			return "", err
		}
		t := ts[resource]
		if len(t) == 0 {
			return "This resource has no `timeouts` block.", nil
		}
		var ops []string
		for _, op := range []string{"create", "read", "update", "delete"} {
			if d, ok := t[op]; ok {
				ops = append(ops, fmt.Sprintf("`%s` (default %s)", op, short(d)))
			}
		}
		return "The [`timeouts`](https://developer.hashicorp.com/terraform/language/resources/syntax#operation-timeouts) block sets how long " +
			strings.Join(ops, ", ") + " may take, as durations such as `30s`, `10m` or `1h`.", nil
	}
}

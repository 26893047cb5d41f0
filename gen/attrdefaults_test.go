package gen

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/templates"
)

// kernelDefaultExceptions are kernel attribute reads whose default
// differs from the op table's on purpose ("Op.attr": reason).
var kernelDefaultExceptions = map[string]string{}

// TestKernelAttrDefaults keeps the kernels' attribute defaults and the op
// table's one fact: the defaults are stated in the table (ir/ops_table*.go)
// and restated by each kernel's n.Attrs.Int("x", def) (kernels run on the
// generated Attrs, which hold only the attributes the model sets). A
// source scan of templates/k_*.go follows each registered kernel through
// the functions it calls and checks every such read with a literal default
// against the table's default for that op's attribute (at any version:
// Softmax's axis was 1 before 13). A read of an attribute the op does not
// declare, or declares without a default, is not checked (a helper shared
// by several ops; a kernel's own choice for an absent optional attribute).
//
// A source scan rather than defaults emitted into the generated Attrs:
// it needs no change to generated code or to rt_*.go, and it catches drift
// in both directions (a table edit and a kernel edit).
func TestKernelAttrDefaults(t *testing.T) {
	fset := token.NewFileSet()
	funcs := map[string]*ast.FuncDecl{}
	entries, err := fs.ReadDir(templates.Sources, ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, "k_") || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := fs.ReadFile(templates.Sources, name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Body != nil {
				funcs[fd.Name.Name] = fd
			}
		}
	}
	kernels := registryFuncs(t)
	checked := 0
	var bad []string
	for _, key := range sortedKeys(kernels) {
		domain, op, ok := strings.Cut(key, "::")
		if !ok {
			domain, op = "", key
		}
		schema := ir.LookupOp(domain, op)
		if schema == nil || funcs[kernels[key]] == nil {
			continue
		}
		for _, r := range attrReads(fset, funcs, kernels[key]) {
			defs := tableDefaults(schema, r.name, r.kind)
			if len(defs) == 0 {
				continue
			}
			checked++
			if matchesDefault(r, defs) {
				continue
			}
			if _, ok := kernelDefaultExceptions[key+"."+r.name]; ok {
				continue
			}
			bad = append(bad, fmt.Sprintf("%s: %s reads %s's %q with default %s; the op table says %v", r.pos, kernels[key], key, r.name, r.lit, defs))
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
	t.Logf("checked %d kernel attribute reads against the op table", checked)
	if checked < 100 {
		t.Errorf("checked only %d kernel attribute reads: is the scan still finding n.Attrs.Int calls?", checked)
	}
	for k := range kernelDefaultExceptions {
		if _, ok := kernels[strings.Split(k, ".")[0]]; !ok {
			t.Errorf("stale exception %s", k)
		}
	}
}

type attrRead struct {
	name, lit string
	kind      ir.AttrKind
	pos       token.Position
}

// attrReads returns the X.Attrs.Int/Float/String("name", literal) calls in
// fn and in the templates functions it calls, transitively.
func attrReads(fset *token.FileSet, funcs map[string]*ast.FuncDecl, fn string) []attrRead {
	var out []attrRead
	seen := map[string]bool{}
	var visit func(string)
	visit = func(name string) {
		fd := funcs[name]
		if fd == nil || seen[name] {
			return
		}
		seen[name] = true
		ast.Inspect(fd.Body, func(x ast.Node) bool {
			call, ok := x.(*ast.CallExpr)
			if !ok {
				return true
			}
			if id, ok := call.Fun.(*ast.Ident); ok {
				visit(id.Name)
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || len(call.Args) != 2 {
				return true
			}
			if recv, ok := sel.X.(*ast.SelectorExpr); !ok || recv.Sel.Name != "Attrs" {
				return true
			}
			kind := map[string]ir.AttrKind{"Int": ir.AttrInt, "Float": ir.AttrFloat, "String": ir.AttrString}[sel.Sel.Name]
			name, ok1 := call.Args[0].(*ast.BasicLit)
			lit, ok2 := literal(call.Args[1])
			if kind == 0 || !ok1 || name.Kind != token.STRING || !ok2 {
				return true
			}
			s, _ := strconv.Unquote(name.Value)
			out = append(out, attrRead{name: s, lit: lit, kind: kind, pos: fset.Position(call.Pos())})
			return true
		})
	}
	visit(fn)
	return out
}

// literal returns a constant argument's source text: a basic literal,
// possibly negated.
func literal(e ast.Expr) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		return e.Value, true
	case *ast.UnaryExpr:
		if l, ok := e.X.(*ast.BasicLit); ok && e.Op == token.SUB {
			return "-" + l.Value, true
		}
	case *ast.ParenExpr:
		return literal(e.X)
	}
	return "", false
}

// tableDefaults returns the defaults the table gives attribute name of
// kind in any version of the op.
func tableDefaults(s *ir.OpSchema, name string, kind ir.AttrKind) []any {
	var out []any
	for _, a := range s.Attrs {
		if a.Name == name && a.Kind == kind && a.Default != nil {
			out = append(out, a.Default)
		}
	}
	return out
}

func matchesDefault(r attrRead, defs []any) bool {
	for _, d := range defs {
		switch d := d.(type) {
		case int64:
			if v, err := strconv.ParseInt(r.lit, 0, 64); err == nil && v == d {
				return true
			}
		case float32:
			if v, err := strconv.ParseFloat(r.lit, 32); err == nil && float32(v) == d {
				return true
			}
		case string:
			if v, err := strconv.Unquote(r.lit); err == nil && v == d {
				return true
			}
		}
	}
	return false
}

// registryFuncs maps each key of templates/registry.go's Kernels to the
// name of its function.
func registryFuncs(t *testing.T) map[string]string {
	src, err := fs.ReadFile(templates.Sources, "registry.go")
	if err != nil {
		t.Fatal(err)
	}
	f, err := parser.ParseFile(token.NewFileSet(), "registry.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	ast.Inspect(f, func(x ast.Node) bool {
		kv, ok := x.(*ast.KeyValueExpr)
		if !ok {
			return true
		}
		k, ok1 := kv.Key.(*ast.BasicLit)
		v, ok2 := kv.Value.(*ast.Ident)
		if ok1 && ok2 && k.Kind == token.STRING {
			s, _ := strconv.Unquote(k.Value)
			out[s] = v.Name
		}
		return true
	})
	if len(out) != len(templates.Kernels) {
		t.Fatalf("read %d kernels from registry.go, templates.Kernels has %d", len(out), len(templates.Kernels))
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

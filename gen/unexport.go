package gen

import (
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"go/types"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// runtimeAPI are the exported names of templates/ that stay exported in a
// generated package: what a user (and the harness, and capi/main.go) needs
// besides the generated Model, Session, Input, Output and New. Every other
// exported top-level name of a copied file (kernels, Node, WorkPool...) is
// unexported on copy, so `go doc` of a generated package lists the API and
// nothing else. Constants of type DType stay exported too.
var runtimeAPI = map[string]bool{
	"Tensor": true, "DType": true,
	"Option": true, "SessionOptions": true, "WithThreads": true, "WithProfile": true,
	"WithTrace": true, "WithSpin": true,
	"NodeProfile": true,
	"Sequence":    true, "OptionalValue": true, "NewSequence": true, "NewOptional": true,
	"MapValue": true, "NewMap": true, "MapOf": true, "MapsOf": true, "MapKey": true, "MapElem": true,
	"F16ToF32": true, "F32ToF16": true, "BF16ToF32": true, "F32ToBF16": true,
	"ReadTensor": true, "LoadTensorFile": true,
}

// unexportRuntime renames, in every Go file of a generated package, the
// exported top-level names that the copied templates files declare and
// runtimeAPI does not list: FusedConv becomes fusedConv (or xFusedConv
// when fusedConv is taken). Selectors, struct fields, methods and
// composite-literal keys that name struct fields keep their names.
func unexportRuntime(out map[string][]byte, lib *library, copied []string) error {
	rename := map[string]string{}
	taken := map[string]bool{}
	for _, u := range types.Universe.Names() { // max, min, len, error...
		taken[u] = true
	}
	for _, f := range copied {
		for _, d := range lib.files[f].decls {
			taken[d] = true
		}
	}
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	var names []string
	for name := range out {
		if strings.HasSuffix(name, ".go") {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		f, err := parser.ParseFile(fset, name, out[name], parser.ParseComments)
		if err != nil {
			return fmt.Errorf("gen: parsing generated %s: %v", name, err)
		}
		files[name] = f
		// Every name the package spells anywhere, locals included: a
		// kernel Upsample must not become upsample where a local
		// variable upsample would shadow it.
		ast.Inspect(f, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				taken[id.Name] = true
			}
			return true
		})
	}
	for _, f := range copied {
		src := lib.files[f]
		typed := dtypeConsts(src.file)
		for _, d := range src.decls {
			if !ast.IsExported(d) || runtimeAPI[d] || typed[d] {
				continue
			}
			r, size := utf8.DecodeRuneInString(d)
			to := string(unicode.ToLower(r)) + d[size:]
			if taken[to] || token.IsKeyword(to) { // Range -> range is a keyword
				to = "x" + d
			}
			if taken[to] {
				return fmt.Errorf("gen: cannot unexport %s (templates/%s): %s is taken", d, f, to)
			}
			taken[to] = true
			rename[d] = to
		}
	}
	if len(rename) == 0 {
		return nil
	}
	fields := map[string]bool{} // every struct field name of the package
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			if st, ok := n.(*ast.StructType); ok {
				for _, fl := range st.Fields.List {
					for _, id := range fl.Names {
						fields[id.Name] = true
					}
				}
			}
			return true
		})
	}
	for _, name := range names {
		f := files[name]
		skip := map[*ast.Ident]bool{}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				skip[n.Sel] = true
			case *ast.Field: // struct fields, interface methods, not params' types
				for _, id := range n.Names {
					if fields[id.Name] {
						skip[id] = true
					}
				}
			case *ast.FuncDecl:
				if n.Recv != nil {
					skip[n.Name] = true
				}
			case *ast.KeyValueExpr:
				if id, ok := n.Key.(*ast.Ident); ok && fields[id.Name] {
					skip[id] = true
				}
			}
			return true
		})
		var edits []identEdit
		ast.Inspect(f, func(n ast.Node) bool {
			id, ok := n.(*ast.Ident)
			if !ok || skip[id] {
				return true
			}
			to, ok := rename[id.Name]
			if !ok {
				return true
			}
			// A local declaration shadowing a package-level name keeps
			// its name (and so do its uses).
			if id.Obj != nil && !topLevel(f, id.Obj) {
				return true
			}
			edits = append(edits, identEdit{fset.Position(id.Pos()).Offset, len(id.Name), to})
			return true
		})
		if len(edits) == 0 {
			continue
		}
		sort.Slice(edits, func(i, j int) bool { return edits[i].off < edits[j].off })
		src := out[name]
		var b []byte
		at := 0
		for _, e := range edits {
			b = append(b, src[at:e.off]...)
			b = append(b, e.to...)
			at = e.off + e.n
		}
		b = append(b, src[at:]...)
		formatted, err := format.Source(b)
		if err != nil {
			return fmt.Errorf("gen: %s after unexporting the runtime: %v", name, err)
		}
		out[name] = formatted
	}
	return nil
}

type identEdit struct {
	off, n int
	to     string
}

// declIdents lists the names a top-level declaration declares (not
// methods).
func declIdents(d ast.Decl) []string {
	var out []string
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv == nil {
			out = append(out, d.Name.Name)
		}
	case *ast.GenDecl:
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				out = append(out, s.Name.Name)
			case *ast.ValueSpec:
				for _, n := range s.Names {
					out = append(out, n.Name)
				}
			}
		}
	}
	return out
}

// dtypeConsts returns the constants a file declares with type DType (the
// dtype names users build tensors with).
func dtypeConsts(f *ast.File) map[string]bool {
	out := map[string]bool{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			if t, ok := v.Type.(*ast.Ident); ok && t.Name == "DType" {
				for _, n := range v.Names {
					out[n.Name] = true
				}
			}
		}
	}
	return out
}

// topLevel reports whether a parser object is declared at file scope.
func topLevel(f *ast.File, o *ast.Object) bool {
	return f.Scope != nil && f.Scope.Lookup(o.Name) == o
}

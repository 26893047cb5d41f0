package gen

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"reflect"
	"runtime"
	"sort"
	"strings"

	"github.com/cuvil/cuvil/templates"
)

// source is one file of templates/ as gen sees it.
type source struct {
	name  string
	text  []byte
	file  *ast.File
	decls []string        // top-level identifiers it declares
	types []string        // the types among them
	uses  map[string]bool // identifiers it uses that other files declare
	asm   bool            // declares functions without body (assembly stubs)
	// recvs are the types its methods belong to: a file declaring
	// methods goes wherever the type goes.
	recvs []string
}

// library is the parsed set of copyable template files.
type library struct {
	files   map[string]*source
	defined map[string][]string // identifier -> files declaring it
	methods map[string][]string // type name -> files declaring methods on it
	funcs   map[string]string   // top-level function name -> file
}

// copyable reports whether a templates/ file may go into a generated package.
func copyable(name string) bool {
	return strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") &&
		name != "registry.go" && !strings.HasPrefix(name, "compiler_") && name != "doc.go" &&
		(strings.HasPrefix(name, "rt_") || strings.HasPrefix(name, "k_") || strings.HasPrefix(name, "asm_"))
}

func loadLibrary() (*library, error) {
	entries, err := fs.ReadDir(templates.Sources, ".")
	if err != nil {
		return nil, fmt.Errorf("gen: reading embedded templates: %v", err)
	}
	lib := &library{files: map[string]*source{}, defined: map[string][]string{}, methods: map[string][]string{}, funcs: map[string]string{}}
	fset := token.NewFileSet()
	for _, e := range entries {
		if e.IsDir() || !copyable(e.Name()) {
			continue
		}
		text, err := fs.ReadFile(templates.Sources, e.Name())
		if err != nil {
			return nil, fmt.Errorf("gen: reading templates/%s: %v", e.Name(), err)
		}
		// Object resolution leaves in f.Unresolved exactly the identifiers
		// that the file does not declare itself: package-level names of
		// other files, universe names and imports. Selectors (x.Sel) are
		// never among them, so math.Abs does not pull in a kernel Abs.
		f, err := parser.ParseFile(fset, e.Name(), text, 0)
		if err != nil {
			return nil, fmt.Errorf("gen: parsing templates/%s: %v", e.Name(), err)
		}
		src := &source{name: e.Name(), text: text, file: f, uses: map[string]bool{}}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Name.Name == "init" {
					continue
				}
				if d.Body == nil {
					src.asm = true
				}
				if d.Recv != nil {
					if t := recvType(d.Recv.List[0].Type); t != "" {
						src.recvs = append(src.recvs, t)
					}
					continue
				}
				src.decls = append(src.decls, d.Name.Name)
				lib.funcs[d.Name.Name] = e.Name()
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						src.decls = append(src.decls, s.Name.Name)
						src.types = append(src.types, s.Name.Name)
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.Name != "_" {
								src.decls = append(src.decls, n.Name)
							}
						}
					}
				}
			}
		}
		for _, id := range f.Unresolved {
			src.uses[id.Name] = true
		}
		for _, d := range src.decls {
			lib.defined[d] = append(lib.defined[d], e.Name())
		}
		for _, t := range src.recvs {
			lib.methods[t] = append(lib.methods[t], e.Name())
		}
		lib.files[e.Name()] = src
	}
	return lib, nil
}

// recvType returns the name of a method receiver's type: T in (t T),
// (t *T), (t T[E]), (t *T[E]).
func recvType(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// kernelFunc returns the Go function that implements op in templates (the
// registered function's own name, which is the op's name for ai.onnx ops).
func (lib *library) kernelFunc(key, op string) (string, bool) {
	k, ok := templates.Kernels[key]
	if !ok {
		return "", false
	}
	full := runtime.FuncForPC(reflect.ValueOf(k).Pointer()).Name()
	name := full[strings.LastIndex(full, ".")+1:]
	if _, ok := lib.funcs[name]; ok && !strings.Contains(full, ".func") {
		return name, true
	}
	if _, ok := lib.funcs[op]; ok {
		return op, true
	}
	return "", false
}

// closure returns, sorted, the runtime files plus the files defining the
// given functions and every file they reach through top-level identifiers.
func (lib *library) closure(funcs []string) []string {
	why := lib.closureWhy(funcs)
	out := make([]string, 0, len(why))
	for name := range why {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// closureWhy is closure with, for each file, why it is copied: "runtime",
// "kernel F", or "FILE uses ID" naming the file and identifier that
// reached it first (the chain to follow when a package copies too much).
func (lib *library) closureWhy(funcs []string) map[string]string {
	why := map[string]string{}
	var queue []string
	add := func(name, reason string) {
		if _, ok := why[name]; !ok {
			why[name] = reason
			queue = append(queue, name)
		}
	}
	for name := range lib.files {
		if strings.HasPrefix(name, "rt_") {
			add(name, "runtime")
		}
	}
	for _, f := range funcs {
		if file, ok := lib.funcs[f]; ok {
			add(file, "kernel "+f)
		}
	}
	sort.Strings(queue)
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		uses := make([]string, 0, len(lib.files[name].uses))
		for id := range lib.files[name].uses {
			uses = append(uses, id)
		}
		sort.Strings(uses)
		for _, id := range uses {
			for _, f := range lib.defined[id] {
				add(f, name+" uses "+id)
			}
		}
		for _, t := range lib.files[name].types {
			for _, f := range lib.methods[t] {
				add(f, f+" declares methods of "+name+"'s type "+t)
			}
		}
	}
	return why
}

// declared returns every top-level identifier of the given files.
func (lib *library) declared(files []string) map[string]string {
	out := map[string]string{}
	for _, f := range files {
		for _, d := range lib.files[f].decls {
			out[d] = f
		}
	}
	return out
}

// renamed returns a file's text with its package clause changed to pkg and
// the generated-code header in front.
func (lib *library) renamed(name, pkg, header string) []byte {
	src := lib.files[name]
	fset := token.NewFileSet()
	// Re-parse for positions: the library's FileSet is not kept.
	f, err := parser.ParseFile(fset, name, src.text, parser.PackageClauseOnly)
	if err != nil {
		panic("gen: templates file stopped parsing: " + err.Error())
	}
	start := fset.Position(f.Name.Pos()).Offset
	end := fset.Position(f.Name.End()).Offset
	var b []byte
	b = append(b, header...)
	b = append(b, "\n\n"...)
	b = append(b, src.text[:start]...)
	b = append(b, pkg...)
	b = append(b, src.text[end:]...)
	return b
}

// assembly returns the assembly file that goes with a Go file of assembly
// stubs (asm_x_amd64.go -> asm_x_amd64.s), read from templates.Sources.
func (lib *library) assembly(name string) (string, []byte, error) {
	if !lib.files[name].asm {
		return "", nil, nil
	}
	s := strings.TrimSuffix(name, ".go") + ".s"
	text, err := fs.ReadFile(templates.Sources, s)
	if err != nil {
		return "", nil, fmt.Errorf("gen: templates/%s declares assembly functions but %s is not embedded in templates.Sources", name, s)
	}
	return s, text, nil
}

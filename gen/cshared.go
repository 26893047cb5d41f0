package gen

import (
	"bytes"
	"fmt"
	"go/format"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/template"

	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/templates"

	"golang.org/x/mod/modfile"
)

// capiImportPath is the generated package templates/capi/*.go are
// compiled against; capiPkg stands for the package name in their
// identifiers (PKG_create) and comments.
const (
	capiImportPath = "github.com/cuvil/cuvil/examples/python/mnist"
	capiPkg        = "PKG"
	capiBuildLine  = "//go:build cuvil_capi"
)

// capiTemplate turns templates/capi/name, real Go compiled for one model,
// into the text/template gen renders for any model: the build line becomes
// {{.Header}}, PKG {{.Pkg}}, the example's import path {{.ImportPath}},
// and each block
//
//	//tmpl:begin
//	Go lines for the example model
//	//tmpl:as
//	//template line
//	//tmpl:end
//
// its template lines (each without the indentation and the // before it;
// PKG and the import path are replaced there too). The marker lines may be
// indented, so gofmt leaves the file as it is: a block at the top level has
// a blank line after //tmpl:begin and its template lines inside the
// declaration that ends its Go lines, or the comments would be a doc
// comment gofmt reformats (TestCAPITemplatesGofmt).
func capiTemplate(name string) (string, error) {
	b, err := fs.ReadFile(templates.CAPI, "capi/"+name)
	if err != nil {
		return "", fmt.Errorf("gen: templates/capi/%s is not embedded: %v", name, err)
	}
	lines := strings.Split(string(b), "\n")
	if lines[0] != capiBuildLine {
		return "", fmt.Errorf("gen: templates/capi/%s does not start with %q", name, capiBuildLine)
	}
	lines[0] = "{{.Header}}"
	var out []string
	subst := func(l string) string {
		return strings.ReplaceAll(strings.ReplaceAll(l, capiPkg, "{{.Pkg}}"), capiImportPath, "{{.ImportPath}}")
	}
	marker := func(l string) string { return strings.TrimLeft(l, " \t") }
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if marker(l) != "//tmpl:begin" {
			if strings.HasPrefix(marker(l), "//tmpl:") {
				return "", fmt.Errorf("gen: templates/capi/%s:%d: %s outside a //tmpl:begin block", name, i+1, marker(l))
			}
			out = append(out, subst(l))
			continue
		}
		start := i
		for i++; i < len(lines) && marker(lines[i]) != "//tmpl:as"; i++ {
		}
		for i++; i < len(lines) && marker(lines[i]) != "//tmpl:end"; i++ {
			t := marker(lines[i])
			if !strings.HasPrefix(t, "//") {
				return "", fmt.Errorf("gen: templates/capi/%s:%d: a template line of a //tmpl: block must start with //", name, i+1)
			}
			out = append(out, subst(t[2:]))
		}
		if i >= len(lines) {
			return "", fmt.Errorf("gen: templates/capi/%s:%d: //tmpl:begin without //tmpl:as and //tmpl:end", name, start+1)
		}
	}
	return strings.Join(out, "\n"), nil
}

// capiText returns templates/capi/name as is (the Python and Makefile
// templates).
func capiText(name string) (string, error) {
	b, err := fs.ReadFile(templates.CAPI, "capi/"+name)
	if err != nil {
		return "", fmt.Errorf("gen: templates/capi/%s is not embedded: %v", name, err)
	}
	return string(b), nil
}

// CSharedOptions control CShared.
type CSharedOptions struct {
	Package    string // the generated package's name (required)
	ImportPath string // its import path, which capi/main.go imports (required)
	Source     string // names the model in headers
}

type csharedArg struct {
	Name  string // ONNX name
	Field string // Go field of Input/Output
	Param string // C parameter name
	DType string // Go expression: model.F32
	Dims  []int64
	Sym   []int
}

// CShared returns the files that make the generated package usable from C
// and Python, keyed by path relative to the package folder:
// capi/main.go (a main package of cgo-exported functions, built with
// -buildmode=c-shared), capi/Makefile, and python/<pkg>.py (a ctypes and
// numpy wrapper). m must be the model Generate was given.
func CShared(m *ir.Model, opts CSharedOptions) (map[string][]byte, error) {
	if !validPackageName(opts.Package) {
		return nil, fmt.Errorf("gen: %q is not a valid Go package name", opts.Package)
	}
	if opts.ImportPath == "" {
		return nil, fmt.Errorf("gen: -cshared needs the generated package's import path")
	}
	if m == nil || m.Graph == nil {
		return nil, fmt.Errorf("gen: model has no graph")
	}
	if opts.Source == "" {
		opts.Source = "model.onnx"
	}
	g := m.Graph
	syms := map[string]int{}
	var symNames []string
	params := map[string]bool{"ctx": true}
	arg := func(kind string, v *ir.Value, field string, addSyms bool) (csharedArg, error) {
		t := v.Type
		if t.Kind != ir.TensorKind || !t.Known() {
			return csharedArg{}, fmt.Errorf("gen: -cshared: %s %q has type %s; the C API needs tensors of known dtype and rank", kind, v.Name, t)
		}
		if t.DType == ir.String || t.DType.Size() == 0 {
			return csharedArg{}, fmt.Errorf("gen: -cshared: %s %q has dtype %s; the C API passes numeric and bool buffers only", kind, v.Name, t.DType)
		}
		a := csharedArg{Name: v.Name, Field: field, DType: "model." + dtypeGoName(t.DType)}
		for _, d := range t.Shape {
			if d.IsConst() {
				a.Dims = append(a.Dims, d.Size)
				a.Sym = append(a.Sym, -1)
				continue
			}
			a.Dims = append(a.Dims, -1)
			k, ok := syms[d.Sym]
			if !ok {
				if addSyms {
					k = len(symNames)
					syms[d.Sym] = k
					symNames = append(symNames, d.Sym)
				} else {
					k = -1 // a dim only an output has: set by the data
				}
			}
			a.Sym = append(a.Sym, k)
		}
		p := strings.ToLower(field[:1]) + field[1:]
		base := p
		for i := 2; params[p] || isCReserved(p); i++ {
			p = fmt.Sprintf("%s%d", base, i)
		}
		params[p] = true
		a.Param = p
		return a, nil
	}
	data := struct {
		Header, PyHeader, MkHeader string
		Pkg, ImportPath            string
		Inputs, Outputs            []csharedArg
		Syms                       []string
		Inference                  bool
	}{Pkg: opts.Package, ImportPath: opts.ImportPath}
	opts.Source = commentText(opts.Source) // it goes into every file's header
	header := fmt.Sprintf("Code generated by cuvil %s from %s; DO NOT EDIT.", Version, opts.Source)
	data.Header = "// " + header
	data.PyHeader = "# " + header
	data.MkHeader = "# " + header
	inNames := make([]string, len(g.Inputs))
	for i, v := range g.Inputs {
		inNames[i] = v.Name
	}
	outNames := make([]string, len(g.Outputs))
	for i, v := range g.Outputs {
		if v == nil {
			return nil, fmt.Errorf("gen: graph has a nil output")
		}
		outNames[i] = v.Name
	}
	inFields, outFields := uniqueNames(inNames), uniqueNames(outNames)
	for i, v := range g.Inputs {
		a, err := arg("input", v, inFields[i], true)
		if err != nil {
			return nil, err
		}
		data.Inputs = append(data.Inputs, a)
	}
	for i, v := range g.Outputs {
		a, err := arg("output", v, outFields[i], false)
		if err != nil {
			return nil, err
		}
		data.Outputs = append(data.Outputs, a)
	}
	data.Syms = symNames
	data.Inference = len(data.Inputs) == 1 && len(data.Outputs) == 1 && len(symNames) == 0 && !hasSym(data.Outputs[0])

	out := map[string][]byte{}
	render := func(name, src string) ([]byte, error) {
		t, err := template.New(name).Parse(src)
		if err != nil {
			return nil, fmt.Errorf("gen: template %s: %v", name, err)
		}
		var b bytes.Buffer
		if err := t.Execute(&b, data); err != nil {
			return nil, fmt.Errorf("gen: template %s: %v", name, err)
		}
		return b.Bytes(), nil
	}
	capiSource, err := capiTemplate("main.go")
	if err != nil {
		return nil, err
	}
	capiCErrSource, err := capiTemplate("cerr.go")
	if err != nil {
		return nil, err
	}
	capiPython, err := capiText("capi.py.tmpl")
	if err != nil {
		return nil, err
	}
	capiMakefile, err := capiText("Makefile.tmpl")
	if err != nil {
		return nil, err
	}
	src, err := render("capi/main.go", capiSource)
	if err != nil {
		return nil, err
	}
	formatted, err := format.Source(src)
	if err != nil {
		return nil, fmt.Errorf("gen: formatting capi/main.go: %v", err)
	}
	out["capi/main.go"] = formatted
	src, err = render("capi/cerr.go", capiCErrSource)
	if err != nil {
		return nil, err
	}
	if out["capi/cerr.go"], err = format.Source(src); err != nil {
		return nil, fmt.Errorf("gen: formatting capi/cerr.go: %v", err)
	}
	if out["capi/Makefile"], err = render("capi/Makefile", capiMakefile); err != nil {
		return nil, err
	}
	if out["python/"+opts.Package+".py"], err = render("python", capiPython); err != nil {
		return nil, err
	}
	return out, nil
}

func hasSym(a csharedArg) bool {
	for _, d := range a.Dims {
		if d < 0 {
			return true
		}
	}
	return false
}

func isCReserved(s string) bool {
	switch s {
	case "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern",
		"float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return", "short", "signed",
		"sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while",
		"bool", "true", "false", "nil", "model", "c", "m", "err", "code", "in", "out",
		// Go keywords and predeclared names a parameter must not shadow.
		"func", "go", "chan", "defer", "fallthrough", "import", "interface", "map", "package", "range", "select", "type", "var",
		"any", "len", "cap", "make", "new", "copy", "append", "panic", "recover", "unsafe", "errors", "fmt", "sync", "C":
		return true
	}
	return false
}

// dtypeGoName is the name of dt's constant in generated packages.
func dtypeGoName(dt ir.DType) string {
	var b bytes.Buffer
	f := dtypeID(dt)
	fmt.Fprintf(&b, "%#v", f)
	return b.String()
}

// ImportPath returns the import path of the package in dir, read from the
// go.mod of the module that holds dir.
func ImportPath(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := abs; ; {
		b, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil {
			mod := modfile.ModulePath(b)
			if mod == "" {
				return "", fmt.Errorf("gen: %s has no module line", filepath.Join(d, "go.mod"))
			}
			rel, err := filepath.Rel(d, abs)
			if err != nil {
				return "", err
			}
			if rel == "." {
				return mod, nil
			}
			return mod + "/" + filepath.ToSlash(rel), nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("gen: no go.mod in %s or above: the generated package must be inside a Go module to be imported by its C API", abs)
		}
		d = parent
	}
}

package gen

import (
	"bytes"
	"go/format"
	"go/parser"
	"go/token"
	"io/fs"
	"os/exec"
	"strings"
	"testing"

	"github.com/cuvil/cuvil/templates"
)

// TestCSharedFiles: -cshared writes the C API in two Go files (the
// exported functions, whose cgo preamble becomes the header's opening
// comment, and the C helpers that must stay out of the header), the
// Makefile and the Python wrapper; the header comment documents the
// checked calls and marks the bare-pointer ones unchecked; the wrapper
// imports without numpy.
func TestCSharedFiles(t *testing.T) {
	files, err := CShared(tinyModel(), CSharedOptions{Package: "tiny", ImportPath: "example.com/tiny"})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"capi/main.go", "capi/cerr.go", "capi/Makefile", "python/tiny.py"} {
		if files[name] == nil {
			t.Fatalf("no %s in %v", name, csharedNames(files))
		}
	}
	fset := token.NewFileSet()
	for _, name := range []string{"capi/main.go", "capi/cerr.go"} {
		if _, err := parser.ParseFile(fset, name, files[name], parser.ParseComments); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	main := string(files["capi/main.go"])
	preamble := main[strings.Index(main, "/*"):strings.Index(main, `import "C"`)]
	for _, want := range []string{"tiny_tensor", "tiny_eval_tensors", "tiny_run_tensors", "tiny_set_dims_n", "tiny_error_message",
		"unchecked", "thread", "generation", "overflows"} {
		if !strings.Contains(preamble, want) {
			t.Errorf("the header comment does not mention %q", want)
		}
	}
	if strings.Contains(preamble, "static ") {
		t.Error("capi/main.go's preamble (copied into the header) defines C functions")
	}
	for _, fn := range []string{"tiny_eval_tensors", "tiny_run_tensors", "tiny_set_dims_n", "tiny_result_shape_n", "tiny_result_rank", "tiny_error_message"} {
		if !strings.Contains(main, "//export "+fn+"\n") {
			t.Errorf("capi/main.go does not export %s", fn)
		}
	}
	py := string(files["python/tiny.py"])
	if !strings.Contains(py, "except ImportError") || strings.Contains(py, "\nimport numpy") {
		t.Error("the Python wrapper needs numpy to import")
	}
	if strings.Contains(py, `"run"`) || strings.Contains(py, `("eval"`) {
		t.Error("the Python wrapper calls an unchecked function")
	}
	if !strings.Contains(string(files["capi/Makefile"]), "*.go") {
		t.Error("the Makefile does not rebuild on capi/*.go")
	}
}

func csharedNames(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestCAPITemplatesGofmt: templates/capi/*.go are gofmt-clean, so an
// editor's gofmt leaves their //tmpl: blocks as they are, and every block
// is well formed (capiTemplate parses them).
func TestCAPITemplatesGofmt(t *testing.T) {
	for _, name := range []string{"main.go", "cerr.go"} {
		b, err := fs.ReadFile(templates.CAPI, "capi/"+name)
		if err != nil {
			t.Fatal(err)
		}
		if f, err := format.Source(b); err != nil || !bytes.Equal(f, b) {
			t.Errorf("templates/capi/%s is not gofmt-clean (%v): gofmt it and check its //tmpl: blocks survived", name, err)
		}
		src, err := capiTemplate(name)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(src, "//tmpl:") || strings.Contains(src, capiPkg) || strings.Contains(src, capiImportPath) {
			t.Errorf("the template from templates/capi/%s still holds a marker, PKG or the example's import path", name)
		}
	}
}

// TestCAPIPython: the generated Python wrapper parses, and every library
// function it looks up (f("name", ...) and self._c("name"), with the
// kind + "_x" names for both kinds; a parameter passed on is checked at
// its callers) is one capi/main.go exports.
func TestCAPIPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	files, err := CShared(tinyModel(), CSharedOptions{Package: "tiny", ImportPath: "example.com/tiny"})
	if err != nil {
		t.Fatal(err)
	}
	const script = `
import ast, sys
tree = ast.parse(sys.stdin.read())
names = set()
calls = []  # (call, parameters of the function it is in)
for d in ast.walk(tree):
    if isinstance(d, ast.FunctionDef):
        params = {a.arg for a in d.args.args}
        calls += [(n, params) for n in ast.walk(d) if isinstance(n, ast.Call)]
for n, params in calls:
    if not n.args:
        continue
    fn = n.func
    if not ((isinstance(fn, ast.Name) and fn.id == "f") or (isinstance(fn, ast.Attribute) and fn.attr == "_c")):
        continue
    a = n.args[0]
    if isinstance(a, ast.Constant) and isinstance(a.value, str):
        names.add(a.value)
    elif isinstance(a, ast.BinOp) and isinstance(a.op, ast.Add) and isinstance(a.right, ast.Constant):
        for kind in ("input", "output"):
            names.add(kind + a.right.value)
    elif isinstance(a, ast.Name) and a.id in params:
        pass  # forwarded: the callers' names are checked
    else:
        print("unresolved:" + ast.unparse(a))
for s in sorted(names):
    print(s)
`
	cmd := exec.Command(py, "-c", script)
	cmd.Stdin = bytes.NewReader(files["python/tiny.py"])
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python/tiny.py: %v\n%s", err, out)
	}
	names := strings.Fields(string(out))
	if len(names) < 20 {
		t.Fatalf("found only %d library functions in python/tiny.py: %v", len(names), names)
	}
	main := string(files["capi/main.go"])
	for _, n := range names {
		if strings.HasPrefix(n, "unresolved:") {
			t.Errorf("python/tiny.py looks up a function by an expression the test cannot follow: %s", n)
		} else if !strings.Contains(main, "//export tiny_"+n+"\n") {
			t.Errorf("python/tiny.py calls tiny_%s, which capi/main.go does not export", n)
		}
	}
}

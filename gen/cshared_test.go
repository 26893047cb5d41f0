package gen

import (
	"go/parser"
	"go/token"
	"strings"
	"testing"
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

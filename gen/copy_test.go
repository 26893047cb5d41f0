package gen

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strings"
	"testing"

	"github.com/cuvil/cuvil/ir"
)

// TestClosureCopiesAssembly checks that a model using GEMM gets the
// assembly, both sides of each build-tag pair, and the pure-Go twins.
func TestClosureCopiesAssembly(t *testing.T) {
	lib, err := loadLibrary()
	if err != nil {
		t.Fatal(err)
	}
	files := lib.closure([]string{"Conv"})
	for _, want := range []string{"k_cpu_amd64.go", "k_gemm_sgemm.go", "k_gemm_sgemm_amd64.go", "asm_sgemm_amd64.go", "k_gemm_sgemm_purego.go", "k_gemm_core.go", "rt_pool.go", "k_conv.go"} {
		if !slices.Contains(files, want) {
			t.Errorf("closure of Conv lacks %s (has %v)", want, files)
		}
	}
	name, text, err := lib.assembly("asm_sgemm_amd64.go")
	if err != nil || name != "asm_sgemm_amd64.s" || len(text) == 0 {
		t.Errorf("assembly(asm_sgemm_amd64.go) = %q, %d bytes, %v; want asm_sgemm_amd64.s", name, len(text), err)
	}
}

// TestRuntimeDependsOnRuntimeOnly: every generated package copies the
// rt_ files, so one of them naming a kernel file's identifier would copy
// that kernel (and all it reaches) into every package.
func TestRuntimeDependsOnRuntimeOnly(t *testing.T) {
	lib, err := loadLibrary()
	if err != nil {
		t.Fatal(err)
	}
	for name, src := range lib.files {
		if !strings.HasPrefix(name, "rt_") {
			continue
		}
		for id := range src.uses {
			for _, f := range lib.defined[id] {
				if !strings.HasPrefix(f, "rt_") {
					t.Errorf("runtime file %s uses %s, declared in %s: move it into the runtime or out of %s", name, id, f, name)
				}
			}
		}
		for _, ty := range src.types {
			for _, f := range lib.methods[ty] {
				if !strings.HasPrefix(f, "rt_") {
					t.Errorf("%s declares methods on the runtime type %s: they would be copied into every package", f, ty)
				}
			}
		}
	}
}

// TestClosureGolden pins what small models copy: a Neg-only model gets
// the runtime, its element-wise kernel file and the float64 activation
// functions that file shares with the fused epilogues (k_elem_act_f64.go)
// and nothing else; a GEMM model gets no convolution or Winograd code.
func TestClosureGolden(t *testing.T) {
	lib, err := loadLibrary()
	if err != nil {
		t.Fatal(err)
	}
	var runtime []string
	for name := range lib.files {
		if strings.HasPrefix(name, "rt_") {
			runtime = append(runtime, name)
		}
	}
	neg := lib.closure([]string{"Neg"})
	want := append(slices.Clone(runtime), lib.funcs["Neg"], "k_elem_act_f64.go")
	slices.Sort(want)
	if !slices.Equal(neg, want) {
		t.Errorf("closure of Neg = %v, want the runtime plus %s: %v", neg, lib.funcs["Neg"], want)
	}
	for _, c := range []struct {
		funcs []string
		not   []string
	}{
		{[]string{"MatMul"}, []string{"k_conv.go", "k_conv_winograd.go", "k_conv_winograd_nhwc.go", "k_conv_nhwc.go", "asm_pw_amd64.go", "asm_wino_amd64.go"}},
		{[]string{"Relu", "Add"}, []string{"k_gemm_core.go", "k_gemm_sgemm.go", "k_conv.go"}},
		// The CPU probes are a pair of their own (asm_cpu_amd64.s): a
		// pooling model asks the CPU without copying the SGEMM assembly.
		{[]string{"MaxPool"}, []string{"asm_sgemm_amd64.go", "k_gemm_sgemm.go", "k_conv.go"}},
		// NHWC pooling shares only the window kernels with the NHWC convs.
		{[]string{"PoolNHWC"}, []string{"k_conv_nhwc.go", "k_conv_nhwc_pw.go", "k_conv_winograd_nhwc.go", "asm_pw_amd64.go", "asm_wnhwc_amd64.go"}},
	} {
		why := lib.closureWhy(c.funcs)
		for _, f := range c.not {
			if _, ok := why[f]; ok {
				chain := f
				for at := f; strings.Contains(why[at], " uses "); {
					at, _, _ = strings.Cut(why[at], " uses ")
					chain = at + " -> " + chain
				}
				t.Errorf("closure of %v copies %s (%s; %s)", c.funcs, f, chain, why[f])
			}
		}
	}
}

// TestNegPackageSize: a one-node Neg model's package holds the runtime,
// one kernel file and the generated files, and doc.go says what was
// copied (issue 12's target: under 30 files and 300 KB).
func TestNegPackageSize(t *testing.T) {
	f32 := ir.TensorType(ir.F32, ir.Shape{ir.D(3), ir.D(5)})
	x := &ir.Value{Name: "x", Type: f32}
	y := &ir.Value{Name: "y", Type: f32}
	n := &ir.Node{Name: "neg", Op: "Neg", Version: 13, Inputs: []*ir.Value{x}, Outputs: []*ir.Value{y}}
	y.Def = n
	m := &ir.Model{Graph: &ir.Graph{Name: "neg", Inputs: []*ir.Value{x}, Outputs: []*ir.Value{y}, Nodes: []*ir.Node{n}},
		Opsets: map[string]int64{"": 13}, Path: "neg.onnx"}
	files, err := Generate(m, Options{Package: "neg"})
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, b := range files {
		total += len(b)
	}
	if len(files) >= 30 || total >= 300<<10 {
		t.Errorf("Neg package: %d files, %d bytes; want under 30 files and 300 KB", len(files), total)
	}
	for name := range files {
		if strings.HasPrefix(name, "asm_") || strings.Contains(name, "gemm") || strings.Contains(name, "conv") {
			t.Errorf("Neg package copies %s", name)
		}
	}
	if !strings.Contains(string(files["doc.go"]), "Runtime and kernels copied from cuvil's templates: ") {
		t.Errorf("doc.go does not report the copied files:\n%s", files["doc.go"])
	}
}

// TestGeneratedAPI: a generated package exports the model's API and the
// runtime names runtimeAPI lists (plus the DType constants), nothing of the
// copied kernels or runtime internals.
func TestGeneratedAPI(t *testing.T) {
	files, err := Generate(tinyModel(), Options{Package: "tiny"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"BF16ToF32", "DType", "F16ToF32", "F32ToBF16", "F32ToF16", "Input", "LoadTensorFile", "MapElem", "MapKey", "MapOf",
		"MapValue", "MapsOf", "Model", "New", "NewMap", "NewOptional",
		"NewSequence", "NodeProfile", "Option", "OptionalValue", "Output", "ReadTensor", "Sequence", "Session", "SessionOptions",
		"Tensor", "WithProfile", "WithSpin", "WithThreads", "WithTrace"}
	var got []string
	fset := token.NewFileSet()
	for name, src := range files {
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		typed := dtypeConsts(f)
		for _, d := range f.Decls {
			for _, id := range declIdents(d) {
				if ast.IsExported(id) && !typed[id] {
					got = append(got, id)
				}
			}
		}
	}
	slices.Sort(got)
	got = slices.Compact(got)
	if !slices.Equal(got, want) {
		t.Errorf("generated package exports\n  %v\nwant\n  %v", got, want)
	}
	if !strings.Contains(string(files["k_gemm.go"]), "func matMul(n *node) error") {
		t.Errorf("k_gemm.go does not declare the unexported matMul kernel")
	}
}

// TestUnexportKeywordsAndBuiltins: kernels whose lower-case name is a Go
// keyword, a builtin (Range, Max, Len...) or a name the package spells
// elsewhere (k_resize.go has a local upsample) get a prefix instead.
func TestUnexportKeywordsAndBuiltins(t *testing.T) {
	lib, err := loadLibrary()
	if err != nil {
		t.Fatal(err)
	}
	files := lib.closure([]string{"Range", "Max", "Min", "Upsample"})
	out := map[string][]byte{}
	for _, f := range files {
		out[f] = lib.renamed(f, "p", "// x")
	}
	if err := unexportRuntime(out, lib, files); err != nil {
		t.Fatal(err)
	}
	all := ""
	for _, b := range out {
		all += string(b)
	}
	for _, want := range []string{"func xRange(n *node) error", "func xMax(n *node) error", "func xMin(n *node) error", "func xUpsample(n *node) error"} {
		if !strings.Contains(all, want) {
			t.Errorf("no %q in the unexported files", want)
		}
	}
}

package cuvil

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/ir/onnx"
	pb "github.com/cuvil/cuvil/ir/onnx/onnxpb"
)

// The hostile-model corpus: malformed and hostile models of every kind the
// compiler meets (broken files, schema violations, impossible shapes,
// memory and time bombs, names that try to steer generated code). Each
// must be refused with an error that names the problem (and the node,
// where there is one), or compiled to a package whose files all parse;
// none may panic (a panic turned into an error counts as one), hang or
// leave a partial output behind.

// hostileCase is one model and what compiling it must give: refused, with
// every want substring in the error, or compiled (want empty).
type hostileCase struct {
	cat, name string
	model     []byte
	files     map[string][]byte // extra files next to model.onnx (external data)
	want      []string
	either    bool   // refused or compiled, but never a panic (random damage)
	literal   string // a name that must come out exactly as a Go string literal in model.go
}

// panicWords mark an error that is a recovered panic, not a refusal.
var panicWords = []string{"runtime error", "panic", "goroutine ", "nil pointer", "index out of range", "invalid memory address"}

func TestHostileCorpus(t *testing.T) {
	cases := hostileCorpus(t)
	if len(cases) < 150 {
		t.Fatalf("the corpus has %d cases, want at least 150", len(cases))
	}
	type tally struct{ refused, compiled, bad int }
	byCat := map[string]*tally{}
	var cats []string
	for _, tc := range cases {
		if byCat[tc.cat] == nil {
			byCat[tc.cat] = &tally{}
			cats = append(cats, tc.cat)
		}
		tl := byCat[tc.cat]
		dir := t.TempDir()
		path := filepath.Join(dir, "model.onnx")
		if err := os.WriteFile(path, tc.model, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module hostile\n\ngo 1.22\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		for name, b := range tc.files {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		out := filepath.Join(dir, "out", "pkg")
		err, panicked, took := compileGuarded(path, out)
		label := tc.cat + "/" + tc.name
		switch {
		case panicked != nil:
			t.Errorf("%s: panic: %v", label, panicked)
			tl.bad++
		case took > 20*time.Second:
			t.Errorf("%s: took %v", label, took)
			tl.bad++
		case err != nil && hasAny(err.Error(), panicWords):
			t.Errorf("%s: a recovered panic, not a refusal: %v", label, err)
			tl.bad++
		case err != nil && tc.either:
			t.Logf("%s: %v", label, err)
			tl.refused++
		case err != nil && len(tc.want) == 0:
			t.Errorf("%s: refused, want it compiled: %v", label, err)
			tl.bad++
		case err != nil:
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s: error %q does not say %q", label, err, w)
					tl.bad++
					break
				}
			}
			t.Logf("%s: %v", label, err)
			if _, serr := os.Stat(filepath.Join(dir, "out")); serr == nil {
				if left, _ := os.ReadDir(filepath.Join(dir, "out")); len(left) > 0 {
					t.Errorf("%s: refused but left %v behind", label, left)
				}
			}
			tl.refused++
		case len(tc.want) > 0 && !tc.either:
			t.Errorf("%s: compiled, want a refusal saying %q", label, tc.want)
			tl.bad++
		default:
			if perr := parseAll(out); perr != nil {
				t.Errorf("%s: %v", label, perr)
				tl.bad++
			} else if tc.literal != "" && !hasLiteral(filepath.Join(out, "model.go"), tc.literal) {
				t.Errorf("%s: model.go holds no string literal %q: the name did not round-trip", label, tc.literal)
				tl.bad++
			}
			tl.compiled++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-12s %5s %8s %8s %5s\n", "category", "cases", "refused", "compiled", "bad")
	for _, c := range cats {
		tl := byCat[c]
		fmt.Fprintf(&b, "%-12s %5d %8d %8d %5d\n", c, tl.refused+tl.compiled+tl.bad, tl.refused, tl.compiled, tl.bad)
	}
	t.Logf("hostile corpus, %d cases:\n%s", len(cases), b.String())
}

// compileGuarded compiles with a panic guard and the time it took.
func compileGuarded(model, out string) (err error, panicked any, took time.Duration) {
	start := time.Now()
	defer func() {
		took = time.Since(start)
		if r := recover(); r != nil {
			panicked = r
		}
	}()
	err = Compile(Options{Model: model, Pkg: "pkg", Out: out, CShared: true})
	return err, nil, time.Since(start)
}

func hasAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// parseAll checks every generated Go file parses (the names a model holds
// must not break out of comments or literals) and that Python, C and
// Makefile files hold no raw control characters.
func parseAll(dir string) error {
	return filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		switch filepath.Ext(p) {
		case ".go":
			if _, err := parser.ParseFile(token.NewFileSet(), p, b, parser.AllErrors); err != nil {
				return fmt.Errorf("generated %s does not parse: %v", filepath.Base(p), err)
			}
		case ".py", ".h", ".mk", "":
			for i, c := range string(b) {
				if c == '\r' || c == 0 || c == '\u2028' || c == '\u2029' || c == '\u0085' {
					return fmt.Errorf("generated %s holds %q at byte %d", filepath.Base(p), c, i)
				}
			}
		}
		return nil
	})
}

// hasLiteral reports whether the Go file holds a string literal whose
// value is s.
func hasLiteral(path, s string) bool {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		return false
	}
	found := false
	ast.Inspect(f, func(n ast.Node) bool {
		if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			if v, err := strconv.Unquote(lit.Value); err == nil && v == s {
				found = true
			}
		}
		return !found
	})
	return found
}

// text compiles an IR text into ONNX bytes.
func text(t *testing.T, src string) []byte {
	t.Helper()
	m, err := ir.Parse(src)
	if err != nil {
		t.Fatalf("corpus model does not parse: %v\n%s", err, src)
	}
	b, err := onnx.Encode(m)
	if err != nil {
		t.Fatalf("corpus model does not encode: %v", err)
	}
	return b
}

// unary is a one-node f32[2,3] model around op.
func unary(op, attrs string) string {
	return fmt.Sprintf("opset ai.onnx 17\ngraph main(%%x: f32[2,3]) -> (%%y) {\n  %%y = %s @n <?[?]> %%x %s\n}", op, attrs)
}

func hostileCorpus(t *testing.T) []hostileCase {
	var cs []hostileCase
	add := func(cat, name string, model []byte, want ...string) {
		cs = append(cs, hostileCase{cat: cat, name: name, model: model, want: want})
	}
	good := text(t, "opset ai.onnx 17\ngraph main(%x: f32[2,3]) -> (%y) {\n  %w = const f32[3] {1, 2, 3}\n  %a = Add @add <?[?]> %x %w\n  %y = Relu @relu <?[?]> %a\n}")

	// --- files: truncations, random bytes, bit flips of a valid model.
	for _, n := range []int{0, 1, 2, 3, 5, 8, 13, 21, 34, len(good) / 2, len(good) - 3, len(good) - 1} {
		if n <= len(good) {
			add("file", fmt.Sprintf("truncated_%d", n), good[:n], "")
		}
	}
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 15; i++ {
		b := make([]byte, 1+r.Intn(200))
		r.Read(b)
		add("file", fmt.Sprintf("random_%d", i), b, "")
	}
	for i := 0; i < 20; i++ {
		b := append([]byte(nil), good...)
		b[r.Intn(len(b))] ^= byte(1 << r.Intn(8))
		cs = append(cs, hostileCase{cat: "bitflip", name: fmt.Sprintf("flip_%d", i), model: b, either: true})
	}

	// --- graph structure.
	add("graph", "no_outputs", text(t, "opset ai.onnx 17\ngraph main(%x: f32[1]) -> () {\n  %y = Relu <?[?]> %x\n}"), "no outputs")
	add("graph", "empty", text(t, "opset ai.onnx 17\ngraph main() -> () {\n}"), "no outputs")
	add("graph", "passthrough", text(t, "opset ai.onnx 17\ngraph main(%x: f32[2]) -> (%x) {\n}"))
	add("graph", "const_output", text(t, "opset ai.onnx 17\ngraph main() -> (%c) {\n  %c = const f32[2] {1, 2}\n}"))
	add("graph", "unknown_op", text(t, unary("NoSuchOp:1", "")), `node "n"`, "NoSuchOp")

	// --- schema: attributes, arity, dtypes (the ONNX checker's rules).
	schema := []struct{ name, src, want string }{
		{"concat_no_axis", "opset ai.onnx 17\ngraph main(%x: f32[2]) -> (%y) {\n  %y = Concat @n <?[?]> %x %x\n}", `missing required attribute "axis"`},
		{"conv_strides_float", "opset ai.onnx 17\ngraph main(%x: f32[1,1,4,4], %w: f32[1,1,3,3]) -> (%y) {\n  %y = Conv @n <?[?]> %x %w {strides=[1.5,1.5]}\n}", `attribute "strides"`},
		{"transpose_perm_int", unary("Transpose", "{perm=1}"), `attribute "perm"`},
		{"softmax_axis_string", unary("Softmax", `{axis="1"}`), `attribute "axis"`},
		{"relu_unknown_attr", unary("Relu", "{alpha=0.5}"), `unknown attribute "alpha"`},
		{"add_one_input", unary("Add", ""), "inputs"},
		{"relu_three_inputs", "opset ai.onnx 17\ngraph main(%x: f32[2]) -> (%y) {\n  %y = Relu @n <?[?]> %x %x %x\n}", "inputs"},
		{"sqrt_int32", "opset ai.onnx 17\ngraph main(%x: i32[2]) -> (%y) {\n  %y = Sqrt @n <?[?]> %x\n}", "dtype i32"},
		{"conv_int64", "opset ai.onnx 17\ngraph main(%x: i64[1,1,4,4], %w: i64[1,1,3,3]) -> (%y) {\n  %y = Conv @n <?[?]> %x %w\n}", "dtype i64"},
		{"add_f32_i64", "opset ai.onnx 17\ngraph main(%x: f32[2], %z: i64[2]) -> (%y) {\n  %y = Add @n <?[?]> %x %z\n}", `node "n"`},
		{"relu_string", "opset ai.onnx 17\ngraph main(%x: string[2]) -> (%y) {\n  %y = Relu @n <?[?]> %x\n}", "dtype string"},
		{"matmul_bool", "opset ai.onnx 17\ngraph main(%x: bool[2,2]) -> (%y) {\n  %y = MatMul @n <?[?]> %x %x\n}", `node "n"`},
		{"gemm_no_c_v6", "opset ai.onnx 6\ngraph main(%x: f32[2,2]) -> (%y) {\n  %y = Gemm @n <?[?]> %x %x\n}", `node "n"`},
		{"cast_no_to", unary("Cast", ""), `missing required attribute "to"`},
		{"cast_bad_to", unary("Cast", "{to=99}"), `node "n"`},
		{"if_no_branches", "opset ai.onnx 17\ngraph main(%c: bool[]) -> (%y) {\n  %y = If @n <?[?]> %c\n}", `node "n"`},
		{"opset_too_new", "opset ai.onnx 99\ngraph main(%x: f32[2]) -> (%y) {\n  %y = Relu:14 @n <?[?]> %x\n}", "opset 99"},
		{"leakyrelu_alpha_ints", unary("LeakyRelu", "{alpha=[1,2]}"), `attribute "alpha"`},
		{"gather_axis_float", "opset ai.onnx 17\ngraph main(%x: f32[2,3]) -> (%y) {\n  %i = const i64[1] {0}\n  %y = Gather @n <?[?]> %x %i {axis=0.5}\n}", `attribute "axis"`},
		{"split_bad_kind", unary("Split", `{axis="0"}`), `attribute "axis"`},
	}
	for _, s := range schema {
		add("schema", s.name, text(t, s.src), s.want)
	}

	// --- shapes: axes, indices and sizes that cannot be.
	shapes := []struct{ name, src, want string }{
		{"softmax_axis", unary("Softmax", "{axis=5}"), "axis 5 is out of range"},
		{"logsoftmax_axis", unary("LogSoftmax", "{axis=-4}"), "out of range"},
		{"concat_axis", "opset ai.onnx 17\ngraph main(%x: f32[2]) -> (%y) {\n  %y = Concat @n <?[?]> %x %x {axis=3}\n}", `node "n"`},
		{"concat_mismatch", "opset ai.onnx 17\ngraph main(%x: f32[2,3], %z: f32[4,5]) -> (%y) {\n  %y = Concat @n <?[?]> %x %z {axis=0}\n}", `node "n"`},
		{"gather_axis", "opset ai.onnx 17\ngraph main(%x: f32[2,3]) -> (%y) {\n  %i = const i64[1] {0}\n  %y = Gather @n <?[?]> %x %i {axis=2}\n}", `node "n"`},
		{"gather_index", "opset ai.onnx 17\ngraph main(%x: f32[2,3]) -> (%y) {\n  %i = const i64[1] {7}\n  %y = Gather @n <?[?]> %x %i\n}", "index 7 is out of range"},
		{"transpose_perm", unary("Transpose", "{perm=[0,0]}"), `node "n"`},
		{"transpose_perm_len", unary("Transpose", "{perm=[0,1,2]}"), `node "n"`},
		{"squeeze_axis", "opset ai.onnx 17\ngraph main(%x: f32[2,3]) -> (%y) {\n  %a = const i64[1] {0}\n  %y = Squeeze @n <?[?]> %x %a\n}", `node "n"`},
		{"unsqueeze_axis", "opset ai.onnx 17\ngraph main(%x: f32[2,3]) -> (%y) {\n  %a = const i64[1] {9}\n  %y = Unsqueeze @n <?[?]> %x %a\n}", `node "n"`},
		{"reshape_count", "opset ai.onnx 17\ngraph main(%x: f32[2,3]) -> (%y) {\n  %s = const i64[2] {4, 4}\n  %y = Reshape @n <?[?]> %x %s\n}", `node "n"`},
		{"reshape_two_minus_one", "opset ai.onnx 17\ngraph main(%x: f32[2,3]) -> (%y) {\n  %s = const i64[2] {-1, -1}\n  %y = Reshape @n <?[?]> %x %s\n}", `node "n"`},
		{"matmul_inner", "opset ai.onnx 17\ngraph main(%x: f32[2,3], %z: f32[4,5]) -> (%y) {\n  %y = MatMul @n <?[?]> %x %z\n}", `node "n"`},
		{"broadcast", "opset ai.onnx 17\ngraph main(%x: f32[2,3], %z: f32[4]) -> (%y) {\n  %y = Add @n <?[?]> %x %z\n}", "do not broadcast"},
		{"batchnorm_scale", "opset ai.onnx 17\ngraph main(%x: f32[1,3,4,4]) -> (%y) {\n  %s = const f32[2] {1, 1}\n  %b = const f32[3] {0, 0, 0}\n  %m = const f32[3] {0, 0, 0}\n  %v = const f32[3] {1, 1, 1}\n  %y = BatchNormalization @n <?[?]> %x %s %b %m %v\n}", "2 elements, the input has 3 channels"},
		{"conv_channels", "opset ai.onnx 17\ngraph main(%x: f32[1,2,4,4], %w: f32[1,3,3,3]) -> (%y) {\n  %y = Conv @n <?[?]> %x %w\n}", `node "n"`},
		{"conv_kernel_too_big", "opset ai.onnx 17\ngraph main(%x: f32[1,1,2,2], %w: f32[1,1,3,3]) -> (%y) {\n  %y = Conv @n <?[?]> %x %w\n}", `node "n"`},
		{"slice_steps_zero", "opset ai.onnx 17\ngraph main(%x: f32[2,3]) -> (%y) {\n  %s = const i64[1] {0}\n  %e = const i64[1] {2}\n  %a = const i64[1] {0}\n  %st = const i64[1] {0}\n  %y = Slice @n <?[?]> %x %s %e %a %st\n}", `node "n"`},
		{"expand_incompatible", "opset ai.onnx 17\ngraph main(%x: f32[3]) -> (%y) {\n  %s = const i64[1] {4}\n  %y = Expand @n <?[?]> %x %s\n}", `node "n"`},
		{"split_sizes", "opset ai.onnx 17\ngraph main(%x: f32[6]) -> (%y, %z) {\n  %s = const i64[2] {2, 2}\n  %y, %z = Split @n <?[?],?[?]> %x %s\n}", `node "n"`},
		{"tile_reps_len", "opset ai.onnx 17\ngraph main(%x: f32[2,3]) -> (%y) {\n  %r = const i64[1] {2}\n  %y = Tile @n <?[?]> %x %r\n}", `node "n"`},
		{"tile_negative", "opset ai.onnx 17\ngraph main(%x: f32[2]) -> (%y) {\n  %r = const i64[1] {-2}\n  %y = Tile @n <?[?]> %x %r\n}", `node "n"`},
		{"where_cond_dtype", "opset ai.onnx 17\ngraph main(%x: f32[2]) -> (%y) {\n  %y = Where @n <?[?]> %x %x %x\n}", `node "n"`},
		{"if_cond_shape", "opset ai.onnx 17\ngraph main(%c: f32[3], %x: f32[2]) -> (%y) {\n  %y = If @n <?[?]> %c {then_branch=graph t() -> (%x) {\n} else_branch=graph e() -> (%x) {\n}}\n}", `node "n"`},
	}
	for _, s := range shapes {
		add("shapes", s.name, text(t, s.src), s.want)
	}

	// --- declared types (value_info, outputs) that contradict the computation.
	add("declared", "output_dim", text(t, "opset ai.onnx 17\ngraph main(%x: f32[2,3]) -> (%y) {\n  %y = Relu @n <f32[2,4]> %x\n}"), `node "n"`, `declared f32[2,4] but computes f32[2,3]`)
	add("declared", "output_dtype", text(t, "opset ai.onnx 17\ngraph main(%x: f32[2,3]) -> (%y) {\n  %y = Relu @n <f64[2,3]> %x\n}"), `node "n"`, "output 0 (Y) has dtype f64, want f32")
	add("declared", "output_rank", text(t, "opset ai.onnx 17\ngraph main(%x: f32[2,3]) -> (%y) {\n  %y = Relu @n <f32[6]> %x\n}"), `node "n"`, "declared f32[6]")
	add("declared", "intermediate_dim", text(t, "opset ai.onnx 17\ngraph main(%x: f32[2,3]) -> (%y) {\n  %a = Neg @a <f32[5,3]> %x\n  %y = Relu @n <?[?]> %a\n}"), `node "a"`, `value "a" is declared f32[5,3]`)

	// --- memory bombs: constant shapes of terabytes, products that wrap.
	bombs := []struct{ name, src, want string }{
		{"constantofshape_4tb", "opset ai.onnx 17\ngraph main(%x: f32[1]) -> (%y) {\n  %s = const i64[3] {100000, 100000, 100}\n  %c = ConstantOfShape @n <?[?]> %s\n  %y = Add @add <?[?]> %c %x\n}", "-max-arena"},
		{"expand_1e15", "opset ai.onnx 17\ngraph main(%x: f32[1]) -> (%y) {\n  %s = const i64[3] {1000000, 1000000, 1000}\n  %y = Expand @n <?[?]> %x %s\n}", "2^48 elements"},
		{"tile_wraps", "opset ai.onnx 17\ngraph main(%x: f32[2]) -> (%y) {\n  %r = const i64[1] {9223372036854775807}\n  %y = Tile @n <?[?]> %x %r\n}", "overflows int64"},
		{"tile_product_wraps", "opset ai.onnx 17\ngraph main(%x: f32[2,2]) -> (%y) {\n  %r = const i64[2] {4294967296, 4294967296}\n  %y = Tile @n <?[?]> %x %r\n}", `node "n"`},
		{"range_huge", "opset ai.onnx 17\ngraph main(%x: f32[1]) -> (%y) {\n  %a = const f32[] {0}\n  %b = const f32[] {1e18}\n  %d = const f32[] {1}\n  %r = Range @n <?[?]> %a %b %d\n  %y = Add @add <?[?]> %r %x\n}", `node "n"`},
		{"pad_huge", "opset ai.onnx 17\ngraph main(%x: f32[2]) -> (%y) {\n  %p = const i64[2] {0, 9000000000000000}\n  %y = Pad @n <?[?]> %x %p\n}", `node "n"`},
		{"onehot_depth", "opset ai.onnx 17\ngraph main(%i: i64[1000]) -> (%y) {\n  %d = const i64[] {100000000000}\n  %v = const f32[2] {0, 1}\n  %y = OneHot @n <?[?]> %i %d %v\n}", `node "n"`},
		{"resize_scales", "opset ai.onnx 17\ngraph main(%x: f32[1,1,4,4]) -> (%y) {\n  %s = const f32[4] {1, 1, 100000000, 100000000}\n  %y = Resize @n <?[?]> %x _ %s\n}", `node "n"`},
		{"conv_pads", "opset ai.onnx 17\ngraph main(%x: f32[1,1,4,4], %w: f32[1,1,3,3]) -> (%y) {\n  %y = Conv @n <?[?]> %x %w {pads=[4000000000,4000000000,4000000000,4000000000]}\n}", `node "n"`},
		{"reshape_huge", "opset ai.onnx 17\ngraph main(%x: f32[1]) -> (%y) {\n  %s = const i64[4] {1000000, 1000000, 1000000, 1000000}\n  %e = Expand @n <?[?]> %x %s\n  %y = Relu @r <?[?]> %e\n}", `node "n"`},
	}
	for _, s := range bombs {
		add("bomb", s.name, text(t, s.src), s.want)
	}
	// Function doubling: 2^40 nodes from a few hundred bytes.
	add("bomb", "function_doubling", functionDoubling(41), "-max-nodes")
	// Subgraphs 3000 deep.
	add("bomb", "if_nest_3000", nestedIf(3000), "-max-depth")
	// Sparse initializers that expand past the import budget.
	add("bomb", "sparse_expansion", sparseBomb(), "import limit")
	// A huge dim in a tensor's header, no data.
	add("bomb", "initializer_dims", initializerDims([]int64{1 << 40, 1 << 40}), "too many elements")
	add("bomb", "initializer_negative_dim", initializerDims([]int64{-4}), "negative dim")

	// --- external data that escapes or is not a file.
	for _, e := range []struct{ name, loc, want string }{
		{"dotdot", "../secret.bin", "leaves the model folder"},
		{"absolute", "/etc/passwd", "leaves the model folder"},
		{"missing", "nope.bin", "no such file"},
		{"folder", ".", "not a regular file"},
		{"huge_offset", "w.bin", "past the end"},
	} {
		cs = append(cs, hostileCase{cat: "external", name: e.name, model: externalModel(e.loc, e.name == "huge_offset"),
			files: map[string][]byte{"w.bin": make([]byte, 12)}, want: []string{e.want}})
	}

	// --- names that try to steer generated code: compiled, every file parses.
	names := []string{"a\rimport os", "b\nfunc x() {}", "c\x00d", `e"f`, `g\h`, "i*/j", "k\xff\xfel", "m\u2028n", "o\u2029p", "q\u0085r",
		"`s`", "t/*", "u//v", "w'x", "y; rm -rf z", "${HOME}", "$(id)", "a\tb", "ü", "名"}
	for i, nm := range names {
		cs = append(cs, hostileCase{cat: "names", name: fmt.Sprintf("node_name_%d", i), model: namedModel(t, nm, "node"), literal: nm})
		add("names", fmt.Sprintf("value_name_%d", i), namedModel(t, nm, "value"))
		add("names", fmt.Sprintf("doc_%d", i), namedModel(t, nm, "doc"))
	}
	return cs
}

// functionDoubling: F(k) calls F(k-1) twice, F(0) is a Relu.
func functionDoubling(depth int) []byte {
	imports := []*pb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(17)}, {Domain: proto.String("my"), Version: proto.Int64(1)}}
	mp := &pb.ModelProto{IrVersion: proto.Int64(8), OpsetImport: imports, Graph: &pb.GraphProto{Name: proto.String("g"),
		Input:  []*pb.ValueInfoProto{f32Info("x", 2)},
		Output: []*pb.ValueInfoProto{f32Info("y", 2)},
		Node:   []*pb.NodeProto{{Name: proto.String("top"), OpType: proto.String(fmt.Sprintf("F%d", depth-1)), Domain: proto.String("my"), Input: []string{"x"}, Output: []string{"y"}}}}}
	for k := 0; k < depth; k++ {
		f := &pb.FunctionProto{Name: proto.String(fmt.Sprintf("F%d", k)), Domain: proto.String("my"), Input: []string{"a"}, Output: []string{"b"}, OpsetImport: imports}
		if k == 0 {
			f.Node = []*pb.NodeProto{{OpType: proto.String("Relu"), Input: []string{"a"}, Output: []string{"b"}}}
		} else {
			c := fmt.Sprintf("F%d", k-1)
			f.Node = []*pb.NodeProto{{OpType: proto.String(c), Domain: proto.String("my"), Input: []string{"a"}, Output: []string{"t"}},
				{OpType: proto.String(c), Domain: proto.String("my"), Input: []string{"t"}, Output: []string{"b"}}}
		}
		mp.Functions = append(mp.Functions, f)
	}
	b, _ := proto.Marshal(mp)
	return b
}

func f32Info(name string, dims ...int64) *pb.ValueInfoProto {
	var ds []*pb.TensorShapeProto_Dimension
	for _, d := range dims {
		ds = append(ds, &pb.TensorShapeProto_Dimension{Value: &pb.TensorShapeProto_Dimension_DimValue{DimValue: d}})
	}
	return &pb.ValueInfoProto{Name: proto.String(name), Type: &pb.TypeProto{Value: &pb.TypeProto_TensorType{TensorType: &pb.TypeProto_Tensor{
		ElemType: proto.Int32(1), Shape: &pb.TensorShapeProto{Dim: ds}}}}}
}

func boolInfo(name string) *pb.ValueInfoProto {
	return &pb.ValueInfoProto{Name: proto.String(name), Type: &pb.TypeProto{Value: &pb.TypeProto_TensorType{TensorType: &pb.TypeProto_Tensor{
		ElemType: proto.Int32(9), Shape: &pb.TensorShapeProto{}}}}}
}

func nestedIf(depth int) []byte {
	leaf := &pb.GraphProto{Name: proto.String("leaf"), Output: []*pb.ValueInfoProto{f32Info("x", 2)}}
	g := leaf
	for d := 0; d < depth; d++ {
		out := fmt.Sprintf("o%d", d)
		g = &pb.GraphProto{Name: proto.String(fmt.Sprintf("g%d", d)),
			Node: []*pb.NodeProto{{Name: proto.String(fmt.Sprintf("if%d", d)), OpType: proto.String("If"), Input: []string{"c"}, Output: []string{out},
				Attribute: []*pb.AttributeProto{
					{Name: proto.String("then_branch"), Type: pb.AttributeProto_GRAPH.Enum(), G: g},
					{Name: proto.String("else_branch"), Type: pb.AttributeProto_GRAPH.Enum(), G: leaf}}}},
			Output: []*pb.ValueInfoProto{f32Info(out, 2)}}
	}
	g.Input = []*pb.ValueInfoProto{boolInfo("c"), f32Info("x", 2)}
	b, _ := proto.Marshal(&pb.ModelProto{IrVersion: proto.Int64(8), OpsetImport: []*pb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(17)}}, Graph: g})
	return b
}

// sparseBomb: 40 sparse initializers of 2^28 f32 each (1 GiB dense), in
// a file of a few kilobytes.
func sparseBomb() []byte {
	g := &pb.GraphProto{Name: proto.String("g"), Input: []*pb.ValueInfoProto{f32Info("x", 2)}, Output: []*pb.ValueInfoProto{f32Info("y", 2)},
		Node: []*pb.NodeProto{{OpType: proto.String("Relu"), Input: []string{"x"}, Output: []string{"y"}}}}
	for i := 0; i < 40; i++ {
		g.SparseInitializer = append(g.SparseInitializer, &pb.SparseTensorProto{Dims: []int64{1 << 28},
			Values:  &pb.TensorProto{Name: proto.String(fmt.Sprintf("s%d", i)), DataType: proto.Int32(1), Dims: []int64{1}, FloatData: []float32{1}},
			Indices: &pb.TensorProto{DataType: proto.Int32(7), Dims: []int64{1}, Int64Data: []int64{3}}})
	}
	b, _ := proto.Marshal(&pb.ModelProto{IrVersion: proto.Int64(8), OpsetImport: []*pb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(17)}}, Graph: g})
	return b
}

func initializerDims(dims []int64) []byte {
	g := &pb.GraphProto{Name: proto.String("g"), Input: []*pb.ValueInfoProto{f32Info("x", 2)}, Output: []*pb.ValueInfoProto{f32Info("y", 2)},
		Node:        []*pb.NodeProto{{OpType: proto.String("Relu"), Input: []string{"x"}, Output: []string{"y"}}},
		Initializer: []*pb.TensorProto{{Name: proto.String("w"), DataType: proto.Int32(1), Dims: dims}}}
	b, _ := proto.Marshal(&pb.ModelProto{IrVersion: proto.Int64(8), OpsetImport: []*pb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(17)}}, Graph: g})
	return b
}

// externalModel: y = x + w with w's 3 floats in external data at loc.
func externalModel(loc string, hugeOffset bool) []byte {
	w := &pb.TensorProto{Name: proto.String("w"), DataType: proto.Int32(1), Dims: []int64{3}, DataLocation: pb.TensorProto_EXTERNAL.Enum(),
		ExternalData: []*pb.StringStringEntryProto{{Key: proto.String("location"), Value: proto.String(loc)}}}
	if hugeOffset {
		w.ExternalData = append(w.ExternalData, &pb.StringStringEntryProto{Key: proto.String("offset"), Value: proto.String("1099511627776")})
	}
	g := &pb.GraphProto{Name: proto.String("g"), Input: []*pb.ValueInfoProto{f32Info("x", 3)}, Output: []*pb.ValueInfoProto{f32Info("y", 3)},
		Node:        []*pb.NodeProto{{OpType: proto.String("Add"), Input: []string{"x", "w"}, Output: []string{"y"}}},
		Initializer: []*pb.TensorProto{w}}
	b, _ := proto.Marshal(&pb.ModelProto{IrVersion: proto.Int64(8), OpsetImport: []*pb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(17)}}, Graph: g})
	return b
}

// namedModel puts name where into a valid two-node model (Softmax, which
// no pass fuses, then Neg): the node names,
// the intermediate value's name, or the doc strings and metadata.
func namedModel(t *testing.T, name, where string) []byte {
	t.Helper()
	node, val, doc := "relu", "t", ""
	switch where {
	case "node":
		node = name
	case "value":
		val = name
	case "doc":
		doc = name
	}
	g := &pb.GraphProto{Name: proto.String("g" + doc), DocString: proto.String(doc),
		Input:  []*pb.ValueInfoProto{f32Info("x", 2)},
		Output: []*pb.ValueInfoProto{f32Info("y", 2)},
		Node: []*pb.NodeProto{
			{Name: proto.String(node), OpType: proto.String("Softmax"), Input: []string{"x"}, Output: []string{val}, DocString: proto.String(doc)},
			{Name: proto.String(node + "2"), OpType: proto.String("Neg"), Input: []string{val}, Output: []string{"y"}},
		}}
	mp := &pb.ModelProto{IrVersion: proto.Int64(8), ProducerName: proto.String(doc), DocString: proto.String(doc),
		OpsetImport: []*pb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(17)}}, Graph: g}
	if doc != "" {
		mp.MetadataProps = []*pb.StringStringEntryProto{{Key: proto.String(doc), Value: proto.String(doc)}}
	}
	b, err := proto.Marshal(mp)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

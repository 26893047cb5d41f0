package cuvil

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/cuvil/cuvil/ir"
	pb "github.com/cuvil/cuvil/ir/onnx/onnxpb"
)

func TestAllowListParse(t *testing.T) {
	a, err := ParseAllowList(`
# comment line
ai.onnx:Conv            # every version
Relu:6-13               # ai.onnx, op:versions
Sigmoid                 # ai.onnx, bare op
:Tanh:13
ai.onnx:Gemm:11-
ai.onnx:MatMul:-12
ai.onnx.ml:*
com.acme:FastGelu:1
`, "list.txt")
	if err != nil {
		t.Fatal(err)
	}
	if a.Len() != 8 || a.String() != "list.txt" {
		t.Errorf("%d entries from %s, want 8 from list.txt", a.Len(), a)
	}
	for _, c := range []struct {
		domain, op string
		version    int
		ok         bool
	}{
		{"", "Conv", 1, true}, {"ai.onnx", "Conv", 22, true},
		{"", "Relu", 6, true}, {"", "Relu", 13, true}, {"", "Relu", 14, false}, {"", "Relu", 1, false},
		{"", "Sigmoid", 13, true}, {"", "Tanh", 13, true}, {"", "Tanh", 6, false},
		{"", "Gemm", 11, true}, {"", "Gemm", 13, true}, {"", "Gemm", 9, false},
		{"", "MatMul", 1, true}, {"", "MatMul", 13, false},
		{"ai.onnx.ml", "TreeEnsembleClassifier", 3, true}, {"ai.onnx.ml", "Conv", 1, true},
		{"com.acme", "FastGelu", 1, true}, {"com.acme", "FastGelu", 2, false}, {"com.acme", "Relu", 1, false},
		{"", "Add", 14, false}, {"com.other", "Conv", 1, false},
	} {
		if got := a.Allows(c.domain, c.op, c.version); got != c.ok {
			t.Errorf("Allows(%q, %q, %d) = %v, want %v", c.domain, c.op, c.version, got, c.ok)
		}
	}

	for _, c := range []struct{ text, want string }{
		{"# only comments\n\n", "bad.txt: the allow-list has no entries"},
		{"Conv\na:b:c:d", "bad.txt:2: \"a:b:c:d\": want domain:op[:versions]"},
		{"Conv:0", `version "0" is not a number >= 1`},
		{"Conv:5-3", "versions 5-3 are an empty range"},
		{"Conv:-", "empty versions"},
		{"ai.onnx:Conv:", "empty versions"},
		{"ai.onnx:", "no op"},
		{"ai.onnx:Co nv", `op "Co nv" is not a name`},
		{"ai onnx:Conv", `domain "ai onnx" is not a domain`},
		{"Conv:1x", `version "1x" is not a number`},
		{"ai.onnx:Conv:a-b", `version "a" is not a number`},
	} {
		_, err := ParseAllowList(c.text, "bad.txt")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one containing %q", c.text, err, c.want)
		}
	}

	dir := t.TempDir()
	file := filepath.Join(dir, "ops.txt")
	if err := os.WriteFile(file, []byte("Relu\nai.onnx:Conv:11\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		arg  string
		n    int
		want string // error substring
	}{
		{file, 2, ""},
		{"Relu,ai.onnx:Conv:11-,Gemm", 3, ""},
		{"default", DefaultAllowList().Len(), ""},
		{filepath.Join(dir, "missing.txt"), 0, "not found"},
		{"Relu,,x:", 0, "the -allow-ops list:3"},
		{dir, 0, "not found"}, // a folder is not a list file
	} {
		a, err := ParseAllowOps(c.arg)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("ParseAllowOps(%q): %v", c.arg, err)
		case c.want == "" && a.Len() != c.n:
			t.Errorf("ParseAllowOps(%q): %d entries, want %d", c.arg, a.Len(), c.n)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("ParseAllowOps(%q): error %v, want one containing %q", c.arg, err, c.want)
		}
	}
}

// The default list names ops cuvil has.
func TestDefaultAllowList(t *testing.T) {
	a := DefaultAllowList()
	if a.Len() < 80 {
		t.Errorf("the default allow-list has %d entries", a.Len())
	}
	for _, e := range a.entries {
		if e.domain != "" || ir.LookupOp("", e.op) == nil {
			t.Errorf("docs/allow-ops.txt: %s:%s is not an ai.onnx op of cuvil's table", e.domain, e.op)
		}
	}
	for _, op := range []string{"If", "Loop", "Scan", "RandomUniform", "Multinomial", "StringNormalizer", "ImageDecoder", "SequenceConstruct"} {
		if a.Allows("", op, 1) || a.Allows("", op, 20) {
			t.Errorf("the default allow-list allows %s", op)
		}
	}
}

// sandboxCompile compiles model bytes (with extra files beside them) and
// returns the error.
func sandboxCompile(t *testing.T, model []byte, files map[string][]byte, opts Options) error {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "model.onnx")
	if err := os.WriteFile(path, model, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module sandbox\n\ngo 1.24\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	opts.Model, opts.Out, opts.Pkg = path, filepath.Join(dir, "out", "pkg"), "pkg"
	return Compile(opts)
}

func mustAllow(t *testing.T, list string) *AllowList {
	t.Helper()
	a, err := ParseAllowOps(list)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// ifModel: y = If(c) { Neg(x) } else { Relu(x) }.
func ifModel() []byte {
	branch := func(name, op, node string) *pb.GraphProto {
		return &pb.GraphProto{Name: proto.String(name), Output: []*pb.ValueInfoProto{f32Info(name+"_out", 2)},
			Node: []*pb.NodeProto{{Name: proto.String(node), OpType: proto.String(op), Input: []string{"x"}, Output: []string{name + "_out"}}}}
	}
	g := &pb.GraphProto{Name: proto.String("g"), Input: []*pb.ValueInfoProto{boolInfo("c"), f32Info("x", 2)}, Output: []*pb.ValueInfoProto{f32Info("y", 2)},
		Node: []*pb.NodeProto{{Name: proto.String("choose"), OpType: proto.String("If"), Input: []string{"c"}, Output: []string{"y"},
			Attribute: []*pb.AttributeProto{
				{Name: proto.String("then_branch"), Type: pb.AttributeProto_GRAPH.Enum(), G: branch("then", "Neg", "neg_in_then")},
				{Name: proto.String("else_branch"), Type: pb.AttributeProto_GRAPH.Enum(), G: branch("else", "Relu", "relu_in_else")}}}}}
	b, _ := proto.Marshal(&pb.ModelProto{IrVersion: proto.Int64(8), OpsetImport: []*pb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(17)}}, Graph: g})
	return b
}

// functionModel: y = my:Twice(x), a model-local function whose body is
// Neg then Relu.
func functionModel() []byte {
	imports := []*pb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(17)}, {Domain: proto.String("my"), Version: proto.Int64(1)}}
	f := &pb.FunctionProto{Name: proto.String("Twice"), Domain: proto.String("my"), Input: []string{"a"}, Output: []string{"b"}, OpsetImport: imports,
		Node: []*pb.NodeProto{{Name: proto.String("body_neg"), OpType: proto.String("Neg"), Input: []string{"a"}, Output: []string{"t"}},
			{Name: proto.String("body_relu"), OpType: proto.String("Relu"), Input: []string{"t"}, Output: []string{"b"}}}}
	mp := &pb.ModelProto{IrVersion: proto.Int64(8), OpsetImport: imports, Functions: []*pb.FunctionProto{f},
		Graph: &pb.GraphProto{Name: proto.String("g"), Input: []*pb.ValueInfoProto{f32Info("x", 2)}, Output: []*pb.ValueInfoProto{f32Info("y", 2)},
			Node: []*pb.NodeProto{{Name: proto.String("call"), OpType: proto.String("Twice"), Domain: proto.String("my"), Input: []string{"x"}, Output: []string{"y"}}}}}
	b, _ := proto.Marshal(mp)
	return b
}

func TestSandboxCompile(t *testing.T) {
	digits, err := os.ReadFile("testdata/digits/model.onnx")
	if err != nil {
		t.Fatal(err)
	}
	digitsOps := "Conv,Relu,MaxPool,Flatten,Gemm,LogSoftmax" // the trained demo CNN (opset 13): Relu-13, LogSoftmax-13, Conv-11, MaxPool-12
	for _, c := range []struct {
		name  string
		model []byte
		files map[string][]byte
		opts  Options
		want  []string // error substrings; none: compiles
	}{
		// allowed
		{"digits, sandbox defaults", digits, nil, Options{Sandbox: true}, nil},
		{"digits, its own ops", digits, nil, Options{AllowOps: mustAllow(t, digitsOps)}, nil},
		{"digits, version ranges that hold", digits, nil, Options{AllowOps: mustAllow(t, "Conv:11,Relu:13-,MaxPool:8-12,Flatten:13,Gemm:-13,LogSoftmax:13")}, nil},
		{"if, every op allowed", ifModel(), nil, Options{Sandbox: true, AllowOps: mustAllow(t, "If,Neg,Relu")}, nil},
		{"function body allowed", functionModel(), nil, Options{AllowOps: mustAllow(t, "Neg,Relu")}, nil},

		// refused: main graph
		{"digits, no LogSoftmax", digits, nil, Options{AllowOps: mustAllow(t, "Conv,Relu,MaxPool,Flatten,Gemm")},
			[]string{`node "/classifier/classifier.4/LogSoftmax" (LogSoftmax) in the main graph`, "op ai.onnx:LogSoftmax:13 is not allowed by the -allow-ops list"}},
		{"digits, Relu version below", digits, nil, Options{AllowOps: mustAllow(t, "Conv,Relu:6-12,MaxPool,Flatten,Gemm,LogSoftmax")},
			[]string{"(Relu) in the main graph", "ai.onnx:Relu:13 is not allowed"}},
		{"digits, Relu version above", digits, nil, Options{AllowOps: mustAllow(t, "Conv,Relu:14-,MaxPool,Flatten,Gemm,LogSoftmax")},
			[]string{"ai.onnx:Relu:13 is not allowed"}},
		{"digits, everything else listed", digits, nil, Options{AllowOps: mustAllow(t, "Relu")},
			[]string{"(Conv) in the main graph", "also refused: ai.onnx:Flatten:13, ai.onnx:Gemm:13, ai.onnx:LogSoftmax:13, ai.onnx:MaxPool:12"}},
		// refused: If branch
		{"if, Neg refused", ifModel(), nil, Options{AllowOps: mustAllow(t, "If,Relu")},
			[]string{`node "neg_in_then" (Neg) in the subgraph of node "choose" (If) attribute then_branch`, "ai.onnx:Neg:13"}},
		{"if, sandbox default list has no If", ifModel(), nil, Options{Sandbox: true},
			[]string{`node "choose" (If) in the main graph`, "not allowed by docs/allow-ops.txt"}},
		// refused: function body (inlined: the call is gone, its body checked)
		{"function body, Neg refused", functionModel(), nil, Options{AllowOps: mustAllow(t, "my:Twice,Relu")},
			[]string{"(Neg) in the main graph", "ai.onnx:Neg:13 is not allowed"}},

		// the sandbox's other limits
		{"external data, no sandbox", externalModel("w.bin", false), map[string][]byte{"w.bin": make([]byte, 12)}, Options{}, nil},
		{"external data, sandbox", externalModel("w.bin", false), map[string][]byte{"w.bin": make([]byte, 12)}, Options{Sandbox: true},
			[]string{`tensor "w": has external data, which the sandbox refuses`}},
		{"nesting 3, sandbox", nestedIf(3), nil, Options{Sandbox: true, AllowOps: mustAllow(t, "If")}, nil},
		{"nesting 5, sandbox", nestedIf(5), nil, Options{Sandbox: true, AllowOps: mustAllow(t, "If")}, []string{"nest"}},
		{"nesting 5, sandbox with -max-depth 8", nestedIf(5), nil, Options{Sandbox: true, MaxDepth: 8, AllowOps: mustAllow(t, "If")}, nil},
		{"input dim 2^25, no sandbox", text(t, "opset ai.onnx 17\ngraph main(%x: f32[33554432]) -> (%y) {\n  %y = Relu @r <?[?]> %x\n}"), nil, Options{}, nil},
		{"input dim 2^25, sandbox", text(t, "opset ai.onnx 17\ngraph main(%x: f32[33554432]) -> (%y) {\n  %y = Relu @r <?[?]> %x\n}"), nil, Options{Sandbox: true},
			[]string{`input "x": dim 0 is 33554432, above the sandbox's limit of 16777216`}},
		{"inferred dim 2^25, sandbox", text(t, "opset ai.onnx 17\ngraph main(%x: f32[1]) -> (%y) {\n  %s = const i64[1] {33554432}\n  %y = Expand @grow <?[?]> %x %s\n}"), nil, Options{Sandbox: true},
			[]string{`dim 0 is 33554432`, `node "grow" (Expand)`}},
		{"inferred dim, -max-dim without sandbox", text(t, "opset ai.onnx 17\ngraph main(%x: f32[1]) -> (%y) {\n  %s = const i64[1] {100}\n  %y = Expand @grow <?[?]> %x %s\n}"), nil, Options{MaxDim: 99},
			[]string{`dim 0 is 100, above the sandbox's limit of 99`}},
		{"dim limit lifted", text(t, "opset ai.onnx 17\ngraph main(%x: f32[33554432]) -> (%y) {\n  %y = Relu @r <?[?]> %x\n}"), nil, Options{Sandbox: true, MaxDim: -1}, nil},
	} {
		err := sandboxCompile(t, c.model, c.files, c.opts)
		switch {
		case len(c.want) == 0 && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case len(c.want) > 0 && err == nil:
			t.Errorf("%s: compiled, want an error containing %q", c.name, c.want)
		case len(c.want) > 0:
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s: error %q does not contain %q", c.name, err, w)
				}
			}
		}
	}
}

package ir

import (
	"math"
	"strings"
	"testing"
)

// roundTrips are texts in the printer's canonical form: Parse then Print
// must give them back unchanged.
var roundTrips = []string{
	// Every attribute kind, inline constants, node names, omitted inputs.
	`ir_version 8
producer "cuvil test"
opset ai.onnx 17
graph main(%x: f32[N,3,8,8], %s: i64[2]) -> (%y, %c) {
  %w = const f32[2,3,1,1] {1, -2.5, 3e-08, 4, NaN, -Inf}
  %b = const f32[2] {0.1, 0.2}
  %c = const i64[] {7}
  %conv = Conv @Conv_12 <f32[N,2,8,8]> %x %w %b {auto_pad="NOTSET" dilations=[1,1] group=1 kernel_shape=[1,1] pads=[0,0,0,0] strides=[1,1]}
  %y = Clip <f32[N,2,8,8]> %conv _ %b
  %r = Resize <f32[?]> %x _ _ %s {mode="linear"}
  %k = Constant <f32[2]> {value=tensor f32[2] {1.5, 2}}
  %e = Constant <i64[0]> {value_ints=ints[]}
  %fl = Constant <f32[3]> {value_floats=[1.0,0.5,-2.0]}
  %st = Constant <string[2]> {value_strings=["a","b \"q\""]}
  %sf = Constant <f32[]> {value_float=1.0}
}
`,
	// Symbols, unranked and unknown types, seq/opt/map types, custom
	// domains, explicit versions, omitted outputs, quoted names.
	`opset ai.onnx 13
opset com.example 1
graph "main graph"(%"input:0": ?[?], %q: ?[], %sq: seq<f32[batch,"seq len"]>, %o: opt<seq<?>>, %m: map<i64,f32[]>, %zm: seq<map<string,f32[]>>) -> (%y) {
  %y, _ = Dropout <f32[batch,4], _> %"input:0"
  %z = com.example.Fancy <bf16[1]> %q {alpha=2.0 names=strings[] ts=[tensor bool[2] {true, false}, tensor string[] {"x"}] tys=[type<f32[2]>, type<seq<i8[?]>>]}
  %t = Optional:15 <opt<f32[2]>> %"input:0" {type=type<f32[2]>}
  Identity @nothing_out %q
}
`,
	// Subgraphs that capture outer values, nested two deep.
	`opset ai.onnx 16
graph main(%cond: bool[], %x: f32[2]) -> (%out) {
  %one = const f32[] {1}
  %out = If <f32[2]> %cond {else_branch=graph else() -> (%e) {
      %e = Neg <f32[2]> %x
    } then_branch=graph then() -> (%t) {
      %t = Loop <f32[2]> _ %cond %x {body=graph body(%i: i64[], %c: bool[], %v: f32[2]) -> (%c, %v2) {
          %v2 = Add <f32[2]> %v %one
        }}
    }}
}
`,
	// Every dtype as a constant.
	`opset ai.onnx 17
graph dtypes() -> (%a) {
  %a = const u8[2] {0, 255}
  %b = const i8[2] {-128, 127}
  %c = const u16[1] {65535}
  %d = const i16[1] {-32768}
  %e = const i32[1] {-2147483648}
  %f = const i64[1] {-9223372036854775808}
  %g = const u32[1] {4294967295}
  %h = const u64[1] {18446744073709551615}
  %i = const f16[3] {0.5, 65504, 5.9604645e-08}
  %j = const bf16[2] {1, -3.3895314e+38}
  %k = const f64[2] {0.1, 1e+300}
  %l = const c64[1] {(1+2i)}
  %m = const c128[1] {(-0.5-1e-10i)}
  %n = const bool[2,1] {true, false}
  %o = const string[0] {}
  %p = const f32[2] {-0, +Inf}
}
`,
	// Graph attributes (graphs kind) and an empty graphs list.
	`opset com.example 3
graph g(%x: f32[1]) -> (%y) {
  %y = com.example.Multi <f32[1]> %x {bodies=[graph a() -> (%x) {
    }, graph b(%u: f32[1]) -> (%u) {
    }] none=graphs[]}
}
`,
}

func TestPrintParseRoundTrip(t *testing.T) {
	for i, text := range roundTrips {
		m, err := Parse(text)
		if err != nil {
			t.Errorf("case %d: Parse: %v", i, err)
			continue
		}
		if got := m.String(); got != text {
			t.Errorf("case %d: Print(Parse(text)) differs\n--- got\n%s--- want\n%s", i, got, text)
		}
	}
}

func TestParseBuildsGraph(t *testing.T) {
	m, err := Parse(roundTrips[2])
	if err != nil {
		t.Fatal(err)
	}
	g := m.Graph
	if n := g.Nodes[0]; n.Op != "If" || n.Version != 16 || n.Name != "out" || n.Outputs[0].Def != n {
		t.Errorf("If node = %+v", n)
	}
	then := g.Nodes[0].Attr("then_branch").G
	if then.Parent != g {
		t.Errorf("then_branch.Parent = %p, want main %p", then.Parent, g)
	}
	loop := then.Nodes[0]
	if loop.Inputs[0] != nil || loop.Inputs[1] != g.Inputs[0] || loop.Inputs[2] != g.Inputs[1] {
		t.Errorf("Loop inputs %v do not capture main's values", loop.Inputs)
	}
	body := loop.Attr("body").G
	add := body.Nodes[0]
	if add.Inputs[1] != g.Consts[0] {
		t.Errorf("Add reads %v, want the outer const %v", add.Inputs[1], g.Consts[0])
	}
	if caps := then.Captures(); len(caps) != 3 {
		t.Errorf("then_branch captures %v, want cond, x and one", caps)
	}
	if body.Outputs[0] != body.Inputs[1] {
		t.Errorf("body output 0 is %v, want its input %%c", body.Outputs[0])
	}
	if err := Verify(m); err != nil {
		t.Errorf("Verify: %v", err)
	}
}

func TestParseConstValues(t *testing.T) {
	m, err := Parse(roundTrips[3])
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*Tensor{}
	for _, c := range m.Graph.Consts {
		byName[c.Name] = c.Const
		if err := c.Const.Check(); err != nil {
			t.Errorf("%s: %v", c.Name, err)
		}
	}
	if got := byName["f"].Int64s()[0]; got != math.MinInt64 {
		t.Errorf("i64 = %d", got)
	}
	if got := byName["i"].Float64s(); got[1] != 65504 || got[2] != math.Ldexp(1, -24) {
		t.Errorf("f16 = %v", got)
	}
	if got := byName["j"].Raw; got[0] != 0x80 || got[1] != 0x3f {
		t.Errorf("bf16 1 = % x, want 80 3f", got[:2])
	}
}

func TestPrintDigest(t *testing.T) {
	big := make([]float32, 17)
	for i := range big {
		big[i] = float32(i)
	}
	w := &Value{Name: "w", Const: NewTensorF32([]int64{17}, big)}
	w.Type = w.Const.Type()
	g := &Graph{Name: "g", Consts: []*Value{w}, Outputs: []*Value{w}}
	text := (&Model{Graph: g, Opsets: map[string]int64{"": 17}}).String()
	want := "  %w = const f32[17] sha256:"
	if !strings.Contains(text, want) {
		t.Fatalf("printed\n%s\nwant a line starting %q", text, want)
	}
	_, err := Parse(text)
	if err == nil || !strings.Contains(err.Error(), "3:22: constant %w is printed as a digest") {
		t.Errorf("Parse of a digest: %v", err)
	}
}

func TestGraphStringShowsVersions(t *testing.T) {
	m, err := Parse("opset ai.onnx 13\ngraph g(%x: f32[2]) -> (%y) {\n  %y = Relu <f32[2]> %x\n}\n")
	if err != nil {
		t.Fatal(err)
	}
	want := "graph g(%x: f32[2]) -> (%y) {\n  %y = Relu:13 <f32[2]> %x\n}"
	if got := m.Graph.String(); got != want {
		t.Errorf("Graph.String() =\n%s\nwant\n%s", got, want)
	}
}

func TestParseErrors(t *testing.T) {
	const head = "opset ai.onnx 17\ngraph g(%x: f32[2]) -> (%y) {\n"
	for _, c := range []struct{ text, want string }{
		{head + "  %y = Relu <f32[2]> %z\n}\n", "3:22: undefined value %z"},
		{head + "  %y = Relu <f32[2]> %x\n  %y = Relu <f32[2]> %x\n}\n", "4:3: value %y is already defined"},
		{head + "  %y = Relu <f32[2]> %x\n", "4:1: graph g is not closed"},
		{head + "  %y = Relu <f32[2], f32[2]> %x\n}\n", `3:8: Relu has 1 outputs but 2 output types`},
		{head + "  %y = Relu <f32[2]> %x {alpha=1 alpha=2}\n}\n", `3:34: attribute "alpha" given twice`},
		{head + "  %y = Relu <f33[2]> %x\n}\n", "3:14: unknown dtype \"f33\""},
		{head + "  %y = const f32[2] {1}\n}\n", "3:21: constant %y has 1 elements, want 2 for f32[2]"},
		{head + "  %y = const f32[N] {1}\n}\n", "3:21: a constant needs a constant shape, have f32[N]"},
		{head + "  %y = const u8[1] {256}\n}\n", "3:21: bad u8 element \"256\""},
		{head + "  %y = Relu <f32[2]> %x {a=[]}\n}\n", "3:28: an empty list needs its kind, e.g. ints[]"},
		{head + "  %y = Relu <f32[2]> %x {a=[1, \"s\"]}\n}\n", `3:32: "s" in a list of ints`},
		{head + "  %y = NoSuchOp <f32[2]> %x\n}\n", "3:8: cannot resolve the version of NoSuchOp: no opset for its domain, or the op does not exist at that opset; write NoSuchOp:N"},
		{head + "  %y = Relu <f32[2]> %x $\n}\n", "3:25: unexpected character '$'"},
		{"graph g() -> (%nope) {\n}\n", "1:15: graph output %nope is not defined"},
		{"opset ai.onnx 17\nopset ai.onnx 16\n", `2:1: opset for domain "" given twice`},
		{"hello\n", `1:1: want ir_version, producer, opset or graph, have "hello"`},
	} {
		_, err := Parse(c.text)
		if err == nil || err.Error() != c.want {
			t.Errorf("Parse(%q)\n  error %v\n  want  %s", c.text, err, c.want)
		}
	}
}

func TestF16Conversion(t *testing.T) {
	for h := 0; h < 1<<16; h++ {
		f := F16ToF32(uint16(h))
		if f != f {
			if got := f32ToF16(f); got&0x7c00 != 0x7c00 || got&0x3ff == 0 {
				t.Fatalf("NaN %#04x -> %#04x, not a NaN", h, got)
			}
			continue
		}
		if got := f32ToF16(f); got != uint16(h) {
			t.Fatalf("f16 %#04x -> %v -> %#04x", h, f, got)
		}
	}
	for _, c := range []struct {
		f    float32
		want uint16
	}{
		{1 + 1.0/2048, 0x3c00},             // tie, rounds to even
		{1 + 3.0/2048, 0x3c02},             // tie, rounds to even (up)
		{65520, 0x7c00},                    // rounds to Inf
		{float32(math.Ldexp(1, -25)), 0},   // tie with zero
		{float32(math.Ldexp(1.5, -25)), 1}, // above the tie
	} {
		if got := f32ToF16(c.f); got != c.want {
			t.Errorf("f32ToF16(%v) = %#04x, want %#04x", c.f, got, c.want)
		}
	}
	if got := f32ToBF16(1 + 1.0/256); got != 0x3f80 {
		t.Errorf("f32ToBF16 tie = %#04x, want 0x3f80", got)
	}
}

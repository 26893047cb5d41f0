package ir

import (
	"fmt"
	"strings"
	"testing"
)

func mustParse(t *testing.T, text string) *Model {
	t.Helper()
	m, err := Parse(text)
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, text)
	}
	return m
}

func TestVerifyAcceptsValidModels(t *testing.T) {
	for i, text := range roundTrips {
		if i == 1 || i == 4 { // custom-domain and type-free examples
			continue
		}
		if err := Verify(mustParse(t, text)); err != nil {
			t.Errorf("case %d: %v", i, err)
		}
	}
	// Older versions with older arity and attributes.
	old := mustParse(t, `opset ai.onnx 4
graph g(%x: f32[2,3]) -> (%y, %z) {
  %y = Reshape <f32[3,2]> %x {shape=[3,2]}
  %z = Slice <f32[1,3]> %x {ends=[1] starts=[0]}
}
`)
	if err := Verify(old); err != nil {
		t.Errorf("opset 4 model: %v", err)
	}
}

// TestVerifyErrors has one case per kind of error, each with the exact
// message.
func TestVerifyErrors(t *testing.T) {
	const head = "opset ai.onnx 17\ngraph g(%x: f32[2], %i: i64[2], %b: bool[2]) -> (%y) {\n"
	for _, c := range []struct{ name, body, want string }{
		{"dtype mismatch", `%w = const f16[2] {1, 2}
  %y = Add @Add_3 <f32[2]> %x %w`, `node "Add_3" (Add): input 1 (B) has dtype f16, want f32`},
		{"dtype not allowed", `%y = Relu <f32[2]> %b`, `node "y" (Relu): input 0 (X) has dtype bool, want one of bf16,f16,f32,f64,i8,i16,i32,i64`},
		{"single allowed dtype", `%y = Reshape <f32[2]> %x %x`, `node "y" (Reshape): input 1 (shape) has dtype f32, want i64`},
		{"output dtype", `%y = Neg <f32[2]> %i`, `node "y" (Neg): output 0 (Y) has dtype f32, want i64`},
		{"too few inputs", `%y = Conv <f32[2]> %x`, `node "y" (Conv): has 1 inputs, want 2 to 3`},
		{"too many inputs", `%y = Relu <f32[2]> %x %x`, `node "y" (Relu): has 2 inputs, want 1`},
		{"too many outputs", `%y, %z = Relu <f32[2], f32[2]> %x`, `node "y" (Relu): has 2 outputs, want 1`},
		{"missing required input", `%y = Gemm <f32[2]> _ %x`, `node "y" (Gemm): input 0 (A) is missing`},
		{"unknown attribute", `%y = Relu <f32[2]> %x {alpha=1.0}`, `node "y" (Relu): unknown attribute "alpha" for Relu-14`},
		{"attribute of an older version", `%y = Reshape <f32[2]> %x %i {shape=[2]}`, `node "y" (Reshape): unknown attribute "shape" for Reshape-14`},
		{"attribute kind", `%y = Softmax <f32[2]> %x {axis=1.0}`, `node "y" (Softmax): attribute "axis" is float, want int`},
		{"required attribute", `%y = SpaceToDepth <f32[2]> %x`, `node "y" (SpaceToDepth): missing required attribute "blocksize"`},
		{"unknown op", `%y = Frobnicate:1 <f32[2]> %x`, `node "y" (Frobnicate): unknown op Frobnicate`},
		{"bad version", `%y = Relu:7 <f32[2]> %x`, `node "y" (Relu): version 7 is not a version of Relu (have 1,6,13,14)`},
		{"version not the opset's", `%y = Relu:13 <f32[2]> %x`, `node "y" (Relu): version 13, want 14 for opset 17`},
		{"kind mismatch", `%y = SequenceLength <i64[]> %x`, `node "y" (SequenceLength): input 0 (input_sequence) is a tensor, want seq`},
	} {
		m := mustParse(t, head+"  "+c.body+"\n}\n")
		err := Verify(m)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s:\n  error %v\n  want  %s", c.name, err, c.want)
		}
	}
}

// Structural errors the text form cannot express are built directly.
func TestVerifyStructure(t *testing.T) {
	f32 := TensorType(F32, ShapeOf(2))
	newModel := func() (*Model, *Value, *Node) {
		x := &Value{Name: "x", Type: f32}
		n := &Node{Name: "relu", Op: "Relu", Version: 14, Inputs: []*Value{x}}
		y := &Value{Name: "y", Type: f32, Def: n}
		n.Outputs = []*Value{y}
		g := &Graph{Name: "g", Inputs: []*Value{x}, Outputs: []*Value{y}, Nodes: []*Node{n}}
		return &Model{Graph: g, Opsets: map[string]int64{"": 17}}, x, n
	}
	if m, _, _ := newModel(); Verify(m) != nil {
		t.Fatalf("base model: %v", Verify(m))
	}
	for _, c := range []struct {
		name   string
		break_ func(m *Model, x *Value, n *Node)
		want   string
	}{
		{"defined twice", func(m *Model, x *Value, n *Node) { m.Graph.Inputs = append(m.Graph.Inputs, x) },
			`graph "g" input 1: value %x is already defined by graph "g" input 0`},
		{"name reused", func(m *Model, x *Value, n *Node) { n.Outputs[0].Name = "x" },
			`node "relu" (Relu): value name %x is also used by the value defined by graph "g" input 0`},
		{"no name", func(m *Model, x *Value, n *Node) { n.Outputs[0].Name = "" },
			`node "relu" (Relu): value has no name`},
		{"use before definition", func(m *Model, x *Value, n *Node) { n.Inputs[0] = n.Outputs[0] },
			`node "relu" (Relu): input 0 %y is not defined before use`},
		{"undefined input", func(m *Model, x *Value, n *Node) { n.Inputs[0] = &Value{Name: "ghost", Type: f32} },
			`node "relu" (Relu): input 0 %ghost is not defined before use`},
		{"wrong Def", func(m *Model, x *Value, n *Node) { n.Outputs[0].Def = nil },
			`node "relu" (Relu): output %y has Def nil, want this node`},
		{"graph output undefined", func(m *Model, x *Value, n *Node) { m.Graph.Outputs[0] = &Value{Name: "z"} },
			`graph "g": output 0 %z is not defined`},
		{"input with Def", func(m *Model, x *Value, n *Node) { x.Def = n },
			`graph "g" input 0 %x: is a graph input but has a defining node or constant data`},
		{"const without tensor", func(m *Model, x *Value, n *Node) {
			m.Graph.Consts = []*Value{{Name: "c", Type: f32}}
		}, `const %c: has no tensor`},
		{"const bad tensor", func(m *Model, x *Value, n *Node) {
			m.Graph.Consts = []*Value{{Name: "c", Type: f32, Const: &Tensor{DType: F32, Shape: []int64{2}, Raw: make([]byte, 4)}}}
		}, `const %c: tensor "": has 4 bytes of data, shape [2] of f32 wants 8`},
		{"const type mismatch", func(m *Model, x *Value, n *Node) {
			m.Graph.Consts = []*Value{{Name: "c", Type: TensorType(F32, ShapeOf(3)), Const: NewTensorF32([]int64{2}, []float32{1, 2})}}
		}, `const %c: has type f32[3], want f32[2] (its tensor's)`},
		{"unsorted attributes", func(m *Model, x *Value, n *Node) {
			n.Op, n.Version = "LeakyRelu", 16
			n.Attrs = []*Attr{{Name: "alpha", Kind: AttrFloat}, {Name: "alpha", Kind: AttrFloat}}
		}, `node "relu" (LeakyRelu): attributes not sorted by name: "alpha" after "alpha"`},
		{"no opset for domain", func(m *Model, x *Value, n *Node) { delete(m.Opsets, "") },
			`node "relu" (Relu): the model imports no opset for domain ""`},
		{"op too new for opset", func(m *Model, x *Value, n *Node) { m.Opsets[""] = 16; n.Op, n.Version = "LayerNormalization", 17 },
			`node "relu" (LayerNormalization): op has no version for opset 16 (versions 17)`},
	} {
		m, x, n := newModel()
		c.break_(m, x, n)
		err := Verify(m)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s:\n  error %v\n  want  %s", c.name, err, c.want)
		}
	}
}

func TestVerifySubgraphScopes(t *testing.T) {
	// A subgraph may read values defined before its node, but not after.
	m := mustParse(t, `opset ai.onnx 16
graph g(%c: bool[], %x: f32[2]) -> (%o) {
  %o = If <f32[2]> %c {else_branch=graph e() -> (%x) {
    } then_branch=graph t() -> (%n) {
      %n = Neg <f32[2]> %x
    }}
  %late = Neg <f32[2]> %x
}
`)
	if err := Verify(m); err != nil {
		t.Fatalf("valid captures: %v", err)
	}
	then := m.Graph.Nodes[0].Attr("then_branch").G
	then.Nodes[0].Inputs[0] = m.Graph.Nodes[1].Outputs[0]
	want := `node "n" (Neg): input 0 %late is not defined before use`
	if err := Verify(m); err == nil || err.Error() != want {
		t.Errorf("capture of a later value:\n  error %v\n  want  %s", err, want)
	}
	// Sibling subgraphs may reuse a name; a subgraph may not shadow.
	sib := mustParse(t, `opset ai.onnx 16
graph g(%c: bool[], %x: f32[2]) -> (%o) {
  %o = If <f32[2]> %c {else_branch=graph e() -> (%n) {
      %n = Neg <f32[2]> %x
    } then_branch=graph t() -> (%n) {
      %n = Abs <f32[2]> %x
    }}
}
`)
	if err := Verify(sib); err != nil {
		t.Errorf("sibling names: %v", err)
	}
	sib.Graph.Nodes[0].Attr("then_branch").G.Nodes[0].Outputs[0].Name = "x"
	want = `node "n" (Abs): value name %x is also used by the value defined by graph "g" input 1`
	if err := Verify(sib); err == nil || err.Error() != want {
		t.Errorf("shadowing:\n  error %v\n  want  %s", err, want)
	}
}

func TestVerifyCapsErrors(t *testing.T) {
	var b strings.Builder
	b.WriteString("opset ai.onnx 17\ngraph g(%x: f32[2]) -> (%x) {\n")
	for i := 0; i < 25; i++ {
		fmt.Fprintf(&b, "  %%y%d = Relu <f32[2]> %%x {bad=1}\n", i)
	}
	b.WriteString("}\n")
	err := Verify(mustParse(t, b.String()))
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 21 || lines[20] != "... and 5 more errors" {
		t.Errorf("got %d lines, last %q; want 20 errors and a count of 5 more", len(lines), lines[len(lines)-1])
	}
}

func TestVerifyGraphWithoutModel(t *testing.T) {
	m := mustParse(t, "opset ai.onnx 13\ngraph g(%x: f32[2]) -> (%y) {\n  %y = Relu <f32[2]> %x\n}\n")
	if err := VerifyGraph(m.Graph); err != nil {
		t.Errorf("VerifyGraph: %v", err)
	}
	m.Graph.Nodes[0].Version = 0
	want := `node "y" (Relu): version 0 is not a version of Relu (have 1,6,13,14)`
	if err := VerifyGraph(m.Graph); err == nil || err.Error() != want {
		t.Errorf("VerifyGraph with version 0:\n  error %v\n  want  %s", err, want)
	}
}

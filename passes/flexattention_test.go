package passes

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/cuvil/cuvil/ir"
)

// TestInlineFlexAttention lowers a FlexAttention whose score_mod scales
// the scores by 1.7 and whose prob_mod halves the probabilities, evaluates
// the lowered graph with the kernels, and compares it with the
// kernel of ONNX Attention (what FlexAttention without subgraphs runs) at 1.7
// times the default scale, halved.
func TestInlineFlexAttention(t *testing.T) {
	b := newBuilder(t, 26)
	b.m.Opsets[ir.PreviewDomain] = 1
	q := b.input("q", ir.F64, 2, 3, 4, 5)
	k := b.input("k", ir.F64, 2, 3, 6, 5)
	v := b.input("v", ir.F64, 2, 3, 6, 7)
	mod := func(name string, f float64) *ir.Graph {
		sg := &ir.Graph{Name: name, Parent: b.g}
		x := &ir.Value{Name: "x", Type: ir.TensorType(ir.F64, shape("B", "H", "L", "S"))}
		sg.Inputs = []*ir.Value{x}
		c := &ir.Value{Name: "c", Const: floatTensor(ir.F64, nil, []float64{f})}
		c.Const.Name, c.Type = "c", c.Const.Type()
		sg.Consts = []*ir.Value{c}
		n := b.nodeIn(sg, "Mul", "m", []*ir.Value{x, c}, 1)
		sg.Outputs = []*ir.Value{n.Outputs[0]}
		return sg
	}
	fl := b.node("FlexAttention", "flex", []*ir.Value{q, k, v}, 1, aGraph("score_mod", mod("sm", 1.7)), aGraph("prob_mod", mod("pm", 0.5)))
	fl.Domain, fl.Version = ir.PreviewDomain, 1
	b.g.Outputs = fl.Outputs
	if err := InlineFlexAttention.Run(b.m); err != nil {
		t.Fatal(err)
	}
	if _, err := InferShapes(b.m); err != nil {
		t.Fatal(err)
	}
	for _, n := range b.g.Nodes {
		if n.Op == "FlexAttention" {
			t.Fatal("FlexAttention left in the graph")
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	inputs := map[string][]float64{}
	for _, in := range b.g.Inputs {
		n, _ := in.Type.Shape.NumElements()
		vals := make([]float64, n)
		for i := range vals {
			vals[i] = rng.Float64()*2 - 1
		}
		inputs[in.Name] = vals
	}
	got := evalGraph(t, b.g, inputs, nil)[b.g.Outputs[0].Name].Float64s()
	plain := &ir.Node{Name: "plain", Op: "Attention", Version: 23, Outputs: []*ir.Value{{Name: "y"}},
		Attrs: []*ir.Attr{{Name: "scale", Kind: ir.AttrFloat, F: float32(1.7 / math.Sqrt(5))}}}
	var ins []*ir.Tensor
	for _, in := range b.g.Inputs {
		dims, _ := in.Type.Shape.Consts()
		ins = append(ins, floatTensor(ir.F64, dims, inputs[in.Name]))
	}
	outs, err := Eval(plain, ins)
	if err != nil {
		t.Fatal(err)
	}
	want := outs[0].Float64s()
	if len(got) != len(want) {
		t.Fatalf("%d elements, want %d", len(got), len(want))
	}
	for i := range want {
		// float32 scale attribute: 1e-6 relative.
		if math.Abs(got[i]-0.5*want[i]) > 1e-6*(1+math.Abs(want[i])) {
			t.Fatalf("[%d] = %g, want %g", i, got[i], 0.5*want[i])
		}
	}
}

// TestInlineFlexAttentionGQA checks that grouped KV heads with a subgraph
// are refused with an error naming the node.
func TestInlineFlexAttentionGQA(t *testing.T) {
	b := newBuilder(t, 26)
	b.m.Opsets[ir.PreviewDomain] = 1
	q := b.input("q", ir.F32, 1, 4, 2, 3)
	k := b.input("k", ir.F32, 1, 2, 2, 3)
	sg := &ir.Graph{Name: "sm", Parent: b.g}
	x := &ir.Value{Name: "x", Type: ir.TensorType(ir.F32, shape(1, 4, 2, 2))}
	sg.Inputs, sg.Outputs = []*ir.Value{x}, []*ir.Value{x}
	fl := b.node("FlexAttention", "flex", []*ir.Value{q, k, k}, 1, aGraph("score_mod", sg))
	fl.Domain, fl.Version = ir.PreviewDomain, 1
	b.g.Outputs = fl.Outputs
	wantErr(t, InlineFlexAttention.Run(b.m), "flex", "grouped KV heads")
}

package passes

import (
	"math"
	"math/rand/v2"

	"testing"

	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/ir/irtest"
)

// TestGradientGolden runs the gradient pass, then DCE, on its txtar files.
func TestGradientGolden(t *testing.T) {
	irtest.Golden(t, "testdata/gradient/*.txtar", func(m *ir.Model) error {
		if err := Gradient.Run(m); err != nil {
			return err
		}
		return DCE.Run(m)
	})
}

// TestGradientNumeric checks the backward graphs against central finite
// differences of sum(y) on random inputs, evaluating every node with its
// kernel. Each model's outputs are the Gradient outputs.
func TestGradientNumeric(t *testing.T) {
	for _, c := range []struct{ name, text string }{
		{"arith-broadcast", `opset ai.onnx 17
opset ai.onnx.preview.training 1
graph main(%x: f64[2,3], %w: f64[3], %s: f64[1,3], %v: f64[2,1]) -> (%gx, %gw, %gs, %gv) {
  %m = Mul <f64[2,3]> %x %w
  %q = Div <f64[2,3]> %m %s
  %t = Sub <f64[2,3]> %q %x
  %u = Add <f64[2,3]> %t %v
  %y = Sum <f64[2,3]> %u %x %w
  %gx, %gw, %gs, %gv = ai.onnx.preview.training.Gradient @grad <f64[2,3], f64[3], f64[1,3], f64[2,1]> %x %w %s %v {xs=["x","w","s","v"] y="y"}
}`},
		{"unary", `opset ai.onnx 17
opset ai.onnx.preview.training 1
graph main(%x: f64[5]) -> (%gx) {
  %h = const f64[] {1}
  %a = Sigmoid <f64[5]> %x
  %b = Tanh <f64[5]> %a
  %c = Exp <f64[5]> %b
  %d = Log <f64[5]> %c
  %e = Sqrt <f64[5]> %d
  %f = Sub <f64[5]> %x %h
  %g = Relu <f64[5]> %f
  %n = Neg <f64[5]> %g
  %i = Identity <f64[5]> %n
  %y = Mul <f64[5]> %e %i
  %gx = ai.onnx.preview.training.Gradient @grad <f64[5]> %x {xs=["x"] y="y"}
}`},
		{"matmul-batched", `opset ai.onnx 17
opset ai.onnx.preview.training 1
graph main(%a: f64[2,4,3], %w: f64[3,5], %b: f64[1,5,2]) -> (%ga, %gw, %gb) {
  %c = MatMul <f64[2,4,5]> %a %w
  %r = Tanh <f64[2,4,5]> %c
  %y = MatMul <f64[2,4,2]> %r %b
  %ga, %gw, %gb = ai.onnx.preview.training.Gradient @grad <f64[2,4,3], f64[3,5], f64[1,5,2]> %a %w %b {xs=["a","w","b"] y="y"}
}`},
		{"reduce-reshape", `opset ai.onnx 17
opset ai.onnx.preview.training 1
graph main(%x: f64[2,3,4]) -> (%gx) {
  %ax = const i64[1] {1}
  %sh2 = const i64[2] {2, 4}
  %t = Transpose <f64[4,3,2]> %x {perm=[2,1,0]}
  %p = Mul <f64[4,3,2]> %t %t
  %r = ReduceSum <f64[4,2]> %p %ax {keepdims=0}
  %f = Flatten <f64[4,2]> %r {axis=1}
  %q = Reshape <f64[2,4]> %f %sh2
  %y = ReduceSum <f64[1,1]> %q
  %gx = ai.onnx.preview.training.Gradient @grad <f64[2,3,4]> %x {xs=["x"] y="y"}
}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			checkGradientNumeric(t, c.text)
		})
	}
}

func checkGradientNumeric(t *testing.T, text string) {
	t.Helper()
	fwd, err := ir.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	bwd, err := ir.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	if err := Gradient.Run(bwd); err != nil {
		t.Fatal(err)
	}
	if err := ir.Verify(bwd); err != nil {
		t.Fatal(err)
	}
	var gn *ir.Node
	for _, n := range fwd.Graph.Nodes {
		if isGradientNode(n) {
			gn = n
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	inputs := map[string][]float64{}
	for _, v := range fwd.Graph.Inputs {
		n, _ := v.Type.Shape.NumElements()
		vals := make([]float64, n)
		for i := range vals {
			vals[i] = 0.5 + rng.Float64()
		}
		inputs[v.Name] = vals
	}
	got := evalGraph(t, bwd.Graph, inputs, nil)
	yName := gn.AttrString("y", "")
	sumY := func() float64 {
		y := evalGraph(t, fwd.Graph, inputs, gn)[yName]
		s := 0.0
		for _, f := range y.Float64s() {
			s += f
		}
		return s
	}
	const h = 1e-6
	for i, x := range gn.Attr("xs").Strings {
		g := got[bwd.Graph.Outputs[i].Name].Float64s()
		vals := inputs[x]
		if len(g) != len(vals) {
			t.Fatalf("d/d%s has %d elements, want %d", x, len(g), len(vals))
		}
		for j := range vals {
			old := vals[j]
			vals[j] = old + h
			up := sumY()
			vals[j] = old - h
			down := sumY()
			vals[j] = old
			want := (up - down) / (2 * h)
			if math.Abs(g[j]-want) > 1e-5*(1+math.Abs(want)) {
				t.Errorf("d/d%s[%d] = %g, finite difference %g", x, j, g[j], want)
			}
		}
	}
}

// evalGraph runs g's nodes (but skip) on f64 inputs and returns every value
// by name.
func evalGraph(t *testing.T, g *ir.Graph, inputs map[string][]float64, skip *ir.Node) map[string]*ir.Tensor {
	t.Helper()
	vals := map[*ir.Value]*ir.Tensor{}
	byName := map[string]*ir.Tensor{}
	for _, v := range g.Inputs {
		dims, _ := v.Type.Shape.Consts()
		vals[v] = floatTensor(ir.F64, dims, inputs[v.Name])
	}
	for _, v := range g.Consts {
		vals[v] = v.Const
	}
	for _, n := range g.Nodes {
		if n == skip {
			continue
		}
		ins := make([]*ir.Tensor, len(n.Inputs))
		for i, v := range n.Inputs {
			if v != nil {
				ins[i] = vals[v]
			}
		}
		outs, err := Eval(n, ins)
		if err != nil {
			t.Fatalf("%v: %v", n, err)
		}
		for i, v := range n.Outputs {
			if v != nil {
				vals[v] = outs[i]
			}
		}
	}
	for v, x := range vals {
		byName[v.Name] = x
	}
	return byName
}

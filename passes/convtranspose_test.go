package passes

import (
	"math"
	"math/rand"
	"testing"

	"github.com/cuvil/cuvil/ir"
)

// TestConvTransposeAsConvValues runs random kernel == stride
// ConvTransposes (with and without bias, square and not, batch 1 and 2)
// through the kernels before and after convtranspose-as-conv (passes.Eval
// node by node) and compares the outputs.
func TestConvTransposeAsConvValues(t *testing.T) {
	r := rand.New(rand.NewSource(81))
	for trial := 0; trial < 12; trial++ {
		N, C, M := int64(1+r.Intn(2)), int64(1+r.Intn(5)), int64(1+r.Intn(6))
		H, W := int64(1+r.Intn(5)), int64(1+r.Intn(6))
		kh, kw := int64(1+r.Intn(3)), int64(1+r.Intn(3))
		b := newBuilder(t, 17)
		x := b.input("x", ir.F32, int(N), int(C), int(H), int(W))
		ins := []*ir.Value{x, b.constant("w", ir.NewTensorF32([]int64{C, M, kh, kw}, randF32(r, int(C*M*kh*kw))))}
		if trial%2 == 0 {
			ins = append(ins, b.constant("b", ir.NewTensorF32([]int64{M}, randF32(r, int(M)))))
		}
		y := b.out("ConvTranspose", "y", ins, aInts("strides", kh, kw))
		b.g.Outputs = []*ir.Value{y}
		if err := Shapes.Run(b.m); err != nil {
			t.Fatal(err)
		}
		xt := ir.NewTensorF32([]int64{N, C, H, W}, randF32(r, int(N*C*H*W)))
		want := evalGraph32(t, b.g, xt)
		if err := ConvTransposeAsConv.Run(b.m); err != nil {
			t.Fatal(err)
		}
		if err := ir.Verify(b.m); err != nil {
			t.Fatal(err)
		}
		if b.g.Nodes[0].Op != "Conv" {
			t.Fatalf("trial %d: not rewritten: %v", trial, b.g.Nodes[0].Op)
		}
		got := evalGraph32(t, b.g, xt)
		if len(got) != len(want) {
			t.Fatalf("trial %d: %d values, want %d", trial, len(got), len(want))
		}
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-5*(1+math.Abs(want[i])) {
				t.Fatalf("trial %d (N%d C%d M%d %dx%d k%dx%d): y[%d] = %v, want %v", trial, N, C, M, H, W, kh, kw, i, got[i], want[i])
			}
		}
	}
}

func randF32(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.Float64()*2 - 1)
	}
	return v
}

// evalGraph32 runs g's nodes in order through Eval with x as its one input
// and returns its one output's values.
func evalGraph32(t *testing.T, g *ir.Graph, x *ir.Tensor) []float64 {
	t.Helper()
	vals := map[*ir.Value]*ir.Tensor{g.Inputs[0]: x}
	for _, c := range g.Consts {
		vals[c] = c.Const
	}
	for _, n := range g.Nodes {
		ins := make([]*ir.Tensor, len(n.Inputs))
		for i, v := range n.Inputs {
			if v != nil {
				if v.IsConst() {
					ins[i] = v.Const
				} else {
					ins[i] = vals[v]
				}
			}
		}
		outs, err := Eval(n, ins)
		if err != nil {
			t.Fatalf("%s: %v", n.Op, err)
		}
		for i, o := range n.Outputs {
			vals[o] = outs[i]
		}
	}
	return vals[g.Outputs[0]].Float64s()
}

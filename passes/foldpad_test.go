package passes

import (
	"math"
	"math/rand"
	"testing"

	"github.com/cuvil/cuvil/ir"
)

// TestFoldPadValues runs random spatial Pads in front of Conv (with pads
// of its own, strides, dilations), AveragePool (counting its padding or
// not) and MaxPool (-Inf pad) through the kernels before and after
// fold-pad (passes.Eval node by node) and compares the outputs.
func TestFoldPadValues(t *testing.T) {
	r := rand.New(rand.NewSource(91))
	for trial := 0; trial < 24; trial++ {
		N, C := int64(1+r.Intn(2)), int64(1+r.Intn(4))
		H, W := int64(4+r.Intn(5)), int64(4+r.Intn(6))
		pads := []int64{0, 0, int64(r.Intn(3)), int64(r.Intn(3)), 0, 0, int64(r.Intn(3)), int64(r.Intn(3))}
		own := []int64{int64(r.Intn(2)), int64(r.Intn(2)), int64(r.Intn(2)), int64(r.Intn(2))}
		b := newBuilder(t, 17)
		x := b.input("x", ir.F32, int(N), int(C), int(H), int(W))
		padIns := []*ir.Value{x, b.ints("pads", pads...)}
		kind := trial % 4
		if kind == 3 {
			padIns = append(padIns, b.constant("v", ir.NewTensorF32(nil, []float32{float32(math.Inf(-1))})))
		}
		p := b.out("Pad", "p", padIns)
		var y *ir.Value
		switch kind {
		case 0:
			M := int64(1 + r.Intn(4))
			w := b.constant("w", ir.NewTensorF32([]int64{M, C, 3, 2}, randF32(r, int(M*C*6))))
			y = b.out("Conv", "y", []*ir.Value{p, w}, aInts("pads", own...), aInts("strides", 1+int64(r.Intn(2)), 1), aInts("dilations", 1, 1+int64(r.Intn(2))))
		case 1:
			y = b.out("AveragePool", "y", []*ir.Value{p}, aInts("kernel_shape", 3, 2), aInts("pads", own...), aInt("count_include_pad", 1), aInts("strides", 2, 1))
		case 2:
			y = b.out("AveragePool", "y", []*ir.Value{p}, aInts("kernel_shape", 2, 3))
		case 3:
			y = b.out("MaxPool", "y", []*ir.Value{p}, aInts("kernel_shape", 3, 3), aInts("pads", own...), aInts("strides", 2, 2))
		}
		b.g.Outputs = []*ir.Value{y}
		if err := Shapes.Run(b.m); err != nil {
			t.Fatal(err)
		}
		xt := ir.NewTensorF32([]int64{N, C, H, W}, randF32(r, int(N*C*H*W)))
		want := evalGraph32(t, b.g, xt)
		if err := FoldPad.Run(b.m); err != nil {
			t.Fatal(err)
		}
		if err := DCE.Run(b.m); err != nil {
			t.Fatal(err)
		}
		if err := ir.Verify(b.m); err != nil {
			t.Fatal(err)
		}
		if len(b.g.Nodes) != 1 {
			t.Fatalf("trial %d: Pad not folded: %d nodes", trial, len(b.g.Nodes))
		}
		got := evalGraph32(t, b.g, xt)
		if len(got) != len(want) {
			t.Fatalf("trial %d: %d values, want %d", trial, len(got), len(want))
		}
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-5*(1+math.Abs(want[i])) {
				t.Fatalf("trial %d (kind %d, pads %v, own %v): y[%d] = %v, want %v", trial, kind, pads, own, i, got[i], want[i])
			}
		}
	}
}

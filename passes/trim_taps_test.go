package passes

import (
	"math"
	"math/rand"
	"testing"

	"github.com/cuvil/cuvil/ir"
)

// TestTrimConvTapsValues trims random dilated, strided and padded convs
// (1-D to 3-D, groups, maps smaller and larger than the dilated kernel)
// and runs each before and after with the Conv kernel: the outputs must be
// equal, and the cases must both trim and not trim.
func TestTrimConvTapsValues(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	trimmed, kept := 0, 0
	for c := 0; c < 300; c++ {
		sp := 1 + rng.Intn(3)
		if sp == 3 && rng.Intn(2) == 0 {
			sp = 2
		}
		group := int64(1 + rng.Intn(2))
		cin, cout := group*int64(1+rng.Intn(2)), group*int64(1+rng.Intn(2))
		xs := []int64{1, cin}
		ws := []int64{cout, cin / group}
		var kern, dil, str, pads []int64
		pads = make([]int64, 2*sp)
		for i := 0; i < sp; i++ {
			h := int64(1 + rng.Intn(6))
			k := int64(1 + rng.Intn(5))
			d := int64(1 + rng.Intn(6))
			s := int64(1 + rng.Intn(2))
			xs = append(xs, h)
			ws = append(ws, k)
			kern, dil, str = append(kern, k), append(dil, d), append(str, s)
			ek := (k-1)*d + 1
			// pads that make the padded input at least the dilated kernel
			need := max(ek-h, 0)
			pb := int64(rng.Intn(int(ek) + 1))
			pe := max(need-pb, 0) + int64(rng.Intn(int(d)+1))
			pads[i], pads[sp+i] = pb, pe
		}
		b := newBuilder(t, 13)
		x := b.input("x", ir.F32, toAny(xs)...)
		wvals := make([]float64, prod(ws))
		for i := range wvals {
			wvals[i] = rng.NormFloat64()
		}
		w := b.constant("w", floatTensor(ir.F32, ws, wvals))
		bias := b.constant("b", floatTensor(ir.F32, []int64{cout}, randVals(rng, int(cout))))
		y := b.out("Conv", "conv", []*ir.Value{x, w, bias}, aInts("kernel_shape", kern...), aInts("dilations", dil...),
			aInts("strides", str...), aInts("pads", pads...), aInt("group", group))
		b.g.Outputs = []*ir.Value{y}
		if err := Shapes.Run(b.m); err != nil {
			t.Fatalf("case %d: shapes: %v", c, err)
		}
		n := b.g.Nodes[0]
		xt := floatTensor(ir.F32, xs, randVals(rng, int(prod(xs))))
		before, err := Eval(n, []*ir.Tensor{xt, w.Const, bias.Const})
		if err != nil {
			t.Fatalf("case %d: eval: %v", c, err)
		}
		oldW := n.Inputs[1]
		if err := TrimConvTaps.Run(b.m); err != nil {
			t.Fatal(err)
		}
		if n.Inputs[1] == oldW {
			kept++
			continue
		}
		trimmed++
		after, err := Eval(n, []*ir.Tensor{xt, n.Inputs[1].Const, bias.Const})
		if err != nil {
			t.Fatalf("case %d: eval after trimming to %v pads %v: %v", c, n.Inputs[1].Const.Shape, n.AttrInts("pads", nil), err)
		}
		bv, av := before[0].Float64s(), after[0].Float64s()
		if len(bv) != len(av) {
			t.Fatalf("case %d: %d outputs, then %d", c, len(bv), len(av))
		}
		for i := range bv {
			if math.Abs(bv[i]-av[i]) > 1e-5*(1+math.Abs(bv[i])) {
				t.Fatalf("case %d (x %v, w %v, dil %v, str %v, pads %v -> w %v pads %v): y[%d] = %v, was %v",
					c, xs, ws, dil, str, pads, n.Inputs[1].Const.Shape, n.AttrInts("pads", nil), i, av[i], bv[i])
			}
		}
	}
	if trimmed < 20 || kept < 20 {
		t.Fatalf("trimmed %d and kept %d of 300: the cases do not exercise both", trimmed, kept)
	}
}

// TestTrimConvTapsKeeps lists convs the pass must leave: a dropped tap
// holding Inf, auto_pad SAME, weights computed at run time, a symbolic map
// and a trim that would need a negative pad.
func TestTrimConvTapsKeeps(t *testing.T) {
	centre := func(b *builder, w9 []float64, dims ...any) (*ir.Node, *ir.Value) {
		x := b.input("x", ir.F32, dims...)
		w := b.constant("w", floatTensor(ir.F32, []int64{1, 1, 3, 3}, w9))
		return b.node("Conv", "conv", []*ir.Value{x, w}, 1, aInts("dilations", 4, 4), aInts("pads", 4, 4, 4, 4)), w
	}
	nine := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}
	inf := append([]float64(nil), nine...)
	inf[0] = math.Inf(1)
	cases := map[string]func(b *builder) *ir.Node{
		"inf in a dropped tap": func(b *builder) *ir.Node { n, _ := centre(b, inf, 1, 1, 3, 3); return n },
		"symbolic map":         func(b *builder) *ir.Node { n, _ := centre(b, nine, 1, 1, "h", 3); return n },
		"auto_pad": func(b *builder) *ir.Node {
			n, _ := centre(b, nine, 1, 1, 3, 3)
			n.Attrs = nil // SAME_UPPER pads 4 on each side, as above
			n.SetAttr(aStr("auto_pad", "SAME_UPPER"))
			n.SetAttr(aInts("dilations", 4, 4))
			return n
		},
		"run-time weights": func(b *builder) *ir.Node {
			x := b.input("x", ir.F32, 1, 1, 3, 3)
			w := b.input("w", ir.F32, 1, 1, 3, 3)
			return b.node("Conv", "conv", []*ir.Value{x, w}, 1, aInts("dilations", 4, 4), aInts("pads", 4, 4, 4, 4))
		},
		// k=3, d=4 on a 3-long axis with pads 3/5: taps 0 (positions -3..-1)
		// and 2 (5..7) read only padding, but keeping tap 1 alone would need
		// begin pad 3-4 = -1.
		"negative pad": func(b *builder) *ir.Node {
			x := b.input("x", ir.F32, 1, 1, 3)
			w := b.constant("w", floatTensor(ir.F32, []int64{1, 1, 3}, []float64{1, 2, 3}))
			return b.node("Conv", "conv", []*ir.Value{x, w}, 1, aInts("dilations", 4), aInts("pads", 3, 5))
		},
	}
	for name, mk := range cases {
		t.Run(name, func(t *testing.T) {
			b := newBuilder(t, 13)
			n := mk(b)
			b.g.Outputs = []*ir.Value{n.Outputs[0]}
			if err := Shapes.Run(b.m); err != nil {
				t.Fatalf("shapes: %v", err)
			}
			w := n.Inputs[1]
			if err := TrimConvTaps.Run(b.m); err != nil {
				t.Fatal(err)
			}
			if n.Inputs[1] != w {
				t.Fatalf("trimmed to %v pads %v", n.Inputs[1].Const.Shape, n.AttrInts("pads", nil))
			}
		})
	}
}

func toAny(v []int64) []any {
	out := make([]any, len(v))
	for i, d := range v {
		out[i] = int(d)
	}
	return out
}

func prod(v []int64) int64 {
	p := int64(1)
	for _, d := range v {
		p *= d
	}
	return p
}

func randVals(rng *rand.Rand, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = rng.NormFloat64()
	}
	return out
}

package templates

import (
	"math"
	"math/rand"
	"testing"
)

var tewBinShapes = [][2][]int{
	{{3, 1, 5}, {4, 1}}, {{}, {2, 3}}, {{2, 3, 4}, {2, 3, 4}}, {{7}, {1}},
	{{5, 1, 1, 3}, {1, 4, 2, 1}}, {{0, 3}, {1, 3}}, {{2, 3}, {}}, {{1, 3, 1}, {2, 1, 5}},
	{{6, 7}, {7}},
}

func tewPyMod(a, b int64) int64 {
	r := a % b
	if r != 0 && (r < 0) != (b < 0) {
		r += b
	}
	return r
}

type tewBinCase struct {
	op         string
	attrs      Attrs
	dts        []DType
	f          func(a, b float64) float64
	i          func(a, b int64) int64
	alo, ahi   float64
	blo, bhi   float64
	nonzeroB   bool
	unsignedOK bool
}

func TestBinaryArith(t *testing.T) {
	ints := []DType{I8, I16, I32, I64, U8, U16, U32, U64}
	all := tewAllNum
	floats := []DType{F32, F64, F16, BF16}
	cases := []tewBinCase{
		{op: "Add", dts: all, f: func(a, b float64) float64 { return a + b }, i: func(a, b int64) int64 { return a + b }, alo: -120, ahi: 120, blo: -100, bhi: 100},
		{op: "Sub", dts: all, f: func(a, b float64) float64 { return a - b }, i: func(a, b int64) int64 { return a - b }, alo: -120, ahi: 120, blo: -100, bhi: 100},
		{op: "Mul", dts: all, f: func(a, b float64) float64 { return a * b }, i: func(a, b int64) int64 { return a * b }, alo: -50, ahi: 50, blo: -30, bhi: 30},
		{op: "Div", dts: all, f: func(a, b float64) float64 { return a / b }, i: func(a, b int64) int64 { return a / b }, alo: -120, ahi: 120, blo: -9, bhi: 9, nonzeroB: true},
		{op: "Mod", dts: ints, i: tewPyMod, alo: -120, ahi: 120, blo: -9, bhi: 9, nonzeroB: true},
		{op: "Mod", attrs: Attrs{"fmod": int64(1)}, dts: all, f: math.Mod, i: func(a, b int64) int64 { return a % b }, alo: -120, ahi: 120, blo: -9, bhi: 9, nonzeroB: true},
		{op: "Pow", dts: floats, f: math.Pow, alo: 0.1, ahi: 3, blo: -2, bhi: 3},
		{op: "Pow", dts: ints, i: func(a, b int64) int64 {
			r := int64(1)
			for k := int64(0); k < b; k++ {
				r *= a
			}
			return r
		}, alo: -5, ahi: 5, blo: 0, bhi: 4},
		{op: "PRelu", dts: append([]DType{I8, I32, I64}, floats...), f: func(x, s float64) float64 {
			if x < 0 {
				return x * s
			}
			return x
		}, i: func(x, s int64) int64 {
			if x < 0 {
				return x * s
			}
			return x
		}, alo: -20, ahi: 20, blo: -3, bhi: 3},
	}
	r := rand.New(rand.NewSource(7))
	checked := 0
	for _, c := range cases {
		for _, dt := range c.dts {
			for _, sh := range tewBinShapes {
				a := tewRand(r, dt, c.alo, c.ahi, sh[0]...)
				b := tewRand(r, dt, c.blo, c.bhi, sh[1]...)
				if c.nonzeroB {
					for i := 0; i < b.Len(); i++ {
						if tewGet(b, i) == 0 {
							tewSet(b, i, 3)
						}
					}
				}
				n := tewNode(c.op, 13, c.attrs, a, b)
				if c.op == "PRelu" {
					n.Version = 16
				}
				tewRun(t, n)
				tewCheckBin(t, c, dt, a, b, n.Out[0])
				checked++
			}
		}
	}
	t.Logf("%d binary cases", checked)
}

func tewCheckBin(t *testing.T, c tewBinCase, dt DType, a, b, out *Tensor) {
	t.Helper()
	want := tewBcastShape(a.Shape, b.Shape)
	if out.DType != dt || !tewSameShape(out.Shape, want) {
		t.Fatalf("%s %s: out %s, want %s%v", c.op, dt, out, dt, want)
	}
	idx := make([]int, len(want))
	for o := 0; o < out.Len(); o++ {
		tewUnravel(o, want, idx)
		ia, ib := tewBcastIndex(idx, a.Shape), tewBcastIndex(idx, b.Shape)
		if ewIsFloat(dt) {
			w := c.f(tewGet(a, ia), tewGet(b, ib))
			if g := tewGet(out, o); !tewClose(dt, g, w) {
				t.Fatalf("%s %s %v,%v: [%d] %v op %v = %v, want %v", c.op, dt, a.Shape, b.Shape, o, tewGet(a, ia), tewGet(b, ib), g, w)
			}
		} else {
			w := tewWrap(dt, c.i(tewGetI(a, ia), tewGetI(b, ib)))
			if g := tewGetI(out, o); g != w {
				t.Fatalf("%s %s %v,%v: [%d] %d op %d = %d, want %d", c.op, dt, a.Shape, b.Shape, o, tewGetI(a, ia), tewGetI(b, ib), g, w)
			}
		}
	}
}

func TestIntegerEdgeCases(t *testing.T) {
	// Division truncates toward zero; Mod signs follow fmod.
	a := &Tensor{}
	a.Resize(I32, 4)
	copy(a.I32(), []int32{-7, 7, -7, 7})
	b := &Tensor{}
	b.Resize(I32, 4)
	copy(b.I32(), []int32{2, -2, -2, 2})
	for _, c := range []struct {
		op    string
		attrs Attrs
		want  []int32
	}{
		{"Div", nil, []int32{-3, -3, 3, 3}},
		{"Mod", nil, []int32{1, -1, -1, 1}},
		{"Mod", Attrs{"fmod": int64(1)}, []int32{-1, 1, -1, 1}},
	} {
		n := tewNode(c.op, 13, c.attrs, a, b)
		tewRun(t, n)
		for i, w := range c.want {
			if g := n.Out[0].I32()[i]; g != w {
				t.Fatalf("%s %v: [%d]=%d want %d", c.op, c.attrs, i, g, w)
			}
		}
	}
	// Wrapping like the native type.
	x := &Tensor{}
	x.Resize(I8, 2)
	copy(x.I8(), []int8{127, -128})
	y := &Tensor{}
	y.Resize(I8, 2)
	copy(y.I8(), []int8{1, -1})
	n := tewNode("Add", 14, nil, x, y)
	tewRun(t, n)
	if g := n.Out[0].I8(); g[0] != -128 || g[1] != 127 {
		t.Fatalf("int8 wrap: %v", g)
	}
	n = tewNode("Div", 14, nil, x, y)
	tewRun(t, n)
	if g := n.Out[0].I8(); g[0] != 127 || g[1] != -128 {
		t.Fatalf("int8 div: %v", g)
	}
}

func TestLegacyBroadcastAxis(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	a := tewRand(r, F32, -5, 5, 2, 3, 4, 5)
	b := tewRand(r, F32, -5, 5, 3, 4)
	n := tewNode("Sub", 6, Attrs{"broadcast": int64(1), "axis": int64(1)}, a, b)
	tewRun(t, n)
	out := n.Out[0]
	if !tewSameShape(out.Shape, a.Shape) {
		t.Fatalf("shape %v", out.Shape)
	}
	idx := make([]int, 4)
	for o := 0; o < out.Len(); o++ {
		tewUnravel(o, a.Shape, idx)
		w := tewGet(a, o) - tewGet(b, idx[1]*4+idx[2])
		if g := tewGet(out, o); !tewClose(F32, g, w) {
			t.Fatalf("[%d] %v want %v", o, g, w)
		}
	}
	// Suffix broadcast without axis behaves like numpy.
	b2 := tewRand(r, F32, -5, 5, 5)
	n = tewNode("Mul", 6, Attrs{"broadcast": int64(1)}, a, b2)
	tewRun(t, n)
	for o := 0; o < out.Len(); o++ {
		if g, w := tewGet(n.Out[0], o), tewGet(a, o)*tewGet(b2, o%5); !tewClose(F32, g, w) {
			t.Fatalf("suffix [%d] %v want %v", o, g, w)
		}
	}
}

func TestCompareLogic(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	type cmpCase struct {
		op string
		f  func(a, b float64) bool
	}
	cases := []cmpCase{
		{"Equal", func(a, b float64) bool { return a == b }},
		{"Less", func(a, b float64) bool { return a < b }},
		{"Greater", func(a, b float64) bool { return a > b }},
		{"LessOrEqual", func(a, b float64) bool { return a <= b }},
		{"GreaterOrEqual", func(a, b float64) bool { return a >= b }},
	}
	for _, c := range cases {
		for _, dt := range tewAllNum {
			for _, sh := range tewBinShapes {
				// A narrow range makes equal pairs common.
				a := tewRand(r, dt, 0, 4, sh[0]...)
				b := tewRand(r, dt, 0, 4, sh[1]...)
				n := tewNode(c.op, 13, nil, a, b)
				tewRun(t, n)
				tewCheckBool(t, c.op+" "+dt.String(), a, b, n.Out[0], func(i, j int) bool { return c.f(tewGet(a, i), tewGet(b, j)) })
			}
		}
	}
	for _, c := range []struct {
		op string
		f  func(a, b bool) bool
	}{
		{"And", func(a, b bool) bool { return a && b }},
		{"Or", func(a, b bool) bool { return a || b }},
		{"Xor", func(a, b bool) bool { return a != b }},
		{"Equal", func(a, b bool) bool { return a == b }},
	} {
		for _, sh := range tewBinShapes {
			a := tewRand(r, Bool, -1, 1, sh[0]...)
			b := tewRand(r, Bool, -1, 1, sh[1]...)
			n := tewNode(c.op, 7, nil, a, b)
			tewRun(t, n)
			tewCheckBool(t, c.op, a, b, n.Out[0], func(i, j int) bool { return c.f(a.Bool()[i], b.Bool()[j]) })
		}
	}
	a := tewRand(r, String, 0, 3, 4, 3)
	b := tewRand(r, String, 0, 3, 3)
	n := tewNode("Equal", 19, nil, a, b)
	tewRun(t, n)
	tewCheckBool(t, "Equal string", a, b, n.Out[0], func(i, j int) bool { return a.Str()[i] == b.Str()[j] })
	// NaN compares false.
	x := tewF32T([]int{2}, float32(math.NaN()), 1)
	n = tewNode("Equal", 13, nil, x, x)
	tewRun(t, n)
	if g := n.Out[0].Bool(); g[0] || !g[1] {
		t.Fatalf("NaN == NaN: %v", g)
	}
	if err := Less(tewNode("Less", 13, nil, x, tewI64([]int{2}, 1, 2))); err == nil {
		t.Fatal("mixed dtypes must fail")
	}
	if err := And(tewNode("And", 7, nil, x, x)); err == nil {
		t.Fatal("And on floats must fail")
	}
}

func tewCheckBool(t *testing.T, what string, a, b, out *Tensor, f func(i, j int) bool) {
	t.Helper()
	want := tewBcastShape(a.Shape, b.Shape)
	if out.DType != Bool || !tewSameShape(out.Shape, want) {
		t.Fatalf("%s: out %s want bool%v", what, out, want)
	}
	idx := make([]int, len(want))
	for o := 0; o < out.Len(); o++ {
		tewUnravel(o, want, idx)
		if g, w := out.Bool()[o], f(tewBcastIndex(idx, a.Shape), tewBcastIndex(idx, b.Shape)); g != w {
			t.Fatalf("%s %v,%v: [%d] = %v want %v", what, a.Shape, b.Shape, o, g, w)
		}
	}
}

func TestVariadic(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	shapes := [][]int{{3, 1}, {1, 4}, {2, 1, 1}, {4}}
	type vc struct {
		op   string
		dts  []DType
		fold func(acc, x float64) float64
		mean bool
	}
	for _, c := range []vc{
		{"Sum", []DType{F32, F64, F16, BF16}, func(acc, x float64) float64 { return acc + x }, false},
		{"Mean", []DType{F32, F64, F16, BF16}, func(acc, x float64) float64 { return acc + x }, true},
		{"Max", tewAllNum, math.Max, false},
		{"Min", tewAllNum, math.Min, false},
	} {
		for _, dt := range c.dts {
			for k := 1; k <= len(shapes); k++ {
				in := make([]*Tensor, k)
				for i := range in {
					in[i] = tewRand(r, dt, -50, 50, shapes[i]...)
				}
				n := tewNode(c.op, 13, nil, in...)
				tewRun(t, n)
				sh := make([][]int, k)
				for i := range sh {
					sh[i] = in[i].Shape
				}
				want := tewBcastShape(sh...)
				out := n.Out[0]
				if !tewSameShape(out.Shape, want) || out.DType != dt {
					t.Fatalf("%s %s: %s want %v", c.op, dt, out, want)
				}
				idx := make([]int, len(want))
				for o := 0; o < out.Len(); o++ {
					tewUnravel(o, want, idx)
					acc := tewGet(in[0], tewBcastIndex(idx, in[0].Shape))
					for _, x := range in[1:] {
						// The spec folds in the tensor's dtype.
						acc = tewRound(dt, c.fold(acc, tewGet(x, tewBcastIndex(idx, x.Shape))))
					}
					if c.mean {
						acc = tewRound(dt, acc/float64(k))
					}
					if g := tewGet(out, o); !tewClose(dt, g, acc) {
						t.Fatalf("%s %s k=%d: [%d] %v want %v", c.op, dt, k, o, g, acc)
					}
				}
			}
		}
	}
	// Max propagates NaN like numpy.maximum.
	a := tewF32T([]int{2}, float32(math.NaN()), 1)
	b := tewF32T([]int{2}, 3, float32(math.NaN()))
	n := tewNode("Max", 13, nil, a, b)
	tewRun(t, n)
	if g := n.Out[0].F32(); !math.IsNaN(float64(g[0])) || !math.IsNaN(float64(g[1])) {
		t.Fatalf("Max NaN: %v", g)
	}
}

type tewUnCase struct {
	op     string
	attrs  Attrs
	f      func(x float64) float64
	lo, hi float64
	ints   []DType
}

func TestUnary(t *testing.T) {
	sp := func(x float64) float64 { return math.Log(1 + math.Exp(x)) }
	cases := []tewUnCase{
		{op: "Sqrt", f: math.Sqrt, lo: 0, hi: 9},
		{op: "Exp", f: math.Exp, lo: -5, hi: 5},
		{op: "Log", f: math.Log, lo: 0.01, hi: 50},
		{op: "Neg", f: func(x float64) float64 { return -x }, lo: -50, hi: 50, ints: []DType{I8, I16, I32, I64}},
		{op: "Abs", f: math.Abs, lo: -50, hi: 50, ints: []DType{I8, I16, I32, I64, U8, U16, U32, U64}},
		{op: "Reciprocal", f: func(x float64) float64 { return 1 / x }, lo: 0.5, hi: 9},
		{op: "Floor", f: math.Floor, lo: -9, hi: 9},
		{op: "Ceil", f: math.Ceil, lo: -9, hi: 9},
		{op: "Round", f: math.RoundToEven, lo: -9, hi: 9},
		{op: "Sign", f: func(x float64) float64 {
			if x > 0 {
				return 1
			} else if x < 0 {
				return -1
			}
			return 0
		}, lo: -9, hi: 9, ints: []DType{I8, I16, I32, I64, U8, U16, U32, U64}},
		{op: "Relu", f: func(x float64) float64 { return math.Max(x, 0) }, lo: -9, hi: 9, ints: []DType{I8, I16, I32, I64}},
		{op: "LeakyRelu", attrs: Attrs{"alpha": float32(0.3)}, f: func(x float64) float64 {
			if x < 0 {
				return float64(float32(0.3)) * x
			}
			return x
		}, lo: -9, hi: 9},
		{op: "LeakyRelu", f: func(x float64) float64 {
			if x < 0 {
				return float64(float32(0.01)) * x
			}
			return x
		}, lo: -9, hi: 9},
		{op: "Elu", attrs: Attrs{"alpha": float32(2)}, f: func(x float64) float64 {
			if x < 0 {
				return 2 * (math.Exp(x) - 1)
			}
			return x
		}, lo: -4, hi: 4},
		{op: "Selu", f: func(x float64) float64 {
			a, g := 1.67326319217681884765625, 1.05070102214813232421875
			if x <= 0 {
				return g * (a*math.Exp(x) - a)
			}
			return g * x
		}, lo: -4, hi: 4},
		{op: "Celu", attrs: Attrs{"alpha": float32(1.5)}, f: func(x float64) float64 {
			if x >= 0 {
				return x
			}
			return 1.5 * (math.Exp(x/1.5) - 1)
		}, lo: -4, hi: 4},
		{op: "ThresholdedRelu", attrs: Attrs{"alpha": float32(2)}, f: func(x float64) float64 {
			if x > 2 {
				return x
			}
			return 0
		}, lo: -4, hi: 4},
		{op: "Sigmoid", f: func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }, lo: -30, hi: 30},
		{op: "HardSigmoid", attrs: Attrs{"alpha": float32(0.25), "beta": float32(0.4)}, f: func(x float64) float64 {
			return math.Max(0, math.Min(1, 0.25*x+float64(float32(0.4))))
		}, lo: -5, hi: 5},
		{op: "HardSwish", f: func(x float64) float64 { return x * math.Max(0, math.Min(1, x/6+0.5)) }, lo: -5, hi: 5},
		{op: "Softplus", f: sp, lo: -20, hi: 20},
		{op: "Softsign", f: func(x float64) float64 { return x / (1 + math.Abs(x)) }, lo: -20, hi: 20},
		{op: "Mish", f: func(x float64) float64 { return x * math.Tanh(sp(x)) }, lo: -10, hi: 10},
		{op: "Tanh", f: math.Tanh, lo: -5, hi: 5},
		{op: "Erf", f: math.Erf, lo: -3, hi: 3},
		{op: "Sin", f: math.Sin, lo: -5, hi: 5},
		{op: "Cos", f: math.Cos, lo: -5, hi: 5},
		{op: "Tan", f: math.Tan, lo: -1.4, hi: 1.4},
		{op: "Asin", f: math.Asin, lo: -0.99, hi: 0.99},
		{op: "Acos", f: math.Acos, lo: -0.99, hi: 0.99},
		{op: "Atan", f: math.Atan, lo: -5, hi: 5},
		{op: "Sinh", f: math.Sinh, lo: -5, hi: 5},
		{op: "Cosh", f: math.Cosh, lo: -5, hi: 5},
		{op: "Asinh", f: math.Asinh, lo: -5, hi: 5},
		{op: "Acosh", f: math.Acosh, lo: 1, hi: 9},
		{op: "Atanh", f: math.Atanh, lo: -0.99, hi: 0.99},
	}
	r := rand.New(rand.NewSource(9))
	for _, c := range cases {
		for _, dt := range append([]DType{F32, F64, F16, BF16}, c.ints...) {
			x := tewRand(r, dt, c.lo, c.hi, 3, 5, 7)
			n := tewNode(c.op, 14, c.attrs, x)
			tewRun(t, n)
			out := n.Out[0]
			if out.DType != dt || !tewSameShape(out.Shape, x.Shape) {
				t.Fatalf("%s %s: out %s", c.op, dt, out)
			}
			for i := 0; i < x.Len(); i++ {
				w := c.f(tewGet(x, i))
				g := tewGet(out, i)
				if !ewIsFloat(dt) {
					if g != w {
						t.Fatalf("%s %s: f(%v) = %v want %v", c.op, dt, tewGet(x, i), g, w)
					}
				} else if !tewClose(dt, g, w) {
					t.Fatalf("%s %s: f(%v) = %v want %v", c.op, dt, tewGet(x, i), g, w)
				}
			}
		}
	}
	// Round halves to even; Sign keeps NaN.
	x := tewF32T([]int{6}, 0.5, 1.5, 2.5, -0.5, -1.5, -2.4)
	n := tewNode("Round", 11, nil, x)
	tewRun(t, n)
	for i, w := range []float32{0, 2, 2, 0, -2, -2} {
		if n.Out[0].F32()[i] != w {
			t.Fatalf("Round %v = %v want %v", x.F32()[i], n.Out[0].F32()[i], w)
		}
	}
	if err := Sqrt(tewNode("Sqrt", 13, nil, tewI64([]int{1}, 4))); err == nil {
		t.Fatal("Sqrt of int64 must fail")
	}
}

func TestClip(t *testing.T) {
	r := rand.New(rand.NewSource(13))
	clip := func(x, lo, hi float64) float64 { return math.Min(math.Max(x, lo), hi) }
	// Opset 6: attributes; a missing one leaves that side open.
	x := tewRand(r, F32, -10, 10, 4, 5)
	for _, at := range []Attrs{{"min": float32(-2), "max": float32(3)}, {"min": float32(-1)}, {"max": float32(0.5)}, {}} {
		n := tewNode("Clip", 6, at, x)
		tewRun(t, n)
		lo, hi := math.Inf(-1), math.Inf(1)
		if at.Has("min") {
			lo = float64(at.Float("min", 0))
		}
		if at.Has("max") {
			hi = float64(at.Float("max", 0))
		}
		for i := 0; i < x.Len(); i++ {
			if g, w := tewGet(n.Out[0], i), clip(tewGet(x, i), lo, hi); g != w {
				t.Fatalf("Clip-6 %v: %v want %v", at, g, w)
			}
		}
	}
	// Opset 12+: optional scalar inputs of the input's dtype.
	for _, dt := range tewAllNum {
		x := tewRand(r, dt, -60, 60, 3, 7)
		lo := tewRand(r, dt, -20, 0)
		hi := tewRand(r, dt, 10, 30)
		for _, in := range [][]*Tensor{{x, lo, hi}, {x, nil, hi}, {x, lo}, {x}, {x, hi, lo}} {
			n := tewNode("Clip", 13, nil, in...)
			tewRun(t, n)
			l, h := math.Inf(-1), math.Inf(1)
			if len(in) > 1 && in[1] != nil {
				l = tewGet(in[1], 0)
			}
			if len(in) > 2 {
				h = tewGet(in[2], 0)
			}
			for i := 0; i < x.Len(); i++ {
				if g, w := tewGet(n.Out[0], i), clip(tewGet(x, i), l, h); g != w {
					t.Fatalf("Clip-13 %s [%v,%v] of %v: %v want %v", dt, l, h, tewGet(x, i), g, w)
				}
			}
		}
	}
}

func TestPowMixed(t *testing.T) {
	r := rand.New(rand.NewSource(17))
	for _, base := range []DType{F32, F64, F16, BF16, I32, I64} {
		for _, exp := range []DType{F32, F64, F16, I8, I16, I32, I64, U8, U16, U32, U64} {
			a := tewRand(r, base, 1, 6, 3, 4)
			b := tewRand(r, exp, 0, 3, 4)
			n := tewNode("Pow", 15, nil, a, b)
			tewRun(t, n)
			out := n.Out[0]
			if out.DType != base || !tewSameShape(out.Shape, a.Shape) {
				t.Fatalf("Pow %s^%s: %s", base, exp, out)
			}
			for i := 0; i < out.Len(); i++ {
				w := math.Pow(tewGet(a, i), tewGet(b, i%4))
				g := tewGet(out, i)
				if ewIsFloat(base) {
					if !tewClose(base, g, w) {
						t.Fatalf("Pow %s^%s: %v^%v = %v want %v", base, exp, tewGet(a, i), tewGet(b, i%4), g, w)
					}
				} else if g != math.Trunc(w) {
					t.Fatalf("Pow %s^%s: %v^%v = %v want %v", base, exp, tewGet(a, i), tewGet(b, i%4), g, math.Trunc(w))
				}
			}
		}
	}
	// Integer base, float exponent: computed in float and truncated.
	a := &Tensor{}
	a.Resize(I32, 3)
	copy(a.I32(), []int32{1, 2, 3})
	n := tewNode("Pow", 15, nil, a, tewF32T([]int{3}, 4, 5, 6))
	tewRun(t, n)
	if g := n.Out[0].I32(); g[0] != 1 || g[1] != 32 || g[2] != 729 {
		t.Fatalf("int32^f32: %v", g)
	}
}

func TestPredicatesNotBitShift(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	vals := []float64{1, -inf, inf, nan, 0, -2.5}
	for _, dt := range []DType{F32, F64, F16, BF16} {
		x := &Tensor{}
		x.Resize(dt, 2, 3)
		for i, v := range vals {
			tewSet(x, i, v)
		}
		for _, c := range []struct {
			op    string
			attrs Attrs
			want  []bool
		}{
			{"IsNaN", nil, []bool{false, false, false, true, false, false}},
			{"IsInf", nil, []bool{false, true, true, false, false, false}},
			{"IsInf", Attrs{"detect_negative": int64(0)}, []bool{false, false, true, false, false, false}},
			{"IsInf", Attrs{"detect_positive": int64(0)}, []bool{false, true, false, false, false, false}},
		} {
			n := tewNode(c.op, 13, c.attrs, x)
			tewRun(t, n)
			for i, w := range c.want {
				if n.Out[0].Bool()[i] != w {
					t.Fatalf("%s %v %s: [%d] want %v", c.op, c.attrs, dt, i, w)
				}
			}
		}
	}
	r := rand.New(rand.NewSource(2))
	b := tewRand(r, Bool, -1, 1, 5, 3)
	n := tewNode("Not", 1, nil, b)
	tewRun(t, n)
	for i, v := range b.Bool() {
		if n.Out[0].Bool()[i] == v {
			t.Fatal("Not")
		}
	}
	for _, dt := range []DType{U8, U16, U32, U64} {
		bits := map[DType]uint{U8: 8, U16: 16, U32: 32, U64: 64}[dt]
		x := tewRand(r, dt, 0, 250, 4, 5)
		s := tewRand(r, dt, 0, float64(bits)+1, 5)
		for _, dir := range []string{"LEFT", "RIGHT"} {
			n := tewNode("BitShift", 11, Attrs{"direction": dir}, x, s)
			tewRun(t, n)
			for i := 0; i < x.Len(); i++ {
				v, k := uint64(tewGetI(x, i)), uint64(tewGetI(s, i%5))
				var w uint64
				if dir == "LEFT" {
					w = v << k
				} else {
					w = v >> k
				}
				w = uint64(tewWrap(dt, int64(w)))
				if bits == 64 {
					w = v << k
					if dir == "RIGHT" {
						w = v >> k
					}
				}
				if g := uint64(tewGetI(n.Out[0], i)); g != w {
					t.Fatalf("BitShift %s %s: %d,%d = %d want %d", dt, dir, v, k, g, w)
				}
			}
		}
	}
}

func TestWhere(t *testing.T) {
	r := rand.New(rand.NewSource(23))
	shapes := [][3][]int{
		{{2, 1, 4}, {3, 1}, {4}}, {{}, {2, 3}, {2, 3}}, {{5}, {5}, {}}, {{3, 4}, {3, 4}, {3, 4}},
	}
	for _, dt := range tewAll {
		for _, s := range shapes {
			c := tewRand(r, Bool, -1, 1, s[0]...)
			x := tewRand(r, dt, -50, 50, s[1]...)
			y := tewRand(r, dt, -50, 50, s[2]...)
			n := tewNode("Where", 16, nil, c, x, y)
			tewRun(t, n)
			want := tewBcastShape(s[0], s[1], s[2])
			out := n.Out[0]
			if out.DType != dt || !tewSameShape(out.Shape, want) {
				t.Fatalf("Where %s: %s want %v", dt, out, want)
			}
			idx := make([]int, len(want))
			for o := 0; o < out.Len(); o++ {
				tewUnravel(o, want, idx)
				src, j := y, tewBcastIndex(idx, s[2])
				if c.Bool()[tewBcastIndex(idx, s[0])] {
					src, j = x, tewBcastIndex(idx, s[1])
				}
				if dt == String {
					if out.Str()[o] != src.Str()[j] {
						t.Fatalf("Where string [%d]", o)
					}
				} else if tewGet(out, o) != tewGet(src, j) {
					t.Fatalf("Where %s [%d]: %v want %v", dt, o, tewGet(out, o), tewGet(src, j))
				}
			}
		}
	}
}

func TestIdentityDropout(t *testing.T) {
	r := rand.New(rand.NewSource(29))
	for _, dt := range tewAll {
		x := tewRand(r, dt, -9, 9, 3, 4)
		n := tewNode("Identity", 16, nil, x)
		tewRun(t, n)
		tewEqual(t, "Identity "+dt.String(), n.Out[0], x)
	}
	x := tewRand(r, F32, -9, 9, 5, 7)
	for _, ver := range []int{6, 7, 10, 12, 13} {
		n := tewNode("Dropout", ver, Attrs{"ratio": float32(0.4)}, x)
		n.Out = []*Tensor{{}, {}}
		tewRun(t, n)
		tewEqual(t, "Dropout out", n.Out[0], x)
		m := n.Out[1]
		for i := 0; i < m.Len(); i++ {
			if tewGet(m, i) != 1 {
				t.Fatalf("Dropout-%d mask not all ones", ver)
			}
		}
		if ver >= 10 && m.DType != Bool || ver < 10 && m.DType != F32 {
			t.Fatalf("Dropout-%d mask dtype %s", ver, m.DType)
		}
	}
	// Training mode drops about ratio of the elements and scales the rest.
	big := tewRand(r, F32, 1, 9, 100, 50)
	tr := &Tensor{}
	tr.Resize(Bool)
	tr.Bool()[0] = true
	n := tewNode("Dropout", 13, Attrs{"seed": int64(3)}, big, tewF32T(nil, 0.25), tr)
	n.Out = []*Tensor{{}, {}}
	tewRun(t, n)
	dropped := 0
	for i := 0; i < big.Len(); i++ {
		g, m := tewGet(n.Out[0], i), n.Out[1].Bool()[i]
		switch {
		case !m && g == 0:
			dropped++
		case m && tewClose(F32, g, tewGet(big, i)/0.75):
		default:
			t.Fatalf("Dropout training [%d]: %v mask %v (x %v)", i, g, m, tewGet(big, i))
		}
	}
	if f := float64(dropped) / float64(big.Len()); f < 0.2 || f > 0.3 {
		t.Fatalf("dropped fraction %v, want about 0.25", f)
	}
}

func TestElemNoAllocs(t *testing.T) {
	r := rand.New(rand.NewSource(31))
	a := tewRand(r, F32, -5, 5, 3, 1, 5)
	b := tewRand(r, F32, -5, 5, 4, 1)
	h := tewRand(r, F16, -5, 5, 3, 1, 5)
	i8 := tewRand(r, I8, -5, 5, 2, 1, 3)
	c := tewRand(r, Bool, -1, 1, 4, 1)
	nodes := []*Node{
		tewNode("Add", 14, nil, a, b),
		tewNode("Mul", 14, nil, h, h),
		tewNode("Div", 14, nil, i8, i8),
		tewNode("Less", 14, nil, a, b),
		tewNode("Sum", 13, nil, a, b, a),
		tewNode("Mean", 13, nil, a, b),
		tewNode("Sigmoid", 13, nil, a),
		tewNode("LeakyRelu", 16, Attrs{"alpha": float32(0.2)}, h),
		tewNode("Where", 16, nil, c, a, b),
		tewNode("Clip", 13, nil, a, tewF32T(nil, -1)),
		tewNode("Pow", 15, nil, a, tewI64([]int{1}, 2)),
		tewNode("IsInf", 10, nil, a),
		tewNode("Identity", 1, nil, a),
	}
	for _, n := range nodes {
		tewRun(t, n)
		if allocs := testing.AllocsPerRun(20, func() { Kernels[n.Op](n) }); allocs != 0 {
			t.Errorf("%s: %v allocs per run", n.Op, allocs)
		}
	}
}

package templates

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"
)

// qgemmCase is one QGemm/QConv configuration.
type qgemmCase struct {
	adt, bdt, ydt DType // ydt F32: dequantised output
	perCol, zb    bool
	bias          bool
	act           string
	f32m          bool
}

func qgemmCases() []qgemmCase {
	var cs []qgemmCase
	for _, adt := range []DType{U8, I8} {
		for _, bdt := range []DType{I8, U8} {
			for _, ydt := range []DType{U8, I8, F32} {
				cs = append(cs, qgemmCase{adt: adt, bdt: bdt, ydt: ydt, perCol: true, zb: bdt == U8, bias: true, act: "Relu", f32m: true})
				cs = append(cs, qgemmCase{adt: adt, bdt: bdt, ydt: ydt, zb: true, act: "Clip"})
				cs = append(cs, qgemmCase{adt: adt, bdt: bdt, ydt: ydt, perCol: true, zb: true, bias: true})
			}
		}
	}
	return cs
}

// qgemmInputs makes the scale/zero-point/bias inputs of c for nn columns.
func qgemmInputs(rng *rand.Rand, c qgemmCase, nn int) (as, azp, bs, bzp, bias, ys, yzp *Tensor) {
	as = miscTensorF(F32, []float64{0.02 + rng.Float64()*0.05}, 1)
	azp, _ = miscRandQ(rng, c.adt, 1)
	azp.Shape = nil
	as.Shape = nil
	nb := 1
	if c.perCol {
		nb = nn
	}
	sv := make([]float64, nb)
	for i := range sv {
		sv[i] = 0.005 + rng.Float64()*0.02
	}
	bs = miscTensorF(F32, sv, nb)
	if c.zb {
		bzp, _ = miscRandQ(rng, c.bdt, nb)
	}
	if c.bias {
		bias, _ = miscRandQ(rng, I32, nn)
	}
	if c.ydt != F32 {
		ys = miscTensorF(F32, []float64{0.05 + rng.Float64()*0.2}, 1)
		ys.Shape = nil
		yzp, _ = miscRandQ(rng, c.ydt, 1)
		yzp.Shape = nil
	}
	return
}

func qgemmActAttrs(c qgemmCase) Attrs {
	at := Attrs{}
	switch c.act {
	case "Relu":
		at["activation"] = "Relu"
	case "Clip":
		at["activation"] = "Clip"
		at["activation_params"] = []float32{-1.5, 2.25}
	}
	if c.f32m {
		at["f32_multiplier"] = int64(1)
	}
	return at
}

// qgemmRefOut maps an int64 accumulator of column j to the output value,
// as QGemm's doc says.
func qgemmRefOut(c qgemmCase, acc int64, j int, as, bs, ys, yzp *Tensor) float64 {
	sa := ewF64At(as, 0)
	sb := ewF64At(bs, j%bs.Len())
	if c.ydt == F32 {
		v := float64(float32(acc) * float32(sa*sb))
		switch c.act {
		case "Relu":
			v = math.Max(v, 0)
		case "Clip":
			v = math.Max(-1.5, math.Min(2.25, v))
		}
		return v
	}
	sy := ewF64At(ys, 0)
	m := sa * sb / sy
	if c.f32m {
		m = float64(float32(float64(float32(sa*sb)) / sy))
	}
	zy := ewF64At(yzp, 0)
	lo, hi, _ := miscQRange(c.ydt)
	q := math.RoundToEven(float64(acc)*m) + zy
	switch c.act {
	case "Relu":
		lo = math.Max(lo, zy)
	case "Clip":
		lo = math.Max(lo, math.RoundToEven(float64(float32(-1.5/sy)))+zy)
		hi = math.Min(hi, math.RoundToEven(float64(float32(2.25/sy)))+zy)
	}
	return math.Max(lo, math.Min(hi, q))
}

func qgemmZP(t *Tensor, i int) int64 {
	if t == nil {
		return 0
	}
	return ewI64At(t, i%t.Len())
}

func TestQGemmExact(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	sizes := [][3]int{{1, 1, 1}, {5, 3, 17}, {13, 33, 40}, {7, 64, 16}, {37, 129, 33}, {2, 7, 70}, {19, 258, 150}, {6, 5, 64}, {1, 301, 65}, {12, 2, 129}}
	for ci, c := range qgemmCases() {
		for _, sz := range sizes {
			for _, threads := range []int{1, 2, 3} {
				m, k, nn := sz[0], sz[1], sz[2]
				name := fmt.Sprintf("%d_%s%s%s_%dx%dx%d_t%d", ci, c.adt, c.bdt, c.ydt, m, k, nn, threads)
				a, av := miscRandQ(rng, c.adt, m, k)
				b, bv := miscRandQ(rng, c.bdt, k, nn)
				as, azp, bs, bzp, bias, ys, yzp := qgemmInputs(rng, c, nn)
				n := nnNode("cuvil::QGemm", 1, qgemmActAttrs(c), 1, a, as, azp, b, bs, bzp, bias, ys, yzp)
				n.Pool = NewWorkPool(WithThreads(threads))
				if err := QGemm(n); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if c.bdt == I8 {
					qgemmCheckPacked(t, name, n, QGemm, threads)
				}
				n.Pool.Close()
				y := n.Out[0]
				if y.DType != c.ydt {
					t.Fatalf("%s: dtype %s", name, y.DType)
				}
				za := qgemmZP(azp, 0)
				for i := 0; i < m; i++ {
					for j := 0; j < nn; j++ {
						var acc int64
						for kk := 0; kk < k; kk++ {
							acc += (int64(av[i*k+kk]) - za) * (int64(bv[kk*nn+j]) - qgemmZP(bzp, j))
						}
						if bias != nil {
							acc += int64(bias.I32()[j])
						}
						want := qgemmRefOut(c, acc, j, as, bs, ys, yzp)
						if got := ewF64At(y, i*nn+j); got != want {
							t.Fatalf("%s: y[%d,%d] = %v, want %v (acc %d)", name, i, j, got, want, acc)
						}
					}
				}
			}
		}
	}
}

// TestQConvExact: QConv (NCHW and NHWC, prepacked or not) against
// ConvInteger's int64 sums on awkward geometries, odd-numbered ones with
// 7-bit weights (the AVX2 byte tiles), at 1-3 threads.
func TestQConvExact(t *testing.T) {
	rng := rand.New(rand.NewSource(12))
	type geo struct {
		n, c, h, w, m, kh, kw int
		at                    Attrs
	}
	geos := []geo{
		{1, 3, 7, 5, 5, 3, 3, Attrs{"pads": []int64{1, 1, 1, 1}}},
		{2, 5, 6, 6, 17, 1, 1, Attrs{}},
		{2, 6, 9, 10, 20, 1, 1, Attrs{}}, // pointwise, 90 pixels: two blocks of the transpose
		{1, 4, 9, 8, 3, 3, 2, Attrs{"strides": []int64{2, 1}, "dilations": []int64{1, 2}, "pads": []int64{0, 1, 2, 0}}},
		{1, 2, 5, 5, 33, 3, 3, Attrs{"auto_pad": "SAME_UPPER", "strides": []int64{2, 2}}},
		{2, 8, 5, 7, 19, 1, 1, Attrs{}},                                                        // pointwise, C%4 == 0: NHWC reads X in place
		{1, 8, 7, 6, 21, 1, 1, Attrs{"strides": []int64{2, 2}}},                                // strided pointwise: NHWC im2col
		{2, 7, 6, 5, 13, 3, 3, Attrs{"pads": []int64{1, 2, 0, 1}, "dilations": []int64{2, 1}}}, // odd C, uneven pads
	}
	for ci, c := range qgemmCases() {
		for gi, g := range geos {
			for _, threads := range []int{1, 2, 3} {
				name := fmt.Sprintf("%d_%s%s%s_g%d_t%d", ci, c.adt, c.bdt, c.ydt, gi, threads)
				x, _ := miscRandQ(rng, c.adt, g.n, g.c, g.h, g.w)
				w, _ := miscRandQ(rng, c.bdt, g.m, g.c, g.kh, g.kw)
				if gi%2 == 1 { // 7-bit weights: the AVX2 byte tiles (pairsFit)
					for i := range w.Len() {
						if c.bdt == I8 {
							w.I8()[i] >>= 1
						} else {
							w.U8()[i] = w.U8()[i]>>1 + 64
						}
					}
				}
				as, azp, bs, bzp, bias, ys, yzp := qgemmInputs(rng, c, g.m)
				at := qgemmActAttrs(c)
				for k, v := range g.at {
					at[k] = v
				}
				n := nnNode("cuvil::QConv", 1, at, 1, x, as, azp, w, bs, bzp, bias, ys, yzp)
				n.Pool = NewWorkPool(WithThreads(threads))
				if err := QConv(n); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if fit := qgemmStateOf(n).b.pairsFit; fit != (gi%2 == 1) && g.c*g.kh*g.kw > 1 {
					t.Fatalf("%s: pairsFit = %v", name, fit)
				}
				if c.bdt == I8 {
					qgemmCheckPacked(t, name, n, QConv, threads)
				}
				n.Pool.Close()
				// The int64 accumulators through the reference ConvInteger
				// (int32 there, exact at these sizes), bias added in int64.
				ci := nnNode("ConvInteger", 10, g.at, 1, x, w, azp, bzp)
				if err := ConvInteger(ci); err != nil {
					t.Fatal(err)
				}
				acc := ci.Out[0]
				y := n.Out[0]
				if fmt.Sprint(y.Shape) != fmt.Sprint(acc.Shape) {
					t.Fatalf("%s: shape %v, want %v", name, y.Shape, acc.Shape)
				}
				vol := acc.Len() / (g.n * g.m)
				for i := 0; i < acc.Len(); i++ {
					j := (i / vol) % g.m
					a := int64(acc.I32()[i])
					if bias != nil {
						a += int64(bias.I32()[j])
					}
					want := qgemmRefOut(c, a, j, as, bs, ys, yzp)
					if got := ewF64At(y, i); got != want {
						t.Fatalf("%s: y[%d] = %v, want %v", name, i, got, want)
					}
				}
				// The same convolution channels-last (layout NHWC: X and W
				// permuted, Y [N,OH,OW,M]) gives the same numbers.
				at["layout"] = "NHWC"
				xn := qconvToNHWC(x)
				wn := qconvToNHWC(w)
				nn := nnNode("cuvil::QConv", 1, at, 1, xn, as, azp, wn, bs, bzp, bias, ys, yzp)
				nn.Pool = NewWorkPool(WithThreads(threads))
				if err := QConv(nn); err != nil {
					t.Fatalf("%s NHWC: %v", name, err)
				}
				if c.bdt == I8 {
					qgemmCheckPacked(t, name+"_nhwc", nn, QConv, threads)
				}
				nn.Pool.Close()
				if want := qconvToNHWC(y); fmt.Sprint(nn.Out[0].Shape) != fmt.Sprint(want.Shape) {
					t.Fatalf("%s NHWC: shape %v, want %v", name, nn.Out[0].Shape, want.Shape)
				} else {
					qgemmSame(t, name+" NHWC", nn.Out[0], want)
				}
			}
		}
	}
}

// qconvToNHWC returns t [N,C,H,W] permuted to [N,H,W,C].
func qconvToNHWC(t *Tensor) *Tensor {
	N, C, H, W := t.Shape[0], t.Shape[1], t.Shape[2], t.Shape[3]
	out := &Tensor{}
	out.Resize(t.DType, N, H, W, C)
	for b := 0; b < N; b++ {
		for c := 0; c < C; c++ {
			for p := 0; p < H*W; p++ {
				ewSetF64(out, (b*H*W+p)*C+c, ewF64At(t, (b*C+c)*H*W+p))
			}
		}
	}
	return out
}

// TestQGemmMatchesQLinear: QGemm with f32_multiplier and QConv give the
// reference QLinearMatMul's and QLinearConv's bytes (what passes/quant.go
// relies on).
func TestQGemmMatchesQLinear(t *testing.T) {
	rng := rand.New(rand.NewSource(13))
	for _, adt := range []DType{U8, I8} {
		for _, bdt := range []DType{U8, I8} {
			c := qgemmCase{adt: adt, bdt: bdt, ydt: adt, zb: true}
			a, _ := miscRandQ(rng, adt, 9, 21)
			b, _ := miscRandQ(rng, bdt, 21, 19)
			as, azp, bs, bzp, _, ys, yzp := qgemmInputs(rng, c, 19)
			ref := nnNode("QLinearMatMul", 10, Attrs{}, 1, a, as, azp, b, bs, bzp, ys, yzp)
			if err := QLinearMatMul(ref); err != nil {
				t.Fatal(err)
			}
			n := nnNode("cuvil::QGemm", 1, Attrs{"f32_multiplier": int64(1)}, 1, a, as, azp, b, bs, bzp, nil, ys, yzp)
			if err := QGemm(n); err != nil {
				t.Fatal(err)
			}
			qgemmSame(t, "matmul "+adt.String()+bdt.String(), n.Out[0], ref.Out[0])

			c.perCol, c.bias = true, true
			x, _ := miscRandQ(rng, adt, 1, 3, 8, 7)
			w, _ := miscRandQ(rng, bdt, 6, 3, 3, 3)
			as, azp, bs, bzp, bias, ys, yzp := qgemmInputs(rng, c, 6)
			at := Attrs{"pads": []int64{1, 0, 1, 2}}
			refc := nnNode("QLinearConv", 10, at, 1, x, as, azp, w, bs, bzp, ys, yzp, bias)
			if err := QLinearConv(refc); err != nil {
				t.Fatal(err)
			}
			nc := nnNode("cuvil::QConv", 1, at, 1, x, as, azp, w, bs, bzp, bias, ys, yzp)
			if err := QConv(nc); err != nil {
				t.Fatal(err)
			}
			qgemmSame(t, "conv "+adt.String()+bdt.String(), nc.Out[0], refc.Out[0])
		}
	}
}

func qgemmSame(t *testing.T, what string, got, want *Tensor) {
	t.Helper()
	if got.DType != want.DType || fmt.Sprint(got.Shape) != fmt.Sprint(want.Shape) {
		t.Fatalf("%s: %s%v, want %s%v", what, got.DType, got.Shape, want.DType, want.Shape)
	}
	for i := 0; i < got.Len(); i++ {
		if ewF64At(got, i) != ewF64At(want, i) {
			t.Fatalf("%s: [%d] = %v, want %v", what, i, ewF64At(got, i), ewF64At(want, i))
		}
	}
}

// BenchmarkQGemm: a 64x1024x1024 u8 x s8 -> f32 QGemm at one thread (VNNI
// tiles where the CPU has them; -tags purego for the Go tile).
func BenchmarkQGemm(b *testing.B) {
	rng := rand.New(rand.NewSource(3))
	c := qgemmCase{adt: U8, bdt: I8, ydt: F32, perCol: true, bias: true}
	m, k, nn := 64, 1024, 1024
	a, _ := miscRandQ(rng, c.adt, m, k)
	bt, _ := miscRandQ(rng, c.bdt, k, nn)
	as, azp, bs, bzp, bias, ys, yzp := qgemmInputs(rng, c, nn)
	n := nnNode("cuvil::QGemm", 1, qgemmActAttrs(c), 1, a, as, azp, bt, bs, bzp, bias, ys, yzp)
	n.Pool = NewWorkPool(WithThreads(1))
	defer n.Pool.Close()
	b.SetBytes(int64(m * k * nn)) // "bytes" are multiply-adds
	for i := 0; i < b.N; i++ {
		if err := QGemm(n); err != nil {
			b.Fatal(err)
		}
	}
}

// qgemmCheckPacked runs n (a QGemm or QConv that has run) again with its
// s8 B/W prepacked as the prepack pass stores it (PrepackQWeights,
// qgemmPackedAttr), twice (the second run reuses the column sums), and
// requires n's output bit for bit.
func qgemmCheckPacked(t *testing.T, name string, n *Node, k Kernel, threads int) {
	t.Helper()
	w := n.In[3]
	pw, ok := PrepackQWeights(w.I8(), w.Shape, n.Op == "cuvil::QConv")
	if !ok {
		t.Fatalf("%s: PrepackQWeights refused %v", name, w.Shape)
	}
	at := Attrs{}
	for key, v := range n.Attrs {
		at[key] = v
	}
	shape := make([]int64, len(w.Shape))
	for i, d := range w.Shape {
		shape[i] = int64(d)
	}
	at[qgemmPackedAttr] = shape
	in := append([]*Tensor(nil), n.In...)
	in[3] = &Tensor{DType: I8, Shape: []int{len(pw)}, Data: pw}
	pn := nnNode(n.Op, 1, at, 1, in...)
	pn.Pool = NewWorkPool(WithThreads(threads))
	defer pn.Pool.Close()
	for run := 0; run < 2; run++ {
		if err := k(pn); err != nil {
			t.Fatalf("%s packed: %v", name, err)
		}
		y, want := pn.Out[0], n.Out[0]
		if y.Len() != want.Len() || y.DType != want.DType {
			t.Fatalf("%s packed: %s %v, want %s %v", name, y.DType, y.Shape, want.DType, want.Shape)
		}
		for i := 0; i < y.Len(); i++ {
			if a, b := ewF64At(y, i), ewF64At(want, i); a != b && !(math.IsNaN(a) && math.IsNaN(b)) {
				t.Fatalf("%s packed, run %d: y[%d] = %v, unpacked %v", name, run, i, a, b)
			}
		}
	}
	// Wrong panels are an error naming the node, not a panic.
	in[3] = &Tensor{DType: I8, Shape: []int{len(pw) - 1}, Data: pw[:len(pw)-1]}
	bad := nnNode(n.Op, 1, at, 1, in...)
	if err := k(bad); err == nil || !strings.Contains(err.Error(), "prepacked") {
		t.Fatalf("%s: short panels: error %v", name, err)
	}
}

// TestQuantizeLinearU8Fast: the per-tensor f32 -> u8 loop gives the
// general loop's bytes (the same scale per channel takes that one), on
// ties, saturation and infinities.
func TestQuantizeLinearU8Fast(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	const c, hw = 3, 37
	vals := make([]float64, c*hw)
	for i := range vals {
		vals[i] = (rng.Float64()*2 - 1) * 4
	}
	copy(vals, []float64{0.25, 0.75, -0.25, 1e30, -1e30, math.Inf(1), math.Inf(-1), 2.5 * 0.0125, 3.5 * 0.0125,
		-2.5 * 0.0125, -1.5 * 0.0125, 6.4, 6.4 - 1e-6, -1.25, -1.25 - 1e-6, 1.9, 1.9 + 1e-6, 5e6, -5e6, 100.5 * 0.0125, 0.5 * 0.0125})
	x := miscTensorF(F32, vals, 1, c, hw)
	zp := &Tensor{DType: U8, Data: []uint8{100}}
	fast := nnRun(t, "QuantizeLinear", 13, Attrs{}, 1, x, miscTensorF(F32, []float64{0.0125}), zp)[0]
	zps := &Tensor{DType: U8, Shape: []int{c}, Data: []uint8{100, 100, 100}}
	slow := nnRun(t, "QuantizeLinear", 13, Attrs{"axis": int64(1)}, 1, x, miscTensorF(F32, []float64{0.0125, 0.0125, 0.0125}, c), zps)[0]
	if fmt.Sprint(fast.U8()) != fmt.Sprint(slow.U8()) {
		t.Fatalf("fast %v\nslow %v", fast.U8(), slow.U8())
	}
}

func BenchmarkQuantizeLinearU8(b *testing.B) {
	rng := rand.New(rand.NewSource(9))
	vals := make([]float64, 56*56*256)
	for i := range vals {
		vals[i] = (rng.Float64()*2 - 1) * 4
	}
	x := miscTensorF(F32, vals, 1, 256, 56, 56)
	zp := &Tensor{DType: U8, Data: []uint8{100}}
	n := nnNode("QuantizeLinear", 13, Attrs{}, 1, x, miscTensorF(F32, []float64{0.0125}), zp)
	for i := 0; i < b.N; i++ {
		if err := QuantizeLinear(n); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkQConvNHWC: squeezenet's fire3 expand3x3 (16 -> 64 channels,
// 55x55, 3x3 pad 1) and its squeeze (128 -> 16, pointwise), u8 x s8 -> f32 / u8, NHWC, one thread.
func BenchmarkQConvNHWC(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	for _, g := range []struct {
		name         string
		c, m, k, pad int
		quant        bool
		hw           int
	}{{"expand3x3", 16, 64, 3, 1, false, 55}, {"squeeze", 128, 16, 1, 0, true, 55}, {"mbv2_expand", 16, 96, 1, 0, false, 112}} {
		b.Run(g.name, func(b *testing.B) {
			x, _ := miscRandQ(rng, U8, 1, g.hw, g.hw, g.c)
			w, _ := miscRandQ(rng, I8, g.m, g.k, g.k, g.c)
			c := qgemmCase{adt: U8, bdt: I8, ydt: F32, perCol: true, bias: true, act: "Relu"}
			if g.quant {
				c.ydt = U8
			}
			as, azp, bs, bzp, bias, ys, yzp := qgemmInputs(rng, c, g.m)
			at := qgemmActAttrs(c)
			at["layout"] = "NHWC"
			at["pads"] = []int64{int64(g.pad), int64(g.pad), int64(g.pad), int64(g.pad)}
			n := nnNode("cuvil::QConv", 1, at, 1, x, as, azp, w, bs, bzp, bias, ys, yzp)
			n.Pool = NewWorkPool(WithThreads(1))
			defer n.Pool.Close()
			for i := 0; i < b.N; i++ {
				if err := QConv(n); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestQGemmExactPairs: QGemm is bit-exact against the int64 reference
// whether B's k pairs fit VPMADDUBSW's s16 sums (7-bit weights, the AVX2
// byte tiles) or not (full-range weights, one pair of -128s at least: the
// exact tiles), on odd sizes, with zero points on both sides, s8 and u8
// A and B, prepacked or not, at 1-3 threads; B's pairsFit is as expected.
func TestQGemmExactPairs(t *testing.T) {
	rng := rand.New(rand.NewSource(21))
	sizes := [][3]int{{1, 3, 5}, {7, 17, 33}, {13, 66, 17}, {29, 131, 47}, {6, 255, 16}, {11, 9, 100}}
	for _, narrow := range []bool{true, false} {
		for _, c := range []qgemmCase{
			{adt: U8, bdt: I8, ydt: F32, perCol: true, zb: true, bias: true},
			{adt: I8, bdt: I8, ydt: U8, perCol: true, bias: true, act: "Relu"},
			{adt: U8, bdt: U8, ydt: I8, zb: true},
		} {
			for _, sz := range sizes {
				for _, threads := range []int{1, 2, 3} {
					m, k, nn := sz[0], sz[1], sz[2]
					name := fmt.Sprintf("narrow=%v_%s%s%s_%dx%dx%d_t%d", narrow, c.adt, c.bdt, c.ydt, m, k, nn, threads)
					a, av := miscRandQ(rng, c.adt, m, k)
					b, bv := miscRandQ(rng, c.bdt, k, nn)
					for i := range bv {
						switch {
						case narrow && c.bdt == I8:
							b.I8()[i] = int8(rng.Intn(128) - 64)
							bv[i] = float64(b.I8()[i])
						case narrow:
							b.U8()[i] = uint8(rng.Intn(128) + 64)
							bv[i] = float64(b.U8()[i])
						case i == 0 && c.bdt == I8: // a pair that cannot fit
							b.I8()[0], b.I8()[nn] = -128, -128
							bv[0], bv[nn] = -128, -128
						case i == 0:
							b.U8()[0], b.U8()[nn] = 0, 0
							bv[0], bv[nn] = 0, 0
						}
					}
					if k < 2 {
						continue
					}
					as, azp, bs, bzp, bias, ys, yzp := qgemmInputs(rng, c, nn)
					n := nnNode("cuvil::QGemm", 1, qgemmActAttrs(c), 1, a, as, azp, b, bs, bzp, bias, ys, yzp)
					n.Pool = NewWorkPool(WithThreads(threads))
					if err := QGemm(n); err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					if fit := qgemmStateOf(n).b.pairsFit; fit != narrow {
						t.Fatalf("%s: pairsFit = %v", name, fit)
					}
					if c.bdt == I8 {
						qgemmCheckPacked(t, name, n, QGemm, threads)
					}
					n.Pool.Close()
					y := n.Out[0]
					za := qgemmZP(azp, 0)
					for i := 0; i < m; i++ {
						for j := 0; j < nn; j++ {
							var acc int64
							for kk := 0; kk < k; kk++ {
								acc += (int64(av[i*k+kk]) - za) * (int64(bv[kk*nn+j]) - qgemmZP(bzp, j))
							}
							if bias != nil {
								acc += int64(bias.I32()[j])
							}
							want := qgemmRefOut(c, acc, j, as, bs, ys, yzp)
							if got := ewF64At(y, i*nn+j); got != want {
								t.Fatalf("%s: y[%d,%d] = %v, want %v (acc %d)", name, i, j, got, want, acc)
							}
						}
					}
				}
			}
		}
	}
}

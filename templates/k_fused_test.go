package templates

import (
	"math"
	"math/rand"
	"testing"
)

// The fused kernels are checked against the unfused kernels composed
// (Conv, Add, Relu, ...) run in float64 on the same random data, so the
// reference carries no float32 rounding of its own.

// fusedActCase is one activation with its ONNX spelling for the reference.
type fusedActCase struct {
	name   string
	params []float32
}

var fusedActCases = []fusedActCase{
	{"", nil},
	{"Relu", nil},
	{"Clip", []float32{-0.5, 1.5}},
	{"LeakyRelu", []float32{0.2}},
	{"Sigmoid", nil},
	{"Tanh", nil},
	{"HardSwish", nil},
	{"Gelu", nil},
	{"GeluTanh", nil},
}

func fusedAttrs(a fusedActCase, extra Attrs) Attrs {
	at := Attrs{}
	for k, v := range extra {
		at[k] = v
	}
	if a.name != "" {
		at["activation"] = a.name
	}
	if a.params != nil {
		at["activation_params"] = a.params
	}
	return at
}

// fusedRef64 runs an unfused ai.onnx kernel in float64.
func fusedRef64(t *testing.T, op string, version int, attrs Attrs, in ...*Tensor) *Tensor {
	t.Helper()
	return nnRun(t, op, version, attrs, 1, in...)[0]
}

// fusedRefAct applies the activation the unfused way (its own ONNX node;
// Gelu, which ONNX lacks before opset 20, as Erf/Mul/Add or Tanh/Pow...).
func fusedRefAct(t *testing.T, a fusedActCase, x *Tensor) *Tensor {
	t.Helper()
	switch a.name {
	case "":
		return x
	case "Relu":
		return fusedRef64(t, "Relu", 14, nil, x)
	case "Clip":
		lo, hi := &Tensor{}, &Tensor{}
		lo.Resize(F64)
		hi.Resize(F64)
		lo.F64()[0], hi.F64()[0] = float64(a.params[0]), float64(a.params[1])
		return fusedRef64(t, "Clip", 13, nil, x, lo, hi)
	case "LeakyRelu":
		return fusedRef64(t, "LeakyRelu", 16, Attrs{"alpha": a.params[0]}, x)
	case "Sigmoid", "Tanh":
		return fusedRef64(t, a.name, 13, nil, x)
	case "HardSwish":
		return fusedRef64(t, "HardSwish", 14, nil, x)
	case "Gelu", "GeluTanh":
		y := &Tensor{}
		y.Resize(F64, x.Shape...)
		for i, v := range x.F64() {
			if a.name == "Gelu" {
				y.F64()[i] = v * 0.5 * (1 + math.Erf(v/math.Sqrt2))
			} else {
				y.F64()[i] = 0.5 * v * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(v+0.044715*math.Pow(v, 3))))
			}
		}
		return y
	}
	t.Fatalf("unknown activation %q", a.name)
	return nil
}

func f64(t *Tensor) *Tensor { return nnAs(t, F64) }

func TestFusedConv(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	type convCase struct {
		name  string
		x, w  []int
		attrs Attrs
	}
	cases := []convCase{
		{"3x3pad", []int{2, 6, 9, 11}, []int{5, 6, 3, 3}, Attrs{"pads": []int64{1, 1, 1, 1}}},
		{"strided_group", []int{1, 6, 13, 7}, []int{9, 2, 3, 3}, Attrs{"group": int64(3), "strides": []int64{2, 2}, "pads": []int64{0, 1, 1, 0}}},
		// More output columns than one block (nb = 256 for 300 channels).
		{"pointwise_blocks", []int{1, 3, 17, 19}, []int{300, 3, 1, 1}, nil},
		{"1d", []int{2, 3, 23}, []int{4, 3, 5}, Attrs{"dilations": []int64{2}}},
		{"depthwise", []int{2, 5, 9, 8}, []int{5, 1, 3, 3}, Attrs{"group": int64(5), "strides": []int64{2, 1}, "pads": []int64{1, 0, 1, 2}}},
	}
	for _, c := range cases {
		X, W := nnRand(r, c.x...), nnRand(r, c.w...)
		B := nnRand(r, c.w[0])
		conv := fusedRef64(t, "Conv", 11, c.attrs, f64(X), f64(W), f64(B))
		convNoBias := fusedRef64(t, "Conv", 11, c.attrs, f64(X), f64(W))
		Z := nnRand(r, conv.Shape...)
		for _, a := range fusedActCases {
			for _, mode := range []string{"none", "before", "after", "nobias"} {
				in := []*Tensor{X, W, B}
				ref := conv
				if mode == "nobias" {
					in, ref = []*Tensor{X, W}, convNoBias
				}
				attrs := fusedAttrs(a, c.attrs)
				switch mode {
				case "before":
					in = append(in, Z)
					ref = fusedRefAct(t, a, fusedRef64(t, "Add", 14, nil, ref, f64(Z)))
				case "after":
					in = append(in, Z)
					attrs["residual_after_activation"] = int64(1)
					ref = fusedRef64(t, "Add", 14, nil, fusedRefAct(t, a, ref), f64(Z))
				default:
					ref = fusedRefAct(t, a, ref)
				}
				got := nnRun(t, "cuvil::FusedConv", 1, attrs, 1, in...)[0]
				nnCheck(t, c.name+"/"+a.name+"/"+mode, got, ref.Shape, ref.F64(), 1e-5)
			}
		}
	}
}

func TestFusedConvF64AndHalf(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	X, W, B := nnRand(r, 1, 4, 7, 5), nnRand(r, 3, 4, 3, 3), nnRand(r, 3)
	pads := Attrs{"pads": []int64{1, 1, 1, 1}}
	want := fusedRef64(t, "Relu", 14, nil, fusedRef64(t, "Conv", 11, pads, f64(X), f64(W), f64(B)))
	for _, dt := range []DType{F64, F16} {
		got := nnRun(t, "cuvil::FusedConv", 1, Attrs{"pads": []int64{1, 1, 1, 1}, "activation": "Relu"}, 1, nnInputsAs([]*Tensor{X, W, B}, dt)...)[0]
		if got.DType != dt {
			t.Fatalf("%v: output dtype %v", dt, got.DType)
		}
		tol := 1e-12
		if dt == F16 {
			tol = 2e-2
		}
		nnCheck(t, "dtype", got, want.Shape, want.F64(), tol)
	}
}

func TestFusedGemm(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	// m = 131 rows with n = 1100 columns splits into 64-row blocks.
	for _, sz := range [][3]int{{7, 5, 9}, {131, 1100, 17}} {
		m, n, k := sz[0], sz[1], sz[2]
		for _, tr := range [][2]int64{{0, 0}, {1, 0}, {0, 1}, {1, 1}} {
			as, bs := []int{m, k}, []int{k, n}
			if tr[0] == 1 {
				as = []int{k, m}
			}
			if tr[1] == 1 {
				bs = []int{n, k}
			}
			A, B := nnRand(r, as...), nnRand(r, bs...)
			Z := nnRand(r, m, n)
			for _, cs := range [][]int{nil, {n}, {1, n}, {m, 1}, {m, n}, {}} {
				gattrs := Attrs{"transA": tr[0], "transB": tr[1], "alpha": float32(0.75), "beta": float32(1.25)}
				in := []*Tensor{A, B}
				if cs != nil {
					in = append(in, nnRand(r, cs...))
				}
				ref := fusedRef64(t, "Gemm", 13, gattrs, nnInputsAs(in, F64)...)
				for _, a := range []fusedActCase{{"Relu", nil}, {"Gelu", nil}, {"", nil}} {
					attrs := fusedAttrs(a, gattrs)
					want := fusedRefAct(t, a, fusedRef64(t, "Add", 14, nil, ref, f64(Z)))
					zin := append(append([]*Tensor(nil), in...), nil, Z)[:4]
					if len(in) == 3 {
						zin = append(append([]*Tensor(nil), in...), Z)
					}
					got := nnRun(t, "cuvil::FusedGemm", 1, attrs, 1, zin...)[0]
					nnCheck(t, "gemm+Z", got, want.Shape, want.F64(), 1e-5)
					got = nnRun(t, "cuvil::FusedGemm", 1, attrs, 1, in...)[0]
					want = fusedRefAct(t, a, ref)
					nnCheck(t, "gemm", got, want.Shape, want.F64(), 1e-5)
				}
			}
		}
	}
}

func TestFusedMatMul(t *testing.T) {
	r := rand.New(rand.NewSource(4))
	for _, as := range [][]int{{2, 67, 33}, {33}, {5, 33}, {3, 1, 2, 33}} {
		A, B, bias := nnRand(r, as...), nnRand(r, 33, 1030), nnRand(r, 1030)
		mm := fusedRef64(t, "MatMul", 13, nil, f64(A), f64(B))
		Z := nnRand(r, mm.Shape...)
		withBias := fusedRef64(t, "Add", 14, nil, mm, f64(bias))
		for _, a := range fusedActCases {
			attrs := fusedAttrs(a, nil)
			want := fusedRefAct(t, a, withBias)
			got := nnRun(t, "cuvil::FusedMatMul", 1, attrs, 1, A, B, bias)[0]
			nnCheck(t, "matmul+bias/"+a.name, got, want.Shape, want.F64(), 1e-5)
			want = fusedRef64(t, "Add", 14, nil, fusedRefAct(t, a, mm), f64(Z))
			attrs["residual_after_activation"] = int64(1)
			got = nnRun(t, "cuvil::FusedMatMul", 1, attrs, 1, A, B, nil, Z)[0]
			nnCheck(t, "matmul+Z after/"+a.name, got, want.Shape, want.F64(), 1e-5)
		}
	}
}

func TestGelu(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	X := nnRand(r, 3, 37)
	for _, c := range []struct{ ap, act string }{{"none", "Gelu"}, {"tanh", "GeluTanh"}} {
		want := fusedRefAct(t, fusedActCase{c.act, nil}, f64(X))
		got := nnRun(t, "cuvil::Gelu", 1, Attrs{"approximate": c.ap}, 1, X)[0]
		nnCheck(t, c.ap, got, want.Shape, want.F64(), 1e-6)
		got = nnRun(t, "cuvil::Gelu", 1, Attrs{"approximate": c.ap}, 1, f64(X))[0]
		nnCheck(t, c.ap+"/f64", got, want.Shape, want.F64(), 1e-12)
	}
	n := nnNode("cuvil::Gelu", 1, Attrs{"approximate": "erf"}, 1, X)
	if err := Gelu(n); err == nil {
		t.Error("approximate=erf accepted")
	}
}

func TestSkipLayerNorm(t *testing.T) {
	r := rand.New(rand.NewSource(6))
	X, S, B := nnRand(r, 2, 7, 45), nnRand(r, 45), nnRand(r, 45)
	for _, skipShape := range [][]int{{2, 7, 45}, {45}} {
		Skip := nnRand(r, skipShape...)
		sum := fusedRef64(t, "Add", 14, nil, f64(X), f64(Skip))
		want := fusedRef64(t, "LayerNormalization", 17, Attrs{"epsilon": float32(1e-3)}, sum, f64(S), f64(B))
		out := nnRun(t, "cuvil::SkipLayerNorm", 1, Attrs{"epsilon": float32(1e-3)}, 2, X, Skip, S, B)
		nnCheck(t, "Y", out[0], want.Shape, want.F64(), 1e-5)
		nnCheck(t, "Sum", out[1], sum.Shape, sum.F64(), 1e-6)
		noB := fusedRef64(t, "LayerNormalization", 17, Attrs{"epsilon": float32(1e-3)}, sum, f64(S))
		got := nnRun(t, "cuvil::SkipLayerNorm", 1, Attrs{"epsilon": float32(1e-3)}, 1, X, Skip, S)[0]
		nnCheck(t, "Y no bias", got, noB.Shape, noB.F64(), 1e-5)
	}
	// cuvil::LayerNorm is LayerNormalization with one output.
	want := fusedRef64(t, "LayerNormalization", 17, Attrs{"axis": int64(-1)}, f64(X), f64(S), f64(B))
	got := nnRun(t, "cuvil::LayerNorm", 1, Attrs{"axis": int64(-1)}, 1, X, S, B)[0]
	nnCheck(t, "LayerNorm", got, want.Shape, want.F64(), 1e-5)
}

func TestScaleShift(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	X, S, B := nnRand(r, 2, 5, 3, 7), nnRand(r, 5), nnRand(r, 5)
	S3, B3 := nnT([]int{5, 1, 1}, S.F32()...), nnT([]int{5, 1, 1}, B.F32()...)
	affine := fusedRef64(t, "Add", 14, nil, fusedRef64(t, "Mul", 14, nil, f64(X), f64(S3)), f64(B3))
	for _, a := range fusedActCases {
		want := fusedRefAct(t, a, affine)
		got := nnRun(t, "cuvil::ScaleShift", 1, fusedAttrs(a, nil), 1, X, S, B)[0]
		nnCheck(t, a.name, got, want.Shape, want.F64(), 1e-5)
	}
}

func TestFusedErrors(t *testing.T) {
	r := rand.New(rand.NewSource(8))
	X, W := nnRand(r, 1, 2, 5, 5), nnRand(r, 3, 2, 3, 3)
	for _, c := range []struct {
		name string
		k    Kernel
		n    *Node
	}{
		{"bad activation", FusedConv, nnNode("cuvil::FusedConv", 1, Attrs{"activation": "Swish"}, 1, X, W)},
		{"residual shape", FusedConv, nnNode("cuvil::FusedConv", 1, nil, 1, X, W, nil, nnRand(r, 1, 3, 5, 5))},
		{"matmul batched B", FusedMatMul, nnNode("cuvil::FusedMatMul", 1, nil, 1, nnRand(r, 2, 3, 4), nnRand(r, 2, 4, 5))},
		{"matmul bias", FusedMatMul, nnNode("cuvil::FusedMatMul", 1, nil, 1, nnRand(r, 3, 4), nnRand(r, 4, 5), nnRand(r, 4))},
		{"scaleshift channels", ScaleShift, nnNode("cuvil::ScaleShift", 1, nil, 1, X, nnRand(r, 3), nnRand(r, 3))},
		{"skip shape", SkipLayerNorm, nnNode("cuvil::SkipLayerNorm", 1, nil, 1, nnRand(r, 2, 4), nnRand(r, 3), nnRand(r, 4))},
	} {
		if err := c.k(c.n); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}

func TestFusedNoAllocs(t *testing.T) {
	r := rand.New(rand.NewSource(9))
	for _, n := range []*Node{
		nnNode("cuvil::FusedConv", 1, Attrs{"activation": "Relu", "pads": []int64{1, 1, 1, 1}}, 1, nnRand(r, 1, 3, 9, 9), nnRand(r, 4, 3, 3, 3), nnRand(r, 4), nnRand(r, 1, 4, 9, 9)),
		nnNode("cuvil::FusedMatMul", 1, Attrs{"activation": "Gelu"}, 1, nnRand(r, 2, 5, 6), nnRand(r, 6, 7), nnRand(r, 7)),
		nnNode("cuvil::SkipLayerNorm", 1, nil, 1, nnRand(r, 2, 5, 6), nnRand(r, 2, 5, 6), nnRand(r, 6)),
	} {
		if a := nnAllocs(t, n, Kernels[n.Op]); a != 0 {
			t.Errorf("%s: %v allocations per run", n.Op, a)
		}
	}
}

// BenchmarkConvResidualRelu compares a ResNet bottleneck 1x1 convolution
// with its residual Add and Relu fused (FusedConv) against the three
// unfused kernels.
func BenchmarkConvResidualRelu(b *testing.B) {
	r := rand.New(rand.NewSource(10))
	X, W, B := nnRand(r, 1, 64, 56, 56), nnRand(r, 256, 64, 1, 1), nnRand(r, 256)
	Z := nnRand(r, 1, 256, 56, 56)
	b.Run("unfused", func(b *testing.B) {
		conv := nnNode("Conv", 11, nil, 1, X, W, B)
		add := nnNode("Add", 14, nil, 1, conv.Out[0], Z)
		relu := nnNode("Relu", 14, nil, 1, add.Out[0])
		for b.Loop() {
			Conv(conv)
			Kernels["Add"](add)
			Relu(relu)
		}
	})
	b.Run("fused", func(b *testing.B) {
		n := nnNode("cuvil::FusedConv", 1, Attrs{"activation": "Relu"}, 1, X, W, B, Z)
		for b.Loop() {
			FusedConv(n)
		}
	})
}

// BenchmarkMatMulBiasGelu is BERT's feed-forward up-projection: MatMul,
// bias Add and GELU (erf form, five nodes in the graph; one here).
func BenchmarkMatMulBiasGelu(b *testing.B) {
	r := rand.New(rand.NewSource(11))
	A, B, bias := nnRand(r, 1, 128, 256), nnRand(r, 256, 1024), nnRand(r, 1024)
	b.Run("unfused", func(b *testing.B) {
		mm := nnNode("MatMul", 13, nil, 1, A, B)
		add := nnNode("Add", 14, nil, 1, mm.Out[0], bias)
		gelu := nnNode("cuvil::Gelu", 1, nil, 1, add.Out[0])
		for b.Loop() {
			MatMul(mm)
			Kernels["Add"](add)
			Gelu(gelu)
		}
	})
	b.Run("fused", func(b *testing.B) {
		n := nnNode("cuvil::FusedMatMul", 1, Attrs{"activation": "Gelu"}, 1, A, B, bias)
		for b.Loop() {
			FusedMatMul(n)
		}
	})
}

package templates

import (
	"math/rand"
	"testing"
)

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

func TestFusedErrors(t *testing.T) {
	r := rand.New(rand.NewSource(8))
	X, W := nnRand(r, 1, 2, 5, 5), nnRand(r, 3, 2, 3, 3)
	for _, c := range []struct {
		name string
		k    Kernel
		n    *Node
	}{
		{"bad activation", FusedConv, nnNode("cuvil::FusedConv", 1, Attrs{"activation": "Softsign"}, 1, X, W)},
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

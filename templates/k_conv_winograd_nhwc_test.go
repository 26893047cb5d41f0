package templates

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
)

// wnCases are NHWC Winograd test convolutions (NCHW shapes, transposed for
// the kernel): channels around the vector widths, maps that are not
// multiples of the tile, pads 0 to 2.
var wnCases = []struct {
	name string
	x, w []int
	pads []int64
}{
	{"odd_pad1_batch2", []int{2, 37, 11, 13}, []int{35, 37, 3, 3}, []int64{1, 1, 1, 1}},
	{"pad0", []int{1, 33, 9, 14}, []int{32, 33, 3, 3}, []int64{0, 0, 0, 0}},
	{"asym_pads", []int{2, 5, 7, 10}, []int{7, 5, 3, 3}, []int64{0, 1, 1, 0}},
	{"deep_k_blocks", []int{1, 300, 6, 7}, []int{13, 300, 3, 3}, []int64{1, 1, 1, 1}},
	{"smaller_than_tile", []int{2, 3, 3, 5}, []int{4, 3, 3, 3}, []int64{0, 0, 0, 0}},
	{"many_tiles_blocks", []int{1, 24, 41, 43}, []int{9, 24, 3, 3}, []int64{1, 1, 1, 1}},
	{"m64_full_tiles", []int{1, 16, 16, 16}, []int{64, 16, 3, 3}, []int64{1, 1, 1, 1}},
	{"pad2", []int{1, 19, 12, 17}, []int{21, 19, 3, 3}, []int64{2, 2, 2, 2}},
	{"two_blocks", []int{1, 200, 30, 30}, []int{40, 200, 3, 3}, []int64{1, 1, 1, 1}},
	// At least two blocks a thread (F(4x4) 4 blocks, F(2x2) 7): at 2 and 3
	// threads the parts take whole blocks (wnBlocks), in their own V and Mo.
	{"blocks_per_part", []int{2, 64, 40, 44}, []int{64, 64, 3, 3}, []int64{1, 1, 1, 1}},
	// googlenet's conv3 (64->192 on 56x56): the blocks' 6-row rounding
	// leaves fewer blocks than the first count (an empty last block).
	{"blocks_rounded", []int{1, 64, 56, 56}, []int{192, 64, 3, 3}, []int64{1, 1, 1, 1}},
}

// wnWeights returns W transformed for F(f x f, 3x3) as gen stores it.
func wnWeights(t testing.TB, W *Tensor, f int) *Tensor {
	u, ok := PrepackConvWinogradNHWC(W.F32(), W.Shape, f)
	if !ok {
		t.Fatalf("not a Winograd kernel: %v", W.Shape)
	}
	return &Tensor{DType: F32, Shape: []int{len(u)}, Data: u}
}

// TestFusedConvWinogradNHWC checks FusedConv layout=NHWC with Winograd
// weights against the float64 NCHW convolution, with bias and without,
// residual before and after the activation, clamp and other activations,
// at 1 and 2 threads (bit for bit equal).
func TestFusedConvWinogradNHWC(t *testing.T) { wnCompare(t) }

// wnCompare is TestFusedConvWinogradNHWC's body (k_conv_winograd_nhwc_amd64_test.go
// runs it with AVX-512 off too).
func wnCompare(t *testing.T) {
	r := rand.New(rand.NewSource(41))
	for ci, c := range wnCases {
		X, W, B := nnRand(r, c.x...), nnRand(r, c.w...), nnRand(r, c.w[0])
		cattrs := Attrs{"pads": c.pads}
		ref := nnRun(t, "Conv", 11, cattrs, 1, nnAs(X, F64), nnAs(W, F64), nnAs(B, F64))[0]
		Z := nnRand(r, ref.Shape...)
		for _, f := range []int{4, 2} {
			WP := wnWeights(t, W, f)
			// Errors scale with the values before the activation.
			var scale float64
			for _, v := range nnF64(ref) {
				scale = max(scale, math.Abs(v)+1)
			}
			for ai, act := range []fusedActCase{fusedActCases[0], fusedActCases[1], fusedActCases[(ci+2)%len(fusedActCases)]} {
				for _, after := range []bool{false, true} {
					want := ref
					if after {
						want = fusedRefAct(t, act, want)
						want = fusedRef64(t, "Add", 14, nil, want, nnAs(Z, F64))
					} else {
						want = fusedRef64(t, "Add", 14, nil, want, nnAs(Z, F64))
						want = fusedRefAct(t, act, want)
					}
					wantNHWC := nhwcOf(want, F64)
					attrs := fusedAttrs(act, cattrs)
					attrs["layout"] = "NHWC"
					attrs[ConvWinogradAttr] = ints64(W.Shape)
					if after {
						attrs["residual_after_activation"] = int64(1)
					}
					what := fmt.Sprintf("%s/F%d/%s/after=%v", c.name, f, act.name, after)
					got := nhwcRunBoth(t, what, "cuvil::FusedConv", attrs, nhwcOf(X, F32), WP, B, nhwcOf(Z, F32))
					wnClose(t, what, got, wantNHWC, scale)
					if after || ai > 0 {
						continue
					}
					// Without bias and residual.
					got = nhwcRunBoth(t, what+"/nobias", "cuvil::FusedConv", attrs, nhwcOf(X, F32), WP)
					plain := nhwcOf(nnRun(t, "Conv", 11, cattrs, 1, nnAs(X, F64), nnAs(W, F64))[0], F64)
					wnClose(t, what+"/nobias", got, plain, scale)
				}
			}
		}
	}
}

// TestWinogradNHWCTransforms compares the transforms' dispatch (assembly
// where the CPU has it) with their Go twins on channel counts around the
// vector widths, every residual mode.
func TestWinogradNHWCTransforms(t *testing.T) { wnTransformsCompare(t) }

func wnTransformsCompare(t *testing.T) {
	r := rand.New(rand.NewSource(42))
	for _, f := range []int{4, 2} {
		for _, c := range []int{1, 7, 8, 9, 16, 23, 24, 33, 64, 100} {
			var src [wgPoints][]float32
			for k := range src {
				src[k] = nnRand(r, c).F32()
			}
			ldv := c + 5
			got, want := make([]float32, wgPoints*ldv), make([]float32, wgPoints*ldv)
			wnInput(got, ldv, &src, c, f)
			wnInputGo(want, ldv, &src, 0, c, f)
			wnSame(t, fmt.Sprintf("F%d input c %d", f, c), got, want)
			mo, bias := nnRand(r, wgPoints*ldv).F32(), nnRand(r, c).F32()
			for zmode := 0; zmode < 3; zmode++ {
				var dg, dw, z [16][]float32
				for p := range dg {
					dg[p], dw[p], z[p] = make([]float32, c), make([]float32, c), nnRand(r, c).F32()
				}
				wnOutput(&dg, mo, ldv, bias, &z, c, zmode, -0.5, 0.75, f)
				wnOutputGo(&dw, mo, ldv, bias, &z, 0, c, zmode, -0.5, 0.75, f)
				for p := range dg {
					wnSame(t, fmt.Sprintf("F%d output c %d zmode %d pixel %d", f, c, zmode, p), dg[p], dw[p])
				}
			}
		}
	}
}

// wnClose checks got's shape and values against the float64 reference
// want: Winograd's error grows with the magnitudes summed, so it is
// bounded relative to scale, the largest value before the activation
// (plus the residual's 1).
func wnClose(t *testing.T, what string, got, want *Tensor, scale float64) {
	t.Helper()
	if fmt.Sprint(got.Shape) != fmt.Sprint(want.Shape) {
		t.Fatalf("%s: shape %v, want %v", what, got.Shape, want.Shape)
	}
	g, w := nnF64(got), nnF64(want)
	for i := range w {
		if d := math.Abs(g[i] - w[i]); !(d <= 2e-5*scale) {
			t.Fatalf("%s: [%d] = %v, want %v (error %g, scale %g)", what, i, g[i], w[i], d, scale)
		}
	}
}

// wnSame checks got against want within FMA rounding.
func wnSame(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		if d := math.Abs(float64(got[i] - want[i])); d > 1e-5*(1+math.Abs(float64(want[i]))) {
			t.Fatalf("%s: [%d] = %v, want %v", what, i, got[i], want[i])
		}
	}
}

func TestFusedConvWinogradNHWCErrors(t *testing.T) {
	r := rand.New(rand.NewSource(43))
	X, W := nhwcOf(nnRand(r, 1, 4, 8, 8), F32), nnRand(r, 5, 4, 3, 3)
	WP := wnWeights(t, W, 4)
	for name, attrs := range map[string]Attrs{
		"strided":   {"strides": []int64{2, 2}},
		"dilated":   {"dilations": []int64{2, 2}},
		"short":     {ConvWinogradAttr: []int64{5, 5, 3, 3}},
		"not_3x3":   {ConvWinogradAttr: []int64{5, 4, 5, 5}},
		"channels":  {ConvWinogradAttr: []int64{5, 3, 3, 3}},
		"bad_group": {"group": int64(2)},
	} {
		a := Attrs{"layout": "NHWC", ConvWinogradAttr: ints64(W.Shape)}
		for k, v := range attrs {
			a[k] = v
		}
		n := nnNode("cuvil::FusedConv", 1, a, 1, X, WP)
		if err := FusedConv(n); err == nil {
			t.Errorf("%s: FusedConv accepted the Winograd W", name)
		}
	}
}

func TestFusedConvWinogradNHWCNoAlloc(t *testing.T) {
	r := rand.New(rand.NewSource(44))
	X, W, B, Z := nhwcOf(nnRand(r, 1, 32, 20, 20), F32), nnRand(r, 32, 32, 3, 3), nnRand(r, 32), nhwcOf(nnRand(r, 1, 32, 20, 20), F32)
	n := nnNode("cuvil::FusedConv", 1, Attrs{"layout": "NHWC", ConvWinogradAttr: ints64(W.Shape), "pads": []int64{1, 1, 1, 1}, "activation": "Relu"}, 1, X, wnWeights(t, W, 2), B, Z)
	n.Pool = NewWorkPool(WithThreads(2))
	defer n.Pool.Close()
	if a := nnAllocs(t, n, FusedConv); a != 0 {
		t.Fatalf("NHWC FusedConv with Winograd W allocates %v", a)
	}
}

// BenchmarkConvWinogradNHWC times resnet50's 3x3 stride-1 convolutions
// (bias, Relu, pads 1, batch 1, NHWC) both ways: Winograd and the
// prepacked im2col GEMM.
func BenchmarkConvWinogradNHWC(b *testing.B) {
	r := rand.New(rand.NewSource(45))
	for _, s := range []struct {
		name    string
		c, m, h int
	}{
		{"64x56", 64, 64, 56}, {"128x28", 128, 128, 28}, {"256x14", 256, 256, 14}, {"512x7", 512, 512, 7},
		{"squeeze16x55", 16, 64, 55}, {"squeeze32x27", 32, 128, 27}, {"squeeze48x13", 48, 192, 13}, {"squeeze64x13", 64, 256, 13},
		{"c32m32x28", 32, 32, 28}, {"c128m128x14", 128, 128, 14}, {"c256m256x7", 256, 256, 7}, {"c64m64x7", 64, 64, 7},
		{"c3m32x56", 3, 32, 56}, {"c8m64x56", 8, 64, 56}, {"c16m16x56", 16, 16, 56}, {"c64m8x28", 64, 8, 28}, {"c8m8x14", 8, 8, 14},
	} {
		X, W, B := nhwcOf(nnRand(r, 1, s.c, s.h, s.h), F32), nnRand(r, s.m, s.c, 3, 3), nnRand(r, s.m)
		packed, _ := PrepackConvWeightsNHWC(W.F32(), W.Shape, 1)
		for _, threads := range []int{1, 2} {
			pool := NewWorkPool(WithThreads(threads))
			for _, wino := range []int{0, 4, 2} {
				attrs := Attrs{"layout": "NHWC", "pads": []int64{1, 1, 1, 1}, "activation": "Relu"}
				w := &Tensor{DType: F32, Shape: []int{len(packed)}, Data: packed}
				name := "gemm"
				attrs[ConvPackedAttr] = ints64(W.Shape)
				if wino > 0 {
					delete(attrs, ConvPackedAttr)
					attrs[ConvWinogradAttr] = ints64(W.Shape)
					w, name = wnWeights(b, W, wino), fmt.Sprintf("winograd%d", wino)
				}
				n := nnNode("cuvil::FusedConv", 1, attrs, 1, X, w, B)
				n.Pool = pool
				b.Run(fmt.Sprintf("%s/%s/t%d", s.name, name, threads), func(b *testing.B) {
					for b.Loop() {
						FusedConv(n)
					}
				})
			}
			pool.Close()
		}
	}
}

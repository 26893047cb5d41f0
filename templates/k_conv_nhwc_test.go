package templates

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// The NHWC kernels are checked against the NCHW ai.onnx kernels run in
// float64 on the same data (transposed), with W prepacked as gen stores it
// and plain, at 1 and 2 threads (which must agree bit for bit).

// nhwcOf returns t [N,C,H,W] transposed to [N,H,W,C] (any float dtype via
// float64 values, result in dtype dt).
func nhwcOf(t *Tensor, dt DType) *Tensor {
	N, C, H, W := t.Shape[0], t.Shape[1], t.Shape[2], t.Shape[3]
	v := nnF64(t)
	out := make([]float64, len(v))
	for n := 0; n < N; n++ {
		for c := 0; c < C; c++ {
			for p := 0; p < H*W; p++ {
				out[(n*H*W+p)*C+c] = v[(n*C+c)*H*W+p]
			}
		}
	}
	return miscTensorF(dt, out, N, H, W, C)
}

// nhwcRunBoth runs op on in at 1, 2 and 3 threads, checks the runs agree bit
// for bit, and returns the result.
func nhwcRunBoth(t *testing.T, what, op string, attrs Attrs, in ...*Tensor) *Tensor {
	t.Helper()
	var outs []*Tensor
	for _, threads := range []int{1, 2, 3} {
		n := nnNode(op, 1, attrs, 1, in...)
		n.Pool = NewWorkPool(WithThreads(threads))
		err := Kernels[op](n)
		n.Pool.Close()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		outs = append(outs, n.Out[0])
	}
	a := outs[0].F32()
	for k, o := range outs[1:] {
		b := o.F32()
		for i := range a {
			if a[i] != b[i] && (a[i] == a[i] || b[i] == b[i]) {
				t.Fatalf("%s: 1 and %d threads differ at %d: %v vs %v", what, k+2, i, a[i], b[i])
			}
		}
	}
	return outs[0]
}

func TestFusedConvNHWC(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	cases := []struct {
		name  string
		x, w  []int
		attrs Attrs
	}{
		{"pointwise", []int{2, 13, 7, 9}, []int{21, 13, 1, 1}, nil},
		{"pointwise_big", []int{1, 40, 23, 19}, []int{37, 40, 1, 1}, nil},
		{"pw_m8_k3", []int{1, 3, 5, 7}, []int{8, 3, 1, 1}, nil},
		{"pw_m16_k16", []int{2, 16, 5, 5}, []int{16, 16, 1, 1}, nil},
		{"pw_m24_k27", []int{1, 27, 7, 7}, []int{24, 27, 1, 1}, nil},
		{"pw_m40_k33", []int{1, 33, 6, 5}, []int{40, 33, 1, 1}, nil},
		{"pw_m96_k16", []int{1, 16, 13, 11}, []int{96, 16, 1, 1}, nil},
		{"pw_m144_k300", []int{1, 300, 5, 3}, []int{144, 300, 1, 1}, nil},
		{"pointwise_s2", []int{1, 11, 9, 10}, []int{17, 11, 1, 1}, Attrs{"strides": []int64{2, 2}}},
		{"3x3", []int{2, 5, 11, 10}, []int{19, 5, 3, 3}, Attrs{"pads": []int64{1, 1, 1, 1}}},
		{"3x3_s2_c3", []int{1, 3, 21, 19}, []int{16, 3, 3, 3}, Attrs{"strides": []int64{2, 2}, "pads": []int64{1, 0, 1, 2}}},
		{"3x3_big", []int{1, 32, 20, 22}, []int{40, 32, 3, 3}, Attrs{"pads": []int64{1, 1, 1, 1}}},
		{"nchw_3x3_s2_c3", []int{1, 3, 21, 19}, []int{24, 3, 3, 3}, Attrs{"strides": []int64{2, 2}, "pads": []int64{1, 0, 1, 2}}},
		{"nchw_5x5_c1_n2", []int{2, 1, 9, 8}, []int{16, 1, 5, 5}, Attrs{"pads": []int64{2, 2, 2, 2}}},
		{"nchw_7x7_s2_c3", []int{1, 3, 17, 15}, []int{40, 3, 7, 7}, Attrs{"strides": []int64{2, 2}, "pads": []int64{3, 3, 3, 3}}},
		{"nchw_3x3_dil_c4", []int{1, 4, 30, 29}, []int{8, 4, 3, 3}, Attrs{"dilations": []int64{2, 2}, "pads": []int64{1, 2, 0, 1}}},
		{"nchw_1x1_c2", []int{1, 2, 6, 7}, []int{33, 2, 1, 1}, nil},
		// Fewer rows than output channels: split by columns at 2 threads
		// (a whole-tile part and an edge part).
		{"3x3_cols", []int{1, 20, 5, 7}, []int{160, 20, 3, 3}, Attrs{"pads": []int64{1, 1, 1, 1}}},
		{"pointwise_cols", []int{1, 33, 4, 6}, []int{136, 33, 1, 1}, nil},
		{"pointwise_cols_tiles", []int{1, 64, 5, 7}, []int{200, 64, 1, 1}, nil},
		// K = 1152: several balanced row chunks per part.
		{"3x3_chunks", []int{1, 128, 15, 20}, []int{8, 128, 3, 3}, Attrs{"pads": []int64{1, 1, 1, 1}}},
		{"dw3x3", []int{2, 37, 9, 11}, []int{37, 1, 3, 3}, Attrs{"group": int64(37), "pads": []int64{1, 1, 1, 1}}},
		{"dw3x3_s2", []int{1, 24, 17, 14}, []int{24, 1, 3, 3}, Attrs{"group": int64(24), "strides": []int64{2, 2}, "pads": []int64{1, 1, 1, 1}}},
		{"dw5x5_dil", []int{1, 16, 13, 12}, []int{16, 1, 5, 5}, Attrs{"group": int64(16), "dilations": []int64{2, 2}, "pads": []int64{3, 4, 4, 3}}},
		{"dw_big", []int{1, 72, 30, 31}, []int{72, 1, 3, 3}, Attrs{"group": int64(72), "pads": []int64{1, 1, 1, 1}}},
		// Grouped (1 < group < C): per-group GEMMs through tap offsets.
		{"g2_3x3", []int{1, 10, 9, 11}, []int{6, 5, 3, 3}, Attrs{"group": int64(2), "pads": []int64{1, 0, 1, 2}}},
		{"g3_5x5_s2", []int{2, 9, 13, 12}, []int{21, 3, 5, 5}, Attrs{"group": int64(3), "strides": []int64{2, 2}, "pads": []int64{2, 1, 2, 3}}},
		{"g8_3x3_dil2", []int{1, 64, 15, 14}, []int{64, 8, 3, 3}, Attrs{"group": int64(8), "dilations": []int64{2, 2}, "pads": []int64{2, 2, 2, 2}}},
		{"g32_3x3_s2", []int{1, 128, 12, 13}, []int{128, 4, 3, 3}, Attrs{"group": int64(32), "strides": []int64{2, 2}, "pads": []int64{1, 1, 1, 1}}},
		{"g32_3x3_big", []int{1, 128, 24, 25}, []int{128, 4, 3, 3}, Attrs{"group": int64(32), "pads": []int64{1, 1, 1, 1}}},
		{"g4_1x1", []int{1, 12, 7, 9}, []int{20, 3, 1, 1}, Attrs{"group": int64(4)}},
		{"g3_7x1_s3_dil3", []int{1, 15, 23, 10}, []int{9, 5, 7, 1}, Attrs{"group": int64(3), "strides": []int64{3, 1}, "dilations": []int64{3, 1}, "pads": []int64{4, 0, 3, 0}}},
		{"dw_mult2", []int{1, 7, 9, 8}, []int{14, 1, 3, 3}, Attrs{"group": int64(7), "pads": []int64{1, 1, 1, 1}}},
		{"dw1x7_s3_dil2", []int{1, 19, 9, 30}, []int{19, 1, 1, 7}, Attrs{"group": int64(19), "strides": []int64{1, 3}, "dilations": []int64{1, 2}, "pads": []int64{0, 6, 0, 5}}},
		{"dw7x7_s2", []int{1, 33, 19, 17}, []int{33, 1, 7, 7}, Attrs{"group": int64(33), "strides": []int64{2, 2}, "pads": []int64{3, 2, 3, 4}}},
		{"dw6x6_s3_dil3", []int{1, 17, 31, 29}, []int{17, 1, 6, 6}, Attrs{"group": int64(17), "strides": []int64{3, 3}, "dilations": []int64{3, 3}, "pads": []int64{7, 8, 8, 7}}},
		{"dw4x4_s1", []int{1, 24, 11, 12}, []int{24, 1, 4, 4}, Attrs{"group": int64(24), "pads": []int64{1, 2, 2, 1}}},
		{"3x3_dil3_s2", []int{1, 7, 21, 20}, []int{11, 7, 3, 3}, Attrs{"dilations": []int64{3, 3}, "strides": []int64{2, 2}, "pads": []int64{3, 2, 3, 4}}},
	}
	for ci, c := range cases {
		X, W, B := nnRand(r, c.x...), nnRand(r, c.w...), nnRand(r, c.w[0])
		group := 1
		if g, ok := c.attrs["group"]; ok {
			group = int(g.(int64))
		}
		ref := nnRun(t, "Conv", 11, c.attrs, 1, nnAs(X, F64), nnAs(W, F64), nnAs(B, F64))[0]
		Z := nnRand(r, ref.Shape...)
		act := fusedActCases[ci%len(fusedActCases)]
		after := ci%3 == 1
		// Reference: act(conv + Z) or act(conv) + Z, in float64, NCHW.
		want := ref
		if after {
			want = fusedRefAct(t, act, want)
			want = fusedRef64(t, "Add", 14, nil, want, nnAs(Z, F64))
		} else {
			want = fusedRef64(t, "Add", 14, nil, want, nnAs(Z, F64))
			want = fusedRefAct(t, act, want)
		}
		wantNHWC := nhwcOf(want, F64)
		packed, ok := PrepackConvWeightsNHWC(W.F32(), W.Shape, group)
		if !ok {
			t.Fatalf("%s: not prepackable", c.name)
		}
		WP := &Tensor{DType: F32, Shape: []int{len(packed)}, Data: packed}
		for _, pre := range []bool{false, true} {
			attrs := fusedAttrs(act, c.attrs)
			attrs["layout"] = "NHWC"
			if after {
				attrs["residual_after_activation"] = int64(1)
			}
			w := W
			if pre {
				attrs[ConvPackedAttr] = ints64(W.Shape)
				w = WP
			}
			what := fmt.Sprintf("%s/prepacked=%v/%s", c.name, pre, act.name)
			x := nhwcOf(X, F32)
			if strings.HasPrefix(c.name, "nchw_") {
				// X stays NCHW (in_layout NCHW).
				attrs["in_layout"] = "NCHW"
				x = X
			}
			got := nhwcRunBoth(t, what, "cuvil::FusedConv", attrs, x, w, B, nhwcOf(Z, F32))
			nnCheck(t, what, got, wantNHWC.Shape, nnF64(wantNHWC), 1e-4)
			// Without bias and residual.
			delete(attrs, "residual_after_activation")
			got = nhwcRunBoth(t, what+"/nobias", "cuvil::FusedConv", attrs, x, w)
			plain := fusedRefAct(t, act, nnRun(t, "Conv", 11, c.attrs, 1, nnAs(X, F64), nnAs(W, F64))[0])
			nnCheck(t, what+"/nobias", got, nhwcOf(plain, F64).Shape, nnF64(nhwcOf(plain, F64)), 1e-4)
		}
	}
	// Bad input is an error naming the node, not a panic.
	n := nnNode("cuvil::FusedConv", 1, Attrs{"layout": "NHWC", "group": int64(3)}, 1, nnRand(r, 1, 5, 5, 4), nnRand(r, 6, 2, 3, 3))
	if err := FusedConv(n); err == nil {
		t.Fatal("group not dividing C accepted")
	}
	n = nnNode("cuvil::FusedConv", 1, Attrs{"layout": "NHWC", ConvPackedAttr: []int64{4, 3, 3, 3}}, 1, nnRand(r, 1, 5, 5, 3), nnRand(r, 10))
	if err := FusedConv(n); err == nil {
		t.Fatal("prepacked W of the wrong length accepted")
	}
}

// TestNHWCBiasClamp compares the bias+clamp epilogue with its Go twin on
// column counts around the vector width, rows contiguous or m columns of
// wider rows (ldy > m: the columns past m must stay as they were), and the
// twin with a float64 reference.
func TestNHWCBiasClamp(t *testing.T) {
	r := rand.New(rand.NewSource(10))
	for _, m := range []int{1, 8, 13, 16, 40} {
		for _, ldy := range []int{m, m + 11} {
			y, bias := nnRand(r, 5*ldy).F32(), nnRand(r, m).F32()
			y0 := append([]float32(nil), y...)
			want := append([]float32(nil), y...)
			nhwcBiasClamp(y, bias, 5, m, ldy, 0, 0.5)
			nhwcBiasClampGo(want, bias, 5, 0, m, ldy, 0, 0.5)
			for i := range want {
				if y[i] != want[i] {
					t.Fatalf("m %d ldy %d: [%d] = %v, want %v", m, ldy, i, y[i], want[i])
				}
				ref := float64(y0[i])
				if j := i % ldy; j < m {
					ref = min(max(ref+float64(bias[j]), 0), 0.5)
				}
				if d := float64(want[i]) - ref; d > 1e-6 || d < -1e-6 {
					t.Fatalf("m %d ldy %d: twin [%d] = %v, want %v", m, ldy, i, want[i], ref)
				}
			}
		}
	}
}

// TestFusedConvNHWCScale checks input Scale (a squeeze-excitation gate
// [N,1,1,C] folded into a pointwise NHWC convolution) against the float64
// NCHW reference conv(X*gate) (+bias, residual, activation): one image
// with more pixels than W' has padded columns (the packed weights are
// scaled), one with fewer and several images (each part scales its chunks
// of rows; split by columns, the map once), W prepacked and plain, at 1
// and 2 threads; K over one GEMM K block too. Scale on a
// convolution that is not pointwise, or of the wrong shape, is an error.
func TestFusedConvNHWCScale(t *testing.T) {
	r := rand.New(rand.NewSource(21))
	cases := []struct {
		name string
		x, w []int
	}{
		{"weights_n1", []int{1, 13, 7, 9}, []int{21, 13, 1, 1}},
		{"weights_k300", []int{1, 300, 9, 11}, []int{40, 300, 1, 1}},
		{"weights_m16", []int{1, 24, 5, 5}, []int{16, 24, 1, 1}},
		{"map_n1", []int{1, 40, 3, 2}, []int{37, 40, 1, 1}},
		{"map_n2", []int{2, 17, 6, 5}, []int{9, 17, 1, 1}},
		{"map_cols", []int{1, 33, 4, 6}, []int{136, 33, 1, 1}},
		// Fewer rows than columns: split by columns at 2 threads, the map
		// scaled once for all parts.
		{"map_bycols", []int{1, 64, 5, 7}, []int{200, 64, 1, 1}},
		// Three images, parts and chunks crossing image boundaries.
		{"map_chunks_n3", []int{3, 40, 9, 11}, []int{8, 40, 1, 1}},
		// Big enough for the pool pass that scales first (nhwcPreMin):
		// the packed weights over several row blocks and 5 panels
		// (M 67 pads to 80), split by panels; the map split by rows.
		{"weights_pre_split", []int{1, 601, 9, 10}, []int{67, 601, 1, 1}},
		{"map_bycols_pre_split", []int{1, 1003, 5, 7}, []int{203, 1003, 1, 1}},
	}
	for ci, c := range cases {
		N, C := c.x[0], c.x[1]
		X, W, B := nnRand(r, c.x...), nnRand(r, c.w...), nnRand(r, c.w[0])
		G := nnRand(r, N, C, 1, 1)
		xg := fusedRef64(t, "Mul", 14, nil, nnAs(X, F64), nnAs(G, F64))
		ref := nnRun(t, "Conv", 11, nil, 1, xg, nnAs(W, F64), nnAs(B, F64))[0]
		Z := nnRand(r, ref.Shape...)
		act := fusedActCases[ci%len(fusedActCases)]
		want := nhwcOf(fusedRefAct(t, act, fusedRef64(t, "Add", 14, nil, ref, nnAs(Z, F64))), F64)
		packed, ok := PrepackConvWeightsNHWC(W.F32(), W.Shape, 1)
		if !ok {
			t.Fatalf("%s: not prepackable", c.name)
		}
		WP := &Tensor{DType: F32, Shape: []int{len(packed)}, Data: packed}
		g := nhwcOf(G, F32)
		for _, pre := range []bool{false, true} {
			attrs := fusedAttrs(act, nil)
			attrs["layout"] = "NHWC"
			w := W
			if pre {
				attrs[ConvPackedAttr] = ints64(W.Shape)
				w = WP
			}
			what := fmt.Sprintf("%s/prepacked=%v/%s", c.name, pre, act.name)
			got := nhwcRunBoth(t, what, "cuvil::FusedConv", attrs, nhwcOf(X, F32), w, B, nhwcOf(Z, F32), nil, g)
			nnCheck(t, what, got, want.Shape, nnF64(want), 1e-4)
			// Run twice on one node: the scaled copy must not leak into the
			// next run (the weights and map are scaled afresh each time).
			n := nnNode("cuvil::FusedConv", 1, attrs, 1, nhwcOf(X, F32), w, B, nhwcOf(Z, F32), nil, g)
			n.Pool = NewWorkPool(WithThreads(1))
			for range 2 {
				if err := FusedConv(n); err != nil {
					t.Fatal(err)
				}
			}
			n.Pool.Close()
			nnCheck(t, what+"/rerun", n.Out[0], want.Shape, nnF64(want), 1e-4)
		}
	}
	n := nnNode("cuvil::FusedConv", 1, Attrs{"layout": "NHWC", "pads": []int64{1, 1, 1, 1}}, 1, nnRand(r, 1, 5, 5, 3), nnRand(r, 4, 3, 3, 3), nil, nil, nil, nnRand(r, 1, 1, 1, 3))
	if err := FusedConv(n); err == nil || !strings.Contains(err.Error(), "pointwise") {
		t.Fatalf("Scale on a 3x3 convolution: %v", err)
	}
	n = nnNode("cuvil::FusedConv", 1, Attrs{"layout": "NHWC"}, 1, nnRand(r, 1, 5, 5, 3), nnRand(r, 4, 3, 1, 1), nil, nil, nil, nnRand(r, 1, 3))
	if err := FusedConv(n); err == nil {
		t.Fatal("Scale of the wrong shape accepted")
	}
	n = nnNode("cuvil::FusedConv", 1, Attrs{}, 1, nnRand(r, 1, 3, 5, 5), nnRand(r, 4, 3, 1, 1), nil, nil, nil, nnRand(r, 1, 3, 1, 1))
	if err := FusedConv(n); err == nil {
		t.Fatal("Scale on an NCHW convolution accepted")
	}
}

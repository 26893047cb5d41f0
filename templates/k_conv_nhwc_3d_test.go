package templates

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
)

// channelsLast returns t [N,C,spatial...] transposed to [N,spatial...,C]
// (via float64 values, result in dtype dt).
func channelsLast(t *Tensor, dt DType) *Tensor {
	N, C := t.Shape[0], t.Shape[1]
	sp := nnProd(t.Shape[2:])
	v := nnF64(t)
	out := make([]float64, len(v))
	for n := 0; n < N; n++ {
		for c := 0; c < C; c++ {
			for p := 0; p < sp; p++ {
				out[(n*sp+p)*C+c] = v[(n*C+c)*sp+p]
			}
		}
	}
	shape := append([]int{N}, t.Shape[2:]...)
	return miscTensorF(dt, out, append(shape, C)...)
}

// conv3DCases are 3-D convolutions of awkward shapes: kernels with 1, 2,
// 3 and 5 taps per axis, strides 1 and 2, dilation 2, asymmetric pads.
var conv3DCases = []struct {
	name  string
	x, w  []int
	attrs Attrs
}{
	{"1x1x1", []int{2, 13, 3, 5, 6}, []int{21, 13, 1, 1, 1}, nil},
	{"1x1x1_s122", []int{1, 11, 4, 9, 7}, []int{17, 11, 1, 1, 1}, Attrs{"strides": []int64{1, 2, 2}}},
	{"1x1x1_s2", []int{1, 9, 5, 6, 7}, []int{8, 9, 1, 1, 1}, Attrs{"strides": []int64{2, 1, 2}}},
	{"1x3x3", []int{1, 7, 3, 9, 8}, []int{19, 7, 1, 3, 3}, Attrs{"pads": []int64{0, 1, 1, 0, 1, 1}}},
	{"1x3x3_s122", []int{2, 6, 2, 11, 10}, []int{16, 6, 1, 3, 3}, Attrs{"strides": []int64{1, 2, 2}, "pads": []int64{0, 1, 0, 0, 1, 2}}},
	{"3x3x3", []int{1, 8, 5, 7, 9}, []int{12, 8, 3, 3, 3}, Attrs{"pads": []int64{1, 1, 1, 1, 1, 1}}},
	{"3x3x3_n2_nopad", []int{2, 5, 4, 6, 5}, []int{9, 5, 3, 3, 3}, nil},
	{"2x3x3_asym", []int{1, 9, 6, 8, 7}, []int{10, 9, 2, 3, 3}, Attrs{"pads": []int64{1, 0, 1, 0, 2, 1}}},
	{"3x7x7_s122_c3", []int{1, 3, 4, 15, 13}, []int{16, 3, 3, 7, 7}, Attrs{"strides": []int64{1, 2, 2}, "pads": []int64{1, 3, 3, 1, 3, 3}}},
	{"5x1x1_s2", []int{1, 10, 11, 4, 3}, []int{14, 10, 5, 1, 1}, Attrs{"strides": []int64{2, 1, 1}, "pads": []int64{2, 0, 0, 1, 0, 0}}},
	{"3x1x1_dil2", []int{1, 12, 9, 5, 4}, []int{11, 12, 3, 1, 1}, Attrs{"dilations": []int64{2, 1, 1}, "pads": []int64{2, 0, 0, 2, 0, 0}}},
	{"3x3x3_dil2_s2", []int{1, 6, 9, 11, 10}, []int{7, 6, 3, 3, 3}, Attrs{"dilations": []int64{2, 2, 2}, "strides": []int64{2, 2, 2}, "pads": []int64{2, 1, 2, 1, 2, 3}}},
	{"2x5x2", []int{1, 4, 5, 9, 6}, []int{13, 4, 2, 5, 2}, Attrs{"pads": []int64{0, 2, 1, 1, 2, 0}}},
	// Grouped (not depthwise): per-group GEMMs on the gathered frames.
	{"g2_3x3x3", []int{1, 10, 4, 7, 6}, []int{6, 5, 3, 3, 3}, Attrs{"group": int64(2), "pads": []int64{1, 1, 0, 1, 1, 2}}},
	{"g4_1x1x1", []int{1, 12, 3, 5, 4}, []int{20, 3, 1, 1, 1}, Attrs{"group": int64(4)}},
	{"g3_1x3x3_s122", []int{2, 9, 2, 9, 8}, []int{21, 3, 1, 3, 3}, Attrs{"group": int64(3), "strides": []int64{1, 2, 2}, "pads": []int64{0, 1, 1, 0, 1, 1}}},
	{"g8_3x1x1_s2", []int{1, 64, 7, 4, 5}, []int{64, 8, 3, 1, 1}, Attrs{"group": int64(8), "strides": []int64{2, 1, 1}, "pads": []int64{1, 0, 0, 1, 0, 0}}},
	// More output channels than rows: split by columns at 2 threads.
	{"3x3x3_cols", []int{1, 16, 2, 3, 4}, []int{96, 16, 3, 3, 3}, Attrs{"pads": []int64{1, 1, 1, 1, 1, 1}}},
	// Several row chunks per part.
	{"3x3x3_chunks", []int{1, 32, 4, 12, 13}, []int{24, 32, 3, 3, 3}, Attrs{"pads": []int64{1, 1, 1, 1, 1, 1}}},
}

// conv3DWant is the float64 reference of FusedConv's epilogue on the
// NCDHW convolution ref: act(ref + Z) or act(ref) + Z (Z nil: act(ref)),
// channels last.
func conv3DWant(t *testing.T, ref, Z *Tensor, act fusedActCase, after bool) *Tensor {
	want := ref
	switch {
	case Z == nil:
		want = fusedRefAct(t, act, want)
	case after:
		want = fusedRefAct(t, act, want)
		want = fusedRef64(t, "Add", 14, nil, want, nnAs(Z, F64))
	default:
		want = fusedRef64(t, "Add", 14, nil, want, nnAs(Z, F64))
		want = fusedRefAct(t, act, want)
	}
	return channelsLast(want, F64)
}

// TestFusedConvNHWC3D checks FusedConv layout=NHWC on 5-D NDHWC data
// against the float64 NCDHW Conv, with W plain and prepacked, bias and
// residual (before and after the activation) and without, at 1, 2 and 3
// threads (bit for bit equal).
func TestFusedConvNHWC3D(t *testing.T) {
	r := rand.New(rand.NewSource(53))
	for ci, c := range conv3DCases {
		X, W, B := nnRand(r, c.x...), nnRand(r, c.w...), nnRand(r, c.w[0])
		ref := nnRun(t, "Conv", 11, c.attrs, 1, nnAs(X, F64), nnAs(W, F64), nnAs(B, F64))[0]
		plainRef := nnRun(t, "Conv", 11, c.attrs, 1, nnAs(X, F64), nnAs(W, F64))[0]
		Z := nnRand(r, ref.Shape...)
		act := fusedActCases[ci%len(fusedActCases)]
		after := ci%3 == 1
		group := 1
		if g, ok := c.attrs["group"]; ok {
			group = int(g.(int64))
		}
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
			what := fmt.Sprintf("%s/prepacked=%v/%s/after=%v", c.name, pre, act.name, after)
			got := nhwcRunBoth(t, what, "cuvil::FusedConv", attrs, channelsLast(X, F32), w, B, channelsLast(Z, F32))
			want := conv3DWant(t, ref, Z, act, after)
			nnCheck(t, what, got, want.Shape, nnF64(want), 1e-4)
			delete(attrs, "residual_after_activation")
			got = nhwcRunBoth(t, what+"/nobias", "cuvil::FusedConv", attrs, channelsLast(X, F32), w)
			want = conv3DWant(t, plainRef, nil, act, false)
			nnCheck(t, what+"/nobias", got, want.Shape, nnF64(want), 1e-4)
		}
	}
	// Bad input is an error naming the node, not a panic.
	for name, a := range map[string]Attrs{
		"group":       {"layout": "NHWC", "group": int64(3)},
		"depthwise":   {"layout": "NHWC", "group": int64(4)},
		"packed_len":  {"layout": "NHWC", ConvPackedAttr: []int64{4, 4, 3, 3, 3}},
		"packed_rank": {"layout": "NHWC", ConvPackedAttr: []int64{4, 4, 3, 3}},
		"pads":        {"layout": "NHWC", "pads": []int64{1, 1, 1, 1}},
		"in_layout":   {"layout": "NHWC", "in_layout": "NCHW"},
	} {
		w := nnRand(r, 4, 4, 3, 3, 3)
		if name == "depthwise" {
			w = nnRand(r, 4, 1, 3, 3, 3)
		}
		if a[ConvPackedAttr] != nil {
			w = nnRand(r, 10)
		}
		n := nnNode("cuvil::FusedConv", 1, a, 1, nnRand(r, 1, 3, 5, 5, 4), w)
		if err := FusedConv(n); err == nil {
			t.Fatalf("%s: accepted", name)
		}
	}
}

// TestFusedConvWinogradNHWC3D checks FusedConv layout=NHWC with 3-D
// Winograd weights (wnPack3D, F(4x4) and F(2x2)) against the float64 NCDHW
// Conv: kT 1, 2, 3 and 5, time strides, dilations and asymmetric pads, at
// 1, 2 and 3 threads (bit for bit equal).
func TestFusedConvWinogradNHWC3D(t *testing.T) {
	r := rand.New(rand.NewSource(59))
	cases := []struct {
		name string
		x, w []int
		pads []int64
		st   int64
		dt   int64
	}{
		{"3x3x3", []int{1, 8, 5, 9, 10}, []int{12, 8, 3, 3, 3}, []int64{1, 1, 1, 1, 1, 1}, 1, 1},
		{"1x3x3", []int{2, 9, 3, 7, 8}, []int{10, 9, 1, 3, 3}, []int64{0, 1, 1, 0, 1, 1}, 1, 1},
		{"2x3x3_asym", []int{1, 16, 6, 8, 7}, []int{17, 16, 2, 3, 3}, []int64{1, 0, 1, 0, 2, 1}, 1, 1},
		{"5x3x3_s2_dil2", []int{1, 8, 11, 6, 9}, []int{9, 8, 5, 3, 3}, []int64{3, 1, 1, 2, 1, 1}, 2, 2},
		{"1x3x3_s2", []int{1, 10, 7, 6, 5}, []int{11, 10, 1, 3, 3}, []int64{0, 1, 1, 0, 1, 1}, 2, 1},
		{"3x3x3_blocks", []int{1, 24, 4, 21, 22}, []int{40, 24, 3, 3, 3}, []int64{1, 1, 1, 1, 1, 1}, 1, 1},
	}
	for ci, c := range cases {
		X, W, B := nnRand(r, c.x...), nnRand(r, c.w...), nnRand(r, c.w[0])
		cattrs := Attrs{"pads": c.pads, "strides": []int64{c.st, 1, 1}, "dilations": []int64{c.dt, 1, 1}}
		ref := nnRun(t, "Conv", 11, cattrs, 1, nnAs(X, F64), nnAs(W, F64), nnAs(B, F64))[0]
		Z := nnRand(r, ref.Shape...)
		var scale float64
		for _, v := range nnF64(ref) {
			scale = max(scale, math.Abs(v)+1)
		}
		for _, f := range []int{4, 2} {
			WP := wnWeights(t, W, f)
			for _, act := range []fusedActCase{fusedActCases[1], fusedActCases[(ci+2)%len(fusedActCases)]} {
				for _, after := range []bool{false, true} {
					attrs := fusedAttrs(act, cattrs)
					attrs["layout"] = "NHWC"
					attrs[ConvWinogradAttr] = ints64(W.Shape)
					if after {
						attrs["residual_after_activation"] = int64(1)
					}
					what := fmt.Sprintf("%s/F%d/%s/after=%v", c.name, f, act.name, after)
					got := nhwcRunBoth(t, what, "cuvil::FusedConv", attrs, channelsLast(X, F32), WP, B, channelsLast(Z, F32))
					wnClose(t, what, got, conv3DWant(t, ref, Z, act, after), scale)
				}
			}
			attrs := Attrs{"layout": "NHWC", ConvWinogradAttr: ints64(W.Shape)}
			for k, v := range cattrs {
				attrs[k] = v
			}
			got := nhwcRunBoth(t, c.name+"/nobias", "cuvil::FusedConv", attrs, channelsLast(X, F32), WP)
			plain := nnRun(t, "Conv", 11, cattrs, 1, nnAs(X, F64), nnAs(W, F64))[0]
			wnClose(t, c.name+"/nobias", got, conv3DWant(t, plain, nil, fusedActCases[0], false), scale)
		}
	}
	// A spatial stride is refused, not computed wrong.
	W := nnRand(r, 4, 4, 3, 3, 3)
	n := nnNode("cuvil::FusedConv", 1, Attrs{"layout": "NHWC", ConvWinogradAttr: ints64(W.Shape), "strides": []int64{1, 2, 2}}, 1,
		nnRand(r, 1, 3, 7, 7, 4), wnWeights(t, W, 4))
	if err := FusedConv(n); err == nil {
		t.Fatal("Winograd with a spatial stride accepted")
	}
}

package templates

import (
	"fmt"
	"math/rand"
	"testing"
)

// TestFusedConvNHWCGrouped checks grouped NHWC convolutions against the
// float64 NCHW Conv: Cg = Mg in {2, 4, 8} on the direct kernel
// (nhwcGrpDirect), the other widths (1 is depthwise; 3, 5, 12, 16, and
// Cg != Mg) on the per-group GEMM, on odd maps, strides 1, 2 and 3,
// dilation 2, asymmetric pads (some windows wholly in the padding), two
// images, every activation in turn, residual before and after the
// activation, with and without bias, W prepacked and plain, at 1, 2 and 3
// threads (bit for bit the same).
func TestFusedConvNHWCGrouped(t *testing.T) {
	r := rand.New(rand.NewSource(33))
	type tc struct {
		name   string
		x, w   []int
		attrs  Attrs
		direct bool
	}
	var cases []tc
	geoms := []struct {
		name  string
		h, w  int
		k     []int
		attrs Attrs
	}{
		{"3x3", 9, 11, []int{3, 3}, Attrs{"pads": []int64{1, 1, 1, 1}}},
		{"3x3_s2", 13, 12, []int{3, 3}, Attrs{"strides": []int64{2, 2}, "pads": []int64{1, 0, 1, 2}}},
		{"3x3_dil2", 15, 14, []int{3, 3}, Attrs{"dilations": []int64{2, 2}, "pads": []int64{2, 2, 2, 2}}},
		{"1x1", 7, 9, []int{1, 1}, nil},
		{"5x3_s3_bigpad", 10, 7, []int{5, 3}, Attrs{"strides": []int64{3, 1}, "pads": []int64{5, 1, 4, 2}}},
		{"3x3_7x7", 7, 7, []int{3, 3}, Attrs{"pads": []int64{1, 1, 1, 1}}},
		// Short rows, stride 1: virtual rows for G >= 16 (runVirtual).
		{"3x3_6x8_pad02", 6, 8, []int{3, 3}, Attrs{"pads": []int64{0, 1, 2, 1}}},
		{"1x1_5x5", 5, 5, []int{1, 1}, nil},
	}
	for _, G := range []int{1, 2, 3, 4, 5, 8, 12, 16, 32, 64} {
		for gi, ge := range geoms {
			groups := []int{2, 3, 5, 13}[gi%4]
			if G*groups%8 != 0 && (G == 2 || G == 4) {
				groups = 8 / G * (gi%3 + 1) // a multiple of 8 channels for the direct kernel
			}
			N := 1 + gi%2
			C := G * groups
			cases = append(cases, tc{fmt.Sprintf("g%dx%d_%s", G, groups, ge.name),
				[]int{N, C, ge.h, ge.w}, []int{C, G, ge.k[0], ge.k[1]}, ge.attrs, G == 2 || G == 4 || G == 8 || G == 16 || G == 32})
		}
	}
	// Cg != Mg: the per-group GEMM.
	cases = append(cases,
		tc{"cg4_mg8", []int{1, 16, 9, 8}, []int{32, 4, 3, 3}, Attrs{"pads": []int64{1, 1, 1, 1}}, false},
		tc{"cg8_mg4", []int{1, 32, 7, 9}, []int{16, 8, 3, 3}, Attrs{"strides": []int64{2, 2}, "pads": []int64{1, 1, 1, 1}}, false},
		// 8 groups of 2: M = 16; 3 groups of 4 (M = 12) is not a multiple of 8.
		tc{"g4x3_m12", []int{1, 12, 6, 7}, []int{12, 4, 3, 3}, Attrs{"pads": []int64{1, 1, 1, 1}}, false},
	)
	for ci, c := range cases {
		group := c.x[1] / c.w[1]
		attrs0 := Attrs{"group": int64(group)}
		for k, v := range c.attrs {
			attrs0[k] = v
		}
		if got := nhwcGrpDirect(c.w, group); got != c.direct {
			t.Fatalf("%s: nhwcGrpDirect = %v, want %v", c.name, got, c.direct)
		}
		X, W, B := nnRand(r, c.x...), nnRand(r, c.w...), nnRand(r, c.w[0])
		ref := nnRun(t, "Conv", 11, attrs0, 1, nnAs(X, F64), nnAs(W, F64), nnAs(B, F64))[0]
		Z := nnRand(r, ref.Shape...)
		act := fusedActCases[ci%len(fusedActCases)]
		after := ci%3 == 1
		want := ref
		if after {
			want = fusedRef64(t, "Add", 14, nil, fusedRefAct(t, act, want), nnAs(Z, F64))
		} else {
			want = fusedRefAct(t, act, fusedRef64(t, "Add", 14, nil, want, nnAs(Z, F64)))
		}
		wantNHWC := nhwcOf(want, F64)
		plain := nhwcOf(fusedRefAct(t, act, nnRun(t, "Conv", 11, attrs0, 1, nnAs(X, F64), nnAs(W, F64))[0]), F64)
		packed, ok := PrepackConvWeightsNHWC(W.F32(), W.Shape, group)
		if !ok || len(packed) != nhwcPackedLen(W.Shape, group) {
			t.Fatalf("%s: not prepackable (%v) or %d values, want %d", c.name, ok, len(packed), nhwcPackedLen(W.Shape, group))
		}
		WP := &Tensor{DType: F32, Shape: []int{len(packed)}, Data: packed}
		for _, pre := range []bool{false, true} {
			attrs := fusedAttrs(act, attrs0)
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
			got := nhwcRunBoth(t, what, "cuvil::FusedConv", attrs, nhwcOf(X, F32), w, B, nhwcOf(Z, F32))
			nnCheck(t, what, got, wantNHWC.Shape, nnF64(wantNHWC), 1e-4)
			delete(attrs, "residual_after_activation")
			got = nhwcRunBoth(t, what+"/nobias", "cuvil::FusedConv", attrs, nhwcOf(X, F32), w)
			nnCheck(t, what+"/nobias", got, plain.Shape, nnF64(plain), 1e-4)
		}
	}
	// Input Scale on a grouped convolution is an error.
	n := nnNode("cuvil::FusedConv", 1, Attrs{"layout": "NHWC", "group": int64(2)}, 1, nnRand(r, 1, 5, 5, 16), nnRand(r, 16, 8, 1, 1), nil, nil, nil, nnRand(r, 1, 1, 1, 16))
	if err := FusedConv(n); err == nil {
		t.Fatal("Scale on a grouped convolution accepted")
	}
}

// TestNHWCGrpTaps compares the grouped direct kernels (the assembly where
// the CPU has it) and their Go twin with a float64 sum, on random tap
// lists (none, one, several), pixel counts 1-13 (every pixel grouping),
// 8 to 96 channels (multiples of G from 16) and row strides wider than the channels.
func TestNHWCGrpTaps(t *testing.T) {
	r := rand.New(rand.NewSource(34))
	for _, G := range []int{2, 4, 8, 16, 32} {
		for _, nv := range []int{8, 16, 24, 32, 40, 64, 96} {
			if G >= 16 && nv%G != 0 {
				continue
			}
			for _, npix := range []int{1, 2, 3, 5, 6, 7, 12, 13} {
				for _, nt := range []int{0, 1, 4} {
					xstep, ldy := nv+3*(npix%2), nv+5*(nt%2)
					x := nnRand(r, npix*xstep+nt*nv+nv).F32()
					w := nnRand(r, nt*nv*G+nv*G).F32()
					bias := nnRand(r, nv).F32()
					taps := make([]int, 2*nt)
					for k := 0; k < nt; k++ {
						taps[2*k] = r.Intn(nt*nv + 1)
						taps[2*k+1] = r.Intn(nt*nv*G + 1)
					}
					lo, hi := float32(-0.75), float32(1.25)
					y := make([]float32, (npix-1)*ldy+nv)
					y2 := make([]float32, len(y))
					nhwcGrpTaps(G, y, x, taps, w, bias, nv, npix, xstep, ldy, lo, hi)
					nhwcGrpTapsGo(G, y2, x, taps, w, bias, nv, npix, xstep, ldy, lo, hi)
					for p := 0; p < npix; p++ {
						for j := 0; j < nv; j++ {
							s := float64(bias[j])
							for k := 0; k < nt; k++ {
								for c := 0; c < G; c++ {
									s += float64(x[p*xstep+taps[2*k]+j/G*G+c]) * float64(w[taps[2*k+1]+j/8*8*G+8*c+j%8])
								}
							}
							s = min(max(s, float64(lo)), float64(hi))
							for _, v := range []float32{y[p*ldy+j], y2[p*ldy+j]} {
								if d := float64(v) - s; d > 1e-5 || d < -1e-5 {
									t.Fatalf("G %d nv %d npix %d nt %d: y[%d,%d] = %v (asm %v, twin %v), want %v", G, nv, npix, nt, p, j, v, y[p*ldy+j], y2[p*ldy+j], s)
								}
							}
						}
					}
				}
			}
		}
	}
}

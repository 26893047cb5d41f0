package templates

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"
)

// The bf16 convolutions (k_conv_nhwc_bf16.go) against float64: the tiles
// and the converter bit for bit against their Go twins (the twins alone
// under purego or without AVX512_BF16), and the convolutions against the
// float64 NCHW Conv at 1-3 threads with a bound derived from the formats.

// bf16Specials are float32 values the rounding must treat as
// VCVTNEPS2BF16 does: denormals, ties, NaNs, infinities, the largest
// finite values.
var bf16Specials = []uint32{0, 0x80000000, 1, 0x807fffff, 0x00400000, 0x3f808000, 0x3f818000, 0x3f80ffff, 0x7f7fffff, 0xff7fffff,
	0x7f800000, 0xff800000, 0x7fc00000, 0x7f800001, 0xffa00001, 0x00800000, 0x80800000, 0x7f7f8000, 0x3f7fff80}

func TestBF16RoundRow(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	// The twin against its definition.
	for _, b := range bf16Specials {
		f := math.Float32frombits(b)
		got := bf16Round(f)
		switch {
		case b&0x7f800000 == 0:
			if got != uint16(b>>16)&0x8000 {
				t.Errorf("denormal %08x: %04x, want a zero of its sign", b, got)
			}
		case f != f:
			if got&0x7fc0 != 0x7fc0 || got>>15 != uint16(b>>31) {
				t.Errorf("NaN %08x: %04x, want a quiet NaN", b, got)
			}
		default:
			// Nearest: no bf16 is closer (ties: the even one).
			v := float64(f)
			g := float64(BF16ToF32(got))
			for _, d := range []uint16{got - 1, got + 1} {
				o := float64(BF16ToF32(d))
				if math.IsNaN(o) || math.IsInf(o, 0) && !math.IsInf(g, 0) {
					continue
				}
				if math.IsInf(g, 0) {
					// Overflow: from half an ulp past the largest bf16 on.
					if math.Abs(v) < 0x1p127*(2-0x1p-8) {
						t.Errorf("%08x: rounded to infinity", b)
					}
					continue
				}
				if math.Abs(o-v) < math.Abs(g-v) || math.Abs(o-v) == math.Abs(g-v) && got&1 != 0 {
					t.Errorf("%08x: %04x, %04x is nearer or even", b, got, d)
				}
			}
		}
	}
	for _, n := range []int{0, 1, 15, 16, 17, 31, 33, 64, 100, 147} {
		src := make([]float32, n)
		for i := range src {
			switch r.Intn(4) {
			case 0:
				src[i] = math.Float32frombits(bf16Specials[r.Intn(len(bf16Specials))])
			case 1:
				src[i] = math.Float32frombits(r.Uint32())
			default:
				src[i] = float32(r.NormFloat64())
			}
		}
		got, want := make([]uint16, n+1), make([]uint16, n+1)
		got[n], want[n] = 0x1234, 0x1234
		bf16RoundRow(got[:n], src)
		bf16RoundRowGo(want[:n], src)
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("n=%d: element %d (%08x): %04x, twin %04x", n, i, math.Float32bits(src[min(i, n-1)]), got[i], want[i])
			}
		}
	}
}

// TestBF16PWTile: every tile shape and epilogue against the Go twin bit
// for bit, and the twin against float64 sums of the bf16 values.
func TestBF16PWTile(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	bf := func(n int) []uint16 {
		v := make([]uint16, n)
		for i := range v {
			v[i] = bf16Round(float32(r.NormFloat64()))
		}
		return v
	}
	for rows := 1; rows <= bf16MR; rows++ {
		for panels := 1; panels <= 4; panels++ {
			for _, k2 := range []int{0, 1, 3, 17} {
				for _, n := range []int{1, 7, 16} {
					flags := []int{0, nhwcPWBias, nhwcPWZ | nhwcPWClamp, nhwcPWBias | nhwcPWZ | nhwcPWClamp}[r.Intn(4)]
					lda, bstride, ldc := 2*k2+2*r.Intn(3), k2*2*bf16NR+32*r.Intn(2), panels*bf16NR+r.Intn(5)
					a, b := bf(max(1, rows*lda)), bf(max(1, panels*bstride))
					bias, z := make([]float32, panels*bf16NR), make([]float32, rows*ldc)
					for i := range bias {
						bias[i] = float32(r.NormFloat64())
					}
					for i := range z {
						z[i] = float32(r.NormFloat64())
					}
					got, want := make([]float32, rows*ldc), make([]float32, rows*ldc)
					for i := range got {
						got[i], want[i] = 99, 99
					}
					bf16PWTile(rows, panels, k2, a, lda, b, bstride, got, ldc, bias, z, -0.5, 1.5, flags, n)
					bf16PWTileGo(rows, panels, k2, a, lda, b, bstride, want, ldc, bias, z, -0.5, 1.5, flags, n)
					what := fmt.Sprintf("%dx%d k2=%d n=%d flags=%d", rows, panels*16, k2, n, flags)
					for i := range got {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("%s: element %d: %v, twin %v", what, i, got[i], want[i])
						}
					}
					for rr := 0; rr < rows; rr++ {
						for j := 0; j < ldc; j++ {
							o := want[rr*ldc+j]
							if j >= (panels-1)*bf16NR+n {
								if o != 99 {
									t.Fatalf("%s: column %d past n written", what, j)
								}
								continue
							}
							s, sa := 0.0, 0.0
							for q := 0; q < 2*k2; q++ {
								p := float64(BF16ToF32(a[rr*lda+q])) * float64(BF16ToF32(b[(j/16)*bstride+(q/2)*32+2*(j%16)+q%2]))
								s += p
								sa += math.Abs(p)
							}
							if flags&nhwcPWBias != 0 {
								s += float64(bias[j])
								sa += math.Abs(float64(bias[j]))
							}
							if flags&nhwcPWZ != 0 {
								s += float64(z[rr*ldc+j])
								sa += math.Abs(float64(z[rr*ldc+j]))
							}
							if flags&nhwcPWClamp != 0 {
								s = min(max(s, -0.5), 1.5)
							}
							if tol := float64(2*k2+2) * 0x1p-24 * sa; math.Abs(float64(o)-s) > tol {
								t.Fatalf("%s: [%d,%d] = %v, float64 %v (tolerance %g)", what, rr, j, o, s, tol)
							}
						}
					}
				}
			}
		}
	}
}

// bf16Abs returns |x| elementwise as float64.
func bf16Abs(x *Tensor) *Tensor {
	v := nnF64(x)
	for i := range v {
		v[i] = math.Abs(v[i])
	}
	return miscTensorF(F64, v, x.Shape...)
}

// TestFusedConvNHWCBF16: the bf16 convolutions against the float64 Conv of
// the float32 data: each product of bf16-rounded values is within
// 2^-8+2^-18 of the exact one (8 significant bits each, relative error
// 2^-9), the K float32 sums add K*2^-24 of sum |x w|; so
// |got - want| <= S*(2^-8 + 2^-18 + (K+3)*2^-24) + 1e-6 with S the
// float64 conv of |X| and |W| plus |B| and |Z| (Relu, Clip, LeakyRelu and
// Sigmoid are 1-Lipschitz). A float32 kernel passes that bound too; the
// second check, against the float64 conv of the bf16-rounded X and W with
// (K+3)*2^-24*S, does not let an unrounded operand through.
func TestFusedConvNHWCBF16(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	cases := []struct {
		name  string
		x, w  []int
		attrs Attrs
	}{
		{"pw", []int{2, 13, 7, 9}, []int{21, 13, 1, 1}, nil},
		{"pw_k64_m256", []int{1, 64, 5, 7}, []int{256, 64, 1, 1}, nil},
		{"pw_m70_k33", []int{1, 33, 6, 5}, []int{70, 33, 1, 1}, nil},
		{"pw_s2", []int{1, 11, 9, 10}, []int{17, 11, 1, 1}, Attrs{"strides": []int64{2, 2}}},
		{"3x3", []int{2, 5, 11, 10}, []int{19, 5, 3, 3}, Attrs{"pads": []int64{1, 1, 1, 1}}},
		{"3x3_s2", []int{1, 16, 13, 12}, []int{40, 16, 3, 3}, Attrs{"strides": []int64{2, 2}, "pads": []int64{1, 0, 1, 2}}},
		{"nchw_7x7_s2_c3", []int{1, 3, 17, 15}, []int{40, 3, 7, 7}, Attrs{"strides": []int64{2, 2}, "pads": []int64{3, 3, 3, 3}}},
		{"3x3_cols", []int{1, 20, 5, 7}, []int{160, 20, 3, 3}, Attrs{"pads": []int64{1, 1, 1, 1}}},
		{"pw_cols", []int{1, 64, 4, 6}, []int{200, 64, 1, 1}, nil},
		{"3x3_chunks", []int{1, 128, 15, 20}, []int{8, 128, 3, 3}, Attrs{"pads": []int64{1, 1, 1, 1}}},
	}
	for ci, c := range cases {
		X, W, B := nnRand(r, c.x...), nnRand(r, c.w...), nnRand(r, c.w[0])
		K := c.w[1] * c.w[2] * c.w[3]
		act := fusedActCases[ci%5]
		after := ci%3 == 1
		ref := nnRun(t, "Conv", 11, c.attrs, 1, nnAs(X, F64), nnAs(W, F64), nnAs(B, F64))[0]
		Z := nnRand(r, ref.Shape...)
		Xr, Wr := nnAs(X, F32), nnAs(W, F32)
		for _, v := range [][]float32{Xr.F32(), Wr.F32()} {
			for i := range v {
				v[i] = BF16ToF32(bf16Round(v[i]))
			}
		}
		refR := nnRun(t, "Conv", 11, c.attrs, 1, nnAs(Xr, F64), nnAs(Wr, F64), nnAs(B, F64))[0]
		S := nnRun(t, "Conv", 11, c.attrs, 1, bf16Abs(X), bf16Abs(W), bf16Abs(B))[0]
		epi := func(v *Tensor) []float64 {
			if after {
				v = fusedRefAct(t, act, v)
				v = fusedRef64(t, "Add", 14, nil, v, nnAs(Z, F64))
			} else {
				v = fusedRef64(t, "Add", 14, nil, v, nnAs(Z, F64))
				v = fusedRefAct(t, act, v)
			}
			return nnF64(nhwcOf(v, F64))
		}
		want, wantR := epi(ref), epi(refR)
		s := nnF64(nhwcOf(fusedRef64(t, "Add", 14, nil, S, bf16Abs(Z)), F64))
		packed, ok := bf16PackConvNHWC(W.F32(), W.Shape)
		if !ok {
			t.Fatalf("%s: not packable", c.name)
		}
		WP := &Tensor{DType: BF16, Shape: []int{len(packed)}, Data: packed}
		attrs := fusedAttrs(act, c.attrs)
		attrs["layout"] = "NHWC"
		attrs[ConvPackedAttr] = ints64(W.Shape)
		if after {
			attrs["residual_after_activation"] = int64(1)
		}
		x := nhwcOf(X, F32)
		if strings.HasPrefix(c.name, "nchw_") {
			attrs["in_layout"] = "NCHW"
			x = X
		}
		what := fmt.Sprintf("%s/%s/after=%v", c.name, act.name, after)
		got := nhwcRunBoth(t, what, "cuvil::FusedConv", attrs, x, WP, B, nhwcOf(Z, F32)).F32()
		if len(got) != len(want) {
			t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
		}
		worst := 0.0
		for i, g := range got {
			tol := s[i]*(0x1p-8+0x1p-18+float64(K+3)*0x1p-24) + 1e-6
			if d := math.Abs(float64(g) - want[i]); d > tol {
				t.Fatalf("%s: element %d = %v, float64 %v (tolerance %g)", what, i, g, want[i], tol)
			}
			tolR := s[i]*float64(K+3)*0x1p-24 + 1e-6
			if d := math.Abs(float64(g) - wantR[i]); d > tolR {
				t.Fatalf("%s: element %d = %v, float64 of the bf16 operands %v (tolerance %g)", what, i, g, wantR[i], tolR)
			}
			worst = max(worst, math.Abs(float64(g)-want[i])/(s[i]+1e-30))
		}
		t.Logf("%s: max |err|/S %.2e (bf16 bound %.2e)", what, worst, 0x1p-8)
	}
	// Bad input: a prepacked bf16 W that is not a group-1 one is an error.
	n := nnNode("cuvil::FusedConv", 1, Attrs{"layout": "NHWC", "group": int64(2), ConvPackedAttr: []int64{4, 2, 3, 3}}, 1, nnRand(r, 1, 5, 5, 4), &Tensor{DType: BF16, Shape: []int{10}, Data: make([]uint16, 10)})
	if err := FusedConv(n); err == nil || !strings.Contains(err.Error(), "bfloat16 W") {
		t.Fatalf("grouped bf16 W: %v", err)
	}
	n = nnNode("cuvil::FusedConv", 1, Attrs{"layout": "NHWC", ConvPackedAttr: []int64{4, 3, 3, 3}}, 1, nnRand(r, 1, 5, 5, 3), &Tensor{DType: BF16, Shape: []int{10}, Data: make([]uint16, 10)})
	if err := FusedConv(n); err == nil {
		t.Fatal("bf16 W of the wrong length accepted")
	}
}

package templates

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
)

func miscRandQ(rng *rand.Rand, dt DType, shape ...int) (*Tensor, []float64) {
	t := &Tensor{}
	t.Resize(dt, shape...)
	v := make([]float64, t.Len())
	for i := range v {
		switch dt {
		case U8:
			x := uint8(rng.Intn(256))
			t.U8()[i], v[i] = x, float64(x)
		case I8:
			x := int8(rng.Intn(256) - 128)
			t.I8()[i], v[i] = x, float64(x)
		case I32:
			x := int32(rng.Intn(2001) - 1000)
			t.I32()[i], v[i] = x, float64(x)
		}
	}
	return t, v
}

func miscSat(v float64, dt DType) float64 {
	lo, hi, _ := miscQRange(dt)
	return math.Max(lo, math.Min(hi, v))
}

func TestQuantizeDequantize(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	shape := []int{3, 4, 5}
	for _, dt := range []DType{U8, I8} {
		for _, axis := range []int{-1, 0, 1, 2} {
			t.Run(fmt.Sprintf("%s_axis%d", dt, axis), func(t *testing.T) {
				x := miscRandF64(rng, shape...)
				for i := range x {
					x[i] *= 40
				}
				// Exact halves exercise round-half-even.
				x[0], x[1], x[2] = 2.5, -3.5, 1000
				xs := miscRepr(F32, x)
				xt := miscTensorF(F32, xs, shape...)
				var scale, zp []float64
				var st, zt *Tensor
				ax := axis
				if axis < 0 {
					ax += 3
				}
				if axis == -1 || axis == 1 {
					// per-axis
					l := shape[ax]
					scale = make([]float64, l)
					for i := range scale {
						scale[i] = 0.1 + rng.Float64()
					}
					scale[0] = 1
					scale = miscRepr(F32, scale)
					st = miscTensorF(F32, scale, l)
					zt, zp = miscRandQ(rng, dt, l)
				} else {
					scale = []float64{1}
					if axis == 2 {
						scale = miscRepr(F32, []float64{0.37})
					}
					st = miscTensorF(F32, scale)
					zt, zp = miscRandQ(rng, dt)
				}
				stride := 1
				for _, d := range shape[ax+1:] {
					stride *= d
				}
				pi := func(i int) int {
					if len(scale) == 1 {
						return 0
					}
					return (i / stride) % shape[ax]
				}
				n := &Node{Op: "QuantizeLinear", Version: 13, Attrs: Attrs{"axis": int64(axis)}, In: []*Tensor{xt, st, zt}, Out: []*Tensor{{}}}
				if err := QuantizeLinear(n); err != nil {
					t.Fatal(err)
				}
				want := make([]float64, len(xs))
				for i, v := range xs {
					want[i] = miscSat(math.RoundToEven(float64(float32(v)/float32(scale[pi(i)])))+zp[pi(i)], dt)
				}
				if n.Out[0].DType != dt {
					t.Fatalf("dtype %s, want %s", n.Out[0].DType, dt)
				}
				miscCheckClose(t, "q", n.Out[0], want, shape, 0)
				if scale[pi(0)] == 1 && want[0] != miscSat(2+zp[pi(0)], dt) {
					t.Errorf("2.5 quantised to %v, want half-even 2 + zp", want[0])
				}
				miscNoAllocs(t, n, QuantizeLinear)

				// Dequantize the result back.
				d := &Node{Op: "DequantizeLinear", Version: 13, Attrs: Attrs{"axis": int64(axis)}, In: []*Tensor{n.Out[0], st, zt}, Out: []*Tensor{{}}}
				if err := DequantizeLinear(d); err != nil {
					t.Fatal(err)
				}
				dw := make([]float64, len(want))
				for i, q := range want {
					dw[i] = float64(float32((q - zp[pi(i)])) * float32(scale[pi(i)]))
				}
				miscCheckClose(t, "dq", d.Out[0], dw, shape, 0)
				miscNoAllocs(t, d, DequantizeLinear)
			})
		}
	}
	// No zero point: uint8 output; int32 dequantize.
	x := miscTensorF(F32, []float64{-1, 0.4, 300.7, 7.5}, 4)
	n := &Node{Op: "QuantizeLinear", Version: 10, In: []*Tensor{x, miscTensorF(F32, []float64{0.5})}, Out: []*Tensor{{}}}
	if err := QuantizeLinear(n); err != nil {
		t.Fatal(err)
	}
	miscCheckClose(t, "q10", n.Out[0], []float64{0, 1, 255, 15}, []int{4}, 0)
	xi, xv := miscRandQ(rand.New(rand.NewSource(1)), I32, 7)
	d := &Node{Op: "DequantizeLinear", Version: 10, In: []*Tensor{xi, miscTensorF(F32, []float64{0.25})}, Out: []*Tensor{{}}}
	if err := DequantizeLinear(d); err != nil {
		t.Fatal(err)
	}
	for i := range xv {
		xv[i] *= 0.25
	}
	miscCheckClose(t, "dq10", d.Out[0], xv, []int{7}, 0)
}

func TestDynamicQuantizeLinear(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	for _, c := range []struct{ lo, hi float64 }{{-3, 5}, {0.5, 7}, {-9, -1}} {
		x := miscRandF64(rng, 3, 7)
		for i := range x {
			x[i] = c.lo + (x[i]+1)/2*(c.hi-c.lo)
		}
		x = miscRepr(F32, x)
		n := &Node{Op: "DynamicQuantizeLinear", Version: 11, In: []*Tensor{miscTensorF(F32, x, 3, 7)}, Out: []*Tensor{{}, {}, {}}}
		if err := DynamicQuantizeLinear(n); err != nil {
			t.Fatal(err)
		}
		mn, mx := float32(0), float32(0)
		for _, v := range x {
			mn = min(mn, float32(v))
			mx = max(mx, float32(v))
		}
		scale := (mx - mn) / 255
		zp := math.Max(0, math.Min(255, math.RoundToEven(float64(-mn/scale))))
		want := make([]float64, len(x))
		for i, v := range x {
			want[i] = math.Max(0, math.Min(255, math.RoundToEven(float64(float32(v)/scale))+zp))
		}
		miscCheckClose(t, "y", n.Out[0], want, []int{3, 7}, 0)
		miscCheckClose(t, "scale", n.Out[1], []float64{float64(scale)}, []int{}, 0)
		miscCheckClose(t, "zp", n.Out[2], []float64{zp}, []int{}, 0)
		miscNoAllocs(t, n, DynamicQuantizeLinear)
	}
}

// miscRefMatMul is a float64 matmul with numpy broadcasting; zero points
// are subtracted by the caller.
func miscRefMatMul(a []float64, ash []int, b []float64, bsh []int) ([]float64, []int) {
	aVec, bVec := len(ash) == 1, len(bsh) == 1
	if aVec {
		ash = []int{1, ash[0]}
	}
	if bVec {
		bsh = []int{bsh[0], 1}
	}
	M, K, N := ash[len(ash)-2], ash[len(ash)-1], bsh[len(bsh)-1]
	ab, bb := ash[:len(ash)-2], bsh[:len(bsh)-2]
	nb := max(len(ab), len(bb))
	pad := func(s []int) []int {
		r := make([]int, nb)
		for i := range r {
			r[i] = 1
		}
		copy(r[nb-len(s):], s)
		return r
	}
	ab, bb = pad(ab), pad(bb)
	ob := make([]int, nb)
	total := 1
	for i := range ob {
		ob[i] = max(ab[i], bb[i])
		total *= ob[i]
	}
	out := make([]float64, total*M*N)
	idx := make([]int, nb)
	for bt := 0; bt < total; bt++ {
		rem := bt
		for i := nb - 1; i >= 0; i-- {
			idx[i] = rem % ob[i]
			rem /= ob[i]
		}
		ai, bi := 0, 0
		for i := 0; i < nb; i++ {
			ai = ai*ab[i] + idx[i]%ab[i]
			bi = bi*bb[i] + idx[i]%bb[i]
		}
		for m := 0; m < M; m++ {
			for nn := 0; nn < N; nn++ {
				s := 0.0
				for k := 0; k < K; k++ {
					s += a[ai*M*K+m*K+k] * b[bi*K*N+k*N+nn]
				}
				out[bt*M*N+m*N+nn] = s
			}
		}
	}
	shape := append([]int{}, ob...)
	if !aVec {
		shape = append(shape, M)
	}
	if !bVec {
		shape = append(shape, N)
	}
	return out, shape
}

func TestMatMulIntegerAndQLinear(t *testing.T) {
	cases := []struct {
		a, b        []int
		adt, bdt    DType
		rowZP, colZ bool
	}{
		{[]int{5, 7}, []int{7, 3}, U8, U8, true, true},
		{[]int{3, 5, 7}, []int{7, 3}, I8, U8, false, true},
		{[]int{2, 1, 4, 6}, []int{3, 6, 5}, U8, I8, false, false},
		{[]int{6}, []int{2, 6, 5}, I8, I8, false, false},
		{[]int{3, 4, 6}, []int{6}, U8, U8, true, false},
	}
	for ci, c := range cases {
		t.Run(fmt.Sprint(ci), func(t *testing.T) {
			rng := rand.New(rand.NewSource(int64(ci)))
			at, av := miscRandQ(rng, c.adt, c.a...)
			bt, bv := miscRandQ(rng, c.bdt, c.b...)
			M := 1
			if len(c.a) > 1 {
				M = c.a[len(c.a)-2]
			}
			N := 1
			if len(c.b) > 1 {
				N = c.b[len(c.b)-1]
			}
			K := c.a[len(c.a)-1]
			var azt, bzt *Tensor
			var azv, bzv []float64
			if c.rowZP {
				azt, azv = miscRandQ(rng, c.adt, M)
			} else {
				azt, azv = miscRandQ(rng, c.adt)
			}
			if c.colZ {
				bzt, bzv = miscRandQ(rng, c.bdt, N)
			} else {
				bzt, bzv = miscRandQ(rng, c.bdt)
			}
			as := append([]float64{}, av...)
			for i := range as {
				row := (i / K) % M
				as[i] -= azv[row%len(azv)]
			}
			bs := append([]float64{}, bv...)
			for i := range bs {
				bs[i] -= bzv[(i%N)%len(bzv)]
			}
			want, shape := miscRefMatMul(as, c.a, bs, c.b)
			n := &Node{Op: "MatMulInteger", Version: 10, In: []*Tensor{at, bt, azt, bzt}, Out: []*Tensor{{}}}
			if err := MatMulInteger(n); err != nil {
				t.Fatal(err)
			}
			miscCheckClose(t, "MatMulInteger", n.Out[0], want, shape, 0)
			miscNoAllocs(t, n, MatMulInteger)
			if c.rowZP || c.colZ {
				return
			}
			// QLinearMatMul on the same data, per-tensor scales.
			sa, sb, sy := 0.02, 0.03, 0.9
			yzt, yz := miscRandQ(rng, c.adt)
			q := &Node{Op: "QLinearMatMul", Version: 10, In: []*Tensor{at, miscTensorF(F32, []float64{sa}), azt, bt, miscTensorF(F32, []float64{sb}), bzt,
				miscTensorF(F32, []float64{sy}), yzt}, Out: []*Tensor{{}}}
			if err := QLinearMatMul(q); err != nil {
				t.Fatal(err)
			}
			mult := float64(float32(sa)) * float64(float32(sb)) / float64(float32(sy))
			qw := make([]float64, len(want))
			for i, v := range want {
				qw[i] = miscSat(math.RoundToEven(v*mult)+yz[0], c.adt)
			}
			miscCheckClose(t, "QLinearMatMul", q.Out[0], qw, shape, 0)
			miscNoAllocs(t, q, QLinearMatMul)
		})
	}
}

// miscRefConv is a direct float64 N-D (1-D or 2-D here) convolution.
func miscRefConv2D(x []float64, xs []int, w []float64, ws []int, group int, pads, strides, dils []int) ([]float64, []int) {
	N, C, H, W := xs[0], xs[1], xs[2], xs[3]
	M, KH, KW := ws[0], ws[2], ws[3]
	OH := (H+pads[0]+pads[2]-((KH-1)*dils[0]+1))/strides[0] + 1
	OW := (W+pads[1]+pads[3]-((KW-1)*dils[1]+1))/strides[1] + 1
	cpg, mpg := C/group, M/group
	out := make([]float64, N*M*OH*OW)
	for b := 0; b < N; b++ {
		for m := 0; m < M; m++ {
			g := m / mpg
			for oh := 0; oh < OH; oh++ {
				for ow := 0; ow < OW; ow++ {
					s := 0.0
					for c := 0; c < cpg; c++ {
						for kh := 0; kh < KH; kh++ {
							for kw := 0; kw < KW; kw++ {
								ih := oh*strides[0] - pads[0] + kh*dils[0]
								iw := ow*strides[1] - pads[1] + kw*dils[1]
								if ih < 0 || ih >= H || iw < 0 || iw >= W {
									continue
								}
								s += x[((b*C+g*cpg+c)*H+ih)*W+iw] * w[((m*cpg+c)*KH+kh)*KW+kw]
							}
						}
					}
					out[((b*M+m)*OH+oh)*OW+ow] = s
				}
			}
		}
	}
	return out, []int{N, M, OH, OW}
}

func TestConvIntegerAndQLinearConv(t *testing.T) {
	cases := []struct {
		xs, ws              []int
		group               int
		pads, strides, dils []int
		autoPad             string
		perChannel          bool
	}{
		{[]int{1, 3, 7, 6}, []int{4, 3, 3, 2}, 1, []int{1, 0, 2, 1}, []int{1, 1}, []int{1, 1}, "", false},
		{[]int{2, 4, 9, 8}, []int{6, 2, 3, 3}, 2, []int{1, 1, 1, 1}, []int{2, 3}, []int{1, 2}, "", true},
		{[]int{1, 2, 5, 7}, []int{3, 2, 3, 3}, 1, nil, []int{2, 2}, []int{1, 1}, "SAME_UPPER", true},
		{[]int{1, 2, 6, 5}, []int{2, 1, 2, 2}, 2, nil, []int{1, 1}, []int{1, 1}, "SAME_LOWER", false},
	}
	for ci, c := range cases {
		t.Run(fmt.Sprint(ci), func(t *testing.T) {
			rng := rand.New(rand.NewSource(int64(ci) + 10))
			xt, xv := miscRandQ(rng, U8, c.xs...)
			wt, wv := miscRandQ(rng, I8, c.ws...)
			xzt, xz := miscRandQ(rng, U8)
			var wzt *Tensor
			var wz []float64
			if c.perChannel {
				wzt, wz = miscRandQ(rng, I8, c.ws[0])
			} else {
				wzt, wz = miscRandQ(rng, I8)
			}
			pads := c.pads
			if c.autoPad != "" {
				pads = make([]int, 4)
				for i := 0; i < 2; i++ {
					in, s, k := c.xs[2+i], c.strides[i], (c.ws[2+i]-1)*c.dils[i]+1
					o := (in + s - 1) / s
					tot := max(0, (o-1)*s+k-in)
					pads[i], pads[2+i] = tot/2, tot-tot/2
					if c.autoPad == "SAME_LOWER" {
						pads[i], pads[2+i] = tot-tot/2, tot/2
					}
				}
			}
			xsub := append([]float64{}, xv...)
			for i := range xsub {
				xsub[i] -= xz[0]
			}
			kvol := len(wv) / c.ws[0]
			wsub := append([]float64{}, wv...)
			for i := range wsub {
				wsub[i] -= wz[(i/kvol)%len(wz)]
			}
			want, shape := miscRefConv2D(xsub, c.xs, wsub, c.ws, c.group, pads, c.strides, c.dils)
			attrs := Attrs{"group": int64(c.group), "strides": miscI64s(c.strides), "dilations": miscI64s(c.dils), "kernel_shape": miscI64s(c.ws[2:])}
			if c.autoPad != "" {
				attrs["auto_pad"] = c.autoPad
			} else {
				attrs["pads"] = miscI64s(c.pads)
			}
			n := &Node{Op: "ConvInteger", Version: 10, Attrs: attrs, In: []*Tensor{xt, wt, xzt, wzt}, Out: []*Tensor{{}}}
			if err := ConvInteger(n); err != nil {
				t.Fatal(err)
			}
			miscCheckClose(t, "ConvInteger", n.Out[0], want, shape, 0)
			miscNoAllocs(t, n, ConvInteger)

			// QLinearConv with bias and per-channel weight scales.
			M := c.ws[0]
			bt, bv := miscRandQ(rng, I32, M)
			wsc := make([]float64, M)
			for i := range wsc {
				wsc[i] = 0.001 + 0.01*rng.Float64()
			}
			wsc = miscRepr(F32, wsc)
			wst := miscTensorF(F32, wsc, M)
			if !c.perChannel {
				wsc = wsc[:1]
				wst = miscTensorF(F32, wsc)
			}
			xsc, ysc := float64(float32(0.05)), float64(float32(0.3))
			yzt, yz := miscRandQ(rng, U8)
			q := &Node{Op: "QLinearConv", Version: 10, Attrs: attrs, In: []*Tensor{xt, miscTensorF(F32, []float64{xsc}), xzt, wt, wst, wzt,
				miscTensorF(F32, []float64{ysc}), yzt, bt}, Out: []*Tensor{{}}}
			if err := QLinearConv(q); err != nil {
				t.Fatal(err)
			}
			vol := len(want) / (shape[0] * M)
			qw := make([]float64, len(want))
			for i, v := range want {
				m := (i / vol) % M
				qw[i] = miscSat(math.RoundToEven((v+bv[m])*xsc*wsc[m%len(wsc)]/ysc)+yz[0], U8)
			}
			miscCheckClose(t, "QLinearConv", q.Out[0], qw, shape, 0)
			miscNoAllocs(t, q, QLinearConv)
		})
	}
	// 1-D ConvInteger against the 2-D reference with a unit height.
	rng := rand.New(rand.NewSource(99))
	xt, xv := miscRandQ(rng, I8, 2, 3, 11)
	wt, wv := miscRandQ(rng, I8, 4, 3, 3)
	want, shape := miscRefConv2D(xv, []int{2, 3, 1, 11}, wv, []int{4, 3, 1, 3}, 1, []int{0, 2, 0, 1}, []int{1, 2}, []int{1, 2})
	n := &Node{Op: "ConvInteger", Version: 10, Attrs: Attrs{"pads": []int64{2, 1}, "strides": []int64{2}, "dilations": []int64{2}},
		In: []*Tensor{xt, wt}, Out: []*Tensor{{}}}
	if err := ConvInteger(n); err != nil {
		t.Fatal(err)
	}
	miscCheckClose(t, "ConvInteger1D", n.Out[0], want, []int{shape[0], shape[1], shape[3]}, 0)
}

func miscI64s(v []int) []int64 {
	r := make([]int64, len(v))
	for i, x := range v {
		r[i] = int64(x)
	}
	return r
}

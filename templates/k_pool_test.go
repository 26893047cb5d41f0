package templates

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
)

type poolCase struct {
	xs, k, s, d, pads []int
	autoPad           string
	ceil, inclPad     bool
	colMajor          bool
}

// refPoolGeom mirrors the ONNX shape rules independently of nnWindow.
func refPoolGeom(c poolCase) (out, pb, pe []int) {
	nd := len(c.xs) - 2
	out, pb, pe = make([]int, nd), make([]int, nd), make([]int, nd)
	for i := 0; i < nd; i++ {
		s, d := 1, 1
		if c.s != nil {
			s = c.s[i]
		}
		if c.d != nil {
			d = c.d[i]
		}
		in, ek := c.xs[2+i], (c.k[i]-1)*d+1
		if c.autoPad == "SAME_UPPER" || c.autoPad == "SAME_LOWER" {
			out[i] = int(math.Ceil(float64(in) / float64(s)))
			total := max(0, (out[i]-1)*s+ek-in)
			pb[i] = total / 2
			if c.autoPad == "SAME_LOWER" {
				pb[i] = total - total/2
			}
			pe[i] = total - pb[i]
			continue
		}
		if c.pads != nil && c.autoPad != "VALID" {
			pb[i], pe[i] = c.pads[i], c.pads[i+nd]
		}
		f := float64(in+pb[i]+pe[i]-ek)/float64(s) + 1
		if c.ceil {
			out[i] = int(math.Ceil(f))
			if (out[i]-1)*s >= in+pb[i] {
				out[i]--
			}
		} else {
			out[i] = int(math.Floor(f))
		}
	}
	return
}

// refPool: kind "max", "avg" or "lpP"; returns values and (for max) indices.
func refPool(x []float64, c poolCase, kind string, p float64) ([]int, []float64, []float64) {
	nd := len(c.xs) - 2
	out, pb, pe := refPoolGeom(c)
	in := c.xs[2:]
	inSize, outSize, kSize := 1, 1, 1
	for i := 0; i < nd; i++ {
		inSize *= in[i]
		outSize *= out[i]
		kSize *= c.k[i]
	}
	planes := c.xs[0] * c.xs[1]
	y, ind := make([]float64, planes*outSize), make([]float64, planes*outSize)
	oi, ki := make([]int, nd), make([]int, nd)
	for pl := 0; pl < planes; pl++ {
		for o := 0; o < outSize; o++ {
			rem := o
			for i := nd - 1; i >= 0; i-- {
				oi[i] = rem % out[i]
				rem /= out[i]
			}
			best, bestAt, sum, cnt, padCnt := math.Inf(-1), -1, 0.0, 0, 0
			for kf := 0; kf < kSize; kf++ {
				rem := kf
				for i := nd - 1; i >= 0; i-- {
					ki[i] = rem % c.k[i]
					rem /= c.k[i]
				}
				off, cm, stride, ok, inPad := 0, 0, 1, true, true
				for i := 0; i < nd; i++ {
					s, d := 1, 1
					if c.s != nil {
						s = c.s[i]
					}
					if c.d != nil {
						d = c.d[i]
					}
					q := oi[i]*s - pb[i] + ki[i]*d
					if q < 0 || q >= in[i] {
						ok = false
					}
					if q < -pb[i] || q >= in[i]+pe[i] {
						inPad = false
					}
					off = off*in[i] + q
				}
				if inPad {
					padCnt++
				}
				if !ok {
					continue
				}
				// column-major offset
				for i := 0; i < nd; i++ {
					s, d := 1, 1
					if c.s != nil {
						s = c.s[i]
					}
					if c.d != nil {
						d = c.d[i]
					}
					cm += (oi[i]*s - pb[i] + ki[i]*d) * stride
					stride *= in[i]
				}
				v := x[pl*inSize+off]
				cnt++
				switch kind {
				case "max":
					if v > best {
						best = v
						bestAt = off
						if c.colMajor {
							bestAt = cm
						}
					}
				case "avg":
					sum += v
				default:
					sum += math.Pow(math.Abs(v), p)
				}
			}
			switch kind {
			case "max":
				y[pl*outSize+o] = best
				ind[pl*outSize+o] = float64(pl*inSize + bestAt)
			case "avg":
				if c.inclPad {
					y[pl*outSize+o] = sum / float64(padCnt)
				} else {
					y[pl*outSize+o] = sum / float64(cnt)
				}
			default:
				y[pl*outSize+o] = math.Pow(sum, 1/p)
			}
		}
	}
	return append([]int{c.xs[0], c.xs[1]}, out...), y, ind
}

func (c poolCase) attrs() Attrs {
	a := Attrs{"kernel_shape": ints64(c.k)}
	for k, v := range map[string][]int{"strides": c.s, "dilations": c.d, "pads": c.pads} {
		if v != nil {
			a[k] = ints64(v)
		}
	}
	if c.autoPad != "" {
		a["auto_pad"] = c.autoPad
	}
	if c.ceil {
		a["ceil_mode"] = int64(1)
	}
	if c.inclPad {
		a["count_include_pad"] = int64(1)
	}
	if c.colMajor {
		a["storage_order"] = int64(1)
	}
	return a
}

var poolCases = []poolCase{
	{xs: []int{2, 3, 9, 7}, k: []int{3, 3}, s: []int{2, 2}},
	{xs: []int{1, 2, 9, 8}, k: []int{3, 2}, s: []int{2, 3}, pads: []int{1, 0, 2, 1}},
	{xs: []int{1, 2, 9, 8}, k: []int{3, 2}, s: []int{2, 3}, pads: []int{1, 0, 2, 1}, inclPad: true},
	{xs: []int{1, 2, 10, 7}, k: []int{3, 3}, s: []int{2, 2}, ceil: true},
	{xs: []int{1, 2, 10, 7}, k: []int{3, 3}, s: []int{3, 2}, pads: []int{1, 1, 1, 1}, ceil: true, inclPad: true},
	{xs: []int{1, 3, 11, 9}, k: []int{2, 3}, s: []int{1, 2}, d: []int{2, 2}},
	{xs: []int{1, 3, 11, 9}, k: []int{3, 3}, s: []int{2, 2}, autoPad: "SAME_UPPER"},
	{xs: []int{1, 3, 11, 9}, k: []int{4, 3}, s: []int{3, 2}, autoPad: "SAME_LOWER"},
	{xs: []int{1, 3, 11, 9}, k: []int{4, 3}, s: []int{3, 2}, autoPad: "VALID"},
	{xs: []int{2, 3, 13}, k: []int{4}, s: []int{3}, pads: []int{1, 2}},
	{xs: []int{1, 2, 5, 6, 7}, k: []int{2, 3, 2}, s: []int{2, 1, 2}, pads: []int{0, 1, 1, 1, 0, 1}},
	{xs: []int{1, 2, 7, 6}, k: []int{3, 2}, s: []int{2, 2}, colMajor: true},
	{xs: []int{1, 2, 5, 6, 7}, k: []int{2, 2, 3}, s: []int{1, 2, 2}, colMajor: true},
}

func TestMaxPool(t *testing.T) {
	r := rand.New(rand.NewSource(10))
	for ci, c := range poolCases {
		X := nnRand(r, c.xs...)
		for _, dt := range []DType{F32, F64, F16, BF16, I8, U8} {
			x := X
			if dt == I8 {
				x = nnSmallInts(r, -100, 100, c.xs...)
			} else if dt == U8 {
				x = nnSmallInts(r, 0, 250, c.xs...)
			}
			in := nnAs(x, dt)
			shape, want, ind := refPool(nnF64(in), c, "max", 0)
			for _, v := range []int{1, 8, 10, 11, 12} {
				if v < 10 && (c.ceil || c.d != nil) || v < 12 && (dt == I8 || dt == U8) {
					continue
				}
				nout := 2
				if v < 8 {
					nout = 1
				}
				got := nnRun(t, "MaxPool", v, c.attrs(), nout, in)
				what := fmt.Sprintf("MaxPool case %d v%d %v", ci, v, dt)
				nnCheck(t, what, got[0], shape, want, 0)
				if nout == 2 && dt != F16 && dt != BF16 { // ties after rounding may pick another index
					nnCheck(t, what+" indices", got[1], shape, ind, 0)
				}
			}
		}
	}
}

func TestAverageLpPool(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	for ci, c := range poolCases {
		if c.colMajor {
			continue
		}
		X := nnRand(r, c.xs...)
		for _, dt := range nnFloatTypes {
			in := nnAs(X, dt)
			shape, want, _ := refPool(nnF64(in), c, "avg", 0)
			for _, v := range []int{1, 7, 10, 11} {
				if v < 10 && (c.ceil || c.d != nil) || v < 7 && c.inclPad {
					continue
				}
				got := nnRun(t, "AveragePool", v, c.attrs(), 1, in)
				nnCheck(t, fmt.Sprintf("AveragePool case %d v%d %v", ci, v, dt), got[0], shape, want, nnTol(dt))
			}
			if c.inclPad || c.d != nil || c.ceil {
				continue
			}
			for _, p := range []int{1, 2, 3} {
				shape, want, _ := refPool(nnF64(in), c, "lp", float64(p))
				for _, v := range []int{1, 2, 11} {
					a := c.attrs()
					if v == 1 {
						a["p"] = float32(p)
					} else {
						a["p"] = int64(p)
					}
					got := nnRun(t, "LpPool", v, a, 1, in)
					nnCheck(t, fmt.Sprintf("LpPool case %d p%d v%d %v", ci, p, v, dt), got[0], shape, want, nnTol(dt)*4)
				}
			}
		}
	}
	// p defaults to 2 from version 2.
	X := nnRand(r, 1, 2, 5, 5)
	c := poolCase{xs: []int{1, 2, 5, 5}, k: []int{2, 2}}
	shape, want, _ := refPool(nnF64(X), c, "lp", 2)
	nnCheck(t, "LpPool default p", nnRun(t, "LpPool", 11, c.attrs(), 1, X)[0], shape, want, 1e-5)
}

func TestGlobalPools(t *testing.T) {
	r := rand.New(rand.NewSource(12))
	for _, xs := range [][]int{{2, 3, 5, 7}, {1, 5, 9}, {2, 2, 3, 4, 5}} {
		X := nnRand(r, xs...)
		for _, dt := range nnFloatTypes {
			in := nnAs(X, dt)
			x := nnF64(in)
			planes, size := xs[0]*xs[1], len(x)/(xs[0]*xs[1])
			shape := []int{xs[0], xs[1]}
			for range xs[2:] {
				shape = append(shape, 1)
			}
			avg, mx, lp2, lp3 := make([]float64, planes), make([]float64, planes), make([]float64, planes), make([]float64, planes)
			for p := 0; p < planes; p++ {
				mx[p] = math.Inf(-1)
				for _, v := range x[p*size : (p+1)*size] {
					avg[p] += v / float64(size)
					mx[p] = math.Max(mx[p], v)
					lp2[p] += v * v
					lp3[p] += math.Abs(v * v * v)
				}
				lp2[p] = math.Sqrt(lp2[p])
				lp3[p] = math.Cbrt(lp3[p])
			}
			nnCheck(t, "GlobalAveragePool "+dt.String(), nnRun(t, "GlobalAveragePool", 1, nil, 1, in)[0], shape, avg, nnTol(dt))
			nnCheck(t, "GlobalMaxPool "+dt.String(), nnRun(t, "GlobalMaxPool", 1, nil, 1, in)[0], shape, mx, 0)
			nnCheck(t, "GlobalLpPool v2 "+dt.String(), nnRun(t, "GlobalLpPool", 2, nil, 1, in)[0], shape, lp2, nnTol(dt)*4)
			nnCheck(t, "GlobalLpPool v1 p3 "+dt.String(), nnRun(t, "GlobalLpPool", 1, Attrs{"p": float32(3)}, 1, in)[0], shape, lp3, nnTol(dt)*4)
			nnCheck(t, "GlobalLpPool v2 p3 "+dt.String(), nnRun(t, "GlobalLpPool", 2, Attrs{"p": int64(3)}, 1, in)[0], shape, lp3, nnTol(dt)*4)
		}
	}
}

// TestPoolConformance uses inputs and outputs of ONNX backend tests.
func TestPoolConformance(t *testing.T) {
	seq := func(h, w int) *Tensor {
		x := &Tensor{}
		x.Resize(F32, 1, 1, h, w)
		for i := range x.F32() {
			x.F32()[i] = float32(i + 1)
		}
		return x
	}
	f := func(v ...float64) []float64 { return v }
	pads5 := Attrs{"kernel_shape": []int64{5, 5}, "pads": []int64{2, 2, 2, 2}}
	got := nnRun(t, "MaxPool", 12, pads5, 2, seq(5, 5))
	nnCheck(t, "maxpool_with_argmax_2d_precomputed_pads", got[0], []int{1, 1, 5, 5},
		f(13, 14, 15, 15, 15, 18, 19, 20, 20, 20, 23, 24, 25, 25, 25, 23, 24, 25, 25, 25, 23, 24, 25, 25, 25), 0)
	nnCheck(t, "maxpool_with_argmax_2d_precomputed_pads indices", got[1], []int{1, 1, 5, 5},
		f(12, 13, 14, 14, 14, 17, 18, 19, 19, 19, 22, 23, 24, 24, 24, 22, 23, 24, 24, 24, 22, 23, 24, 24, 24), 0)
	got = nnRun(t, "MaxPool", 12, Attrs{"kernel_shape": []int64{2, 2}, "strides": []int64{2, 2}, "storage_order": int64(1)}, 2, seq(5, 5))
	nnCheck(t, "maxpool_with_argmax_2d_precomputed_strides", got[0], []int{1, 1, 2, 2}, f(7, 9, 17, 19), 0)
	nnCheck(t, "maxpool_with_argmax_2d_precomputed_strides indices", got[1], []int{1, 1, 2, 2}, f(6, 16, 8, 18), 0)
	got = nnRun(t, "MaxPool", 12, Attrs{"kernel_shape": []int64{3, 3}, "strides": []int64{2, 2}, "ceil_mode": int64(1)}, 1, seq(4, 4))
	nnCheck(t, "maxpool_2d_ceil", got[0], []int{1, 1, 2, 2}, f(11, 12, 15, 16), 0)
	got = nnRun(t, "MaxPool", 12, Attrs{"kernel_shape": []int64{2, 2}, "dilations": []int64{2, 2}}, 1, seq(4, 4))
	nnCheck(t, "maxpool_2d_dilations", got[0], []int{1, 1, 2, 2}, f(11, 12, 15, 16), 0)
	got = nnRun(t, "MaxPool", 12, pads5, 1, nnAs(seq(5, 5), U8))
	nnCheck(t, "maxpool_2d_uint8", got[0], []int{1, 1, 5, 5},
		f(13, 14, 15, 15, 15, 18, 19, 20, 20, 20, 23, 24, 25, 25, 25, 23, 24, 25, 25, 25, 23, 24, 25, 25, 25), 0)
	got = nnRun(t, "AveragePool", 11, Attrs{"kernel_shape": []int64{3, 3}, "strides": []int64{2, 2}, "ceil_mode": int64(1)}, 1, seq(4, 4))
	nnCheck(t, "averagepool_2d_ceil", got[0], []int{1, 1, 2, 2}, f(6, 7.5, 12, 13.5), 1e-6)
	got = nnRun(t, "AveragePool", 11, pads5, 1, seq(5, 5))
	nnCheck(t, "averagepool_2d_precomputed_pads", got[0], []int{1, 1, 5, 5},
		f(7, 7.5, 8, 8.5, 9, 9.5, 10, 10.5, 11, 11.5, 12, 12.5, 13, 13.5, 14, 14.5, 15, 15.5, 16, 16.5, 17, 17.5, 18, 18.5, 19), 1e-6)
	a := Attrs{"kernel_shape": []int64{5, 5}, "pads": []int64{2, 2, 2, 2}, "count_include_pad": int64(1)}
	got = nnRun(t, "AveragePool", 11, a, 1, seq(5, 5))
	nnCheck(t, "averagepool_2d_precomputed_pads_count_include_pad", got[0], []int{1, 1, 5, 5},
		f(2.52, 3.6, 4.8, 4.08, 3.24, 4.56, 6.4, 8.4, 7.04, 5.52, 7.2, 10, 13, 10.8, 8.4, 6.96, 9.6, 12.4, 10.24, 7.92, 6.12, 8.4, 10.8, 8.88, 6.84), 1e-6)
}

func TestPoolNoAlloc(t *testing.T) {
	r := rand.New(rand.NewSource(13))
	a := Attrs{"kernel_shape": []int64{3, 3}, "strides": []int64{2, 2}, "pads": []int64{1, 1, 1, 1}}
	if n := nnAllocs(t, nnNode("MaxPool", 12, a, 2, nnRand(r, 1, 3, 9, 9)), MaxPool); n != 0 {
		t.Fatalf("MaxPool allocates %v", n)
	}
	if n := nnAllocs(t, nnNode("AveragePool", 11, a, 1, nnAs(nnRand(r, 1, 3, 9, 9), F16)), AveragePool); n != 0 {
		t.Fatalf("AveragePool f16 allocates %v", n)
	}
	if n := nnAllocs(t, nnNode("GlobalAveragePool", 1, nil, 1, nnRand(r, 1, 3, 9, 9)), GlobalAveragePool); n != 0 {
		t.Fatalf("GlobalAveragePool allocates %v", n)
	}
}

// TestMaxPool2DMatchesWalk compares the separated 2-D MaxPool with the
// general N-D walk on odd sizes, strides, dilations and paddings.
func TestMaxPool2DMatchesWalk(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for _, c := range []struct{ h, w, kh, kw, sh, sw, dh, dw, ph, pw int }{
		{7, 9, 3, 3, 2, 2, 1, 1, 0, 0},
		{11, 5, 3, 2, 1, 2, 1, 1, 1, 1},
		{13, 17, 3, 3, 2, 3, 2, 2, 2, 1},
		{5, 5, 2, 2, 2, 2, 1, 1, 1, 1},
		{1, 23, 1, 5, 1, 3, 1, 2, 0, 2},
		{4, 6, 3, 5, 1, 1, 1, 1, 1, 2},
		{2, 3, 3, 7, 1, 1, 1, 1, 1, 3},
		{9, 12, 3, 3, 1, 1, 1, 3, 1, 1},
	} {
		oh := (c.h+2*c.ph-(c.kh-1)*c.dh-1)/c.sh + 1
		ow := (c.w+2*c.pw-(c.kw-1)*c.dw-1)/c.sw + 1
		win := nnWin{k: []int{c.kh, c.kw}, s: []int{c.sh, c.sw}, d: []int{c.dh, c.dw},
			pb: []int{c.ph, c.pw}, pe: []int{c.ph, c.pw}, out: []int{oh, ow}}
		planes := 3
		x := make([]float32, planes*c.h*c.w)
		for i := range x {
			x[i] = r.Float32()*2 - 1
		}
		want := make([]float32, planes*oh*ow)
		got := make([]float32, planes*oh*ow)
		maxPool(x, want, nil, []int{1, planes, c.h, c.w}, win, false, make([]int, 10))
		maxPool2D(x, got, make([]float32, c.w), planes, []int{c.h, c.w}, win)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%+v: output %d = %v, want %v", c, i, got[i], want[i])
			}
		}
	}
}

// TestMaxPoolVecKernels checks maxRows and maxCols (the assembly where the
// CPU has it, else the Go twins) against a float64 reference on awkward
// lengths, with NaN taps, with dst aliasing r0, and with x ending at the
// last tap (the stride-2 kernels read one element past it).
func TestMaxPoolVecKernels(t *testing.T) { checkMaxPoolKernels(t) }

func checkMaxPoolKernels(t *testing.T) {
	r := rand.New(rand.NewSource(21))
	fill := func(n int, nan bool) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = r.Float32()*2 - 1
			if nan && r.Intn(23) == 0 {
				x[i] = float32(math.NaN())
			}
		}
		return x
	}
	same := func(got float32, want float64) bool {
		return got == float32(want) || math.IsNaN(float64(got)) && math.IsNaN(want)
	}
	ref := func(vs ...float32) float64 {
		m := math.Inf(-1)
		for _, v := range vs {
			if math.IsNaN(float64(v)) {
				return math.NaN()
			}
			m = math.Max(m, float64(v))
		}
		return m
	}
	for _, n := range []int{1, 7, 8, 9, 15, 16, 17, 23, 31, 33, 55, 64, 111} {
		for _, nan := range []bool{false, true} {
			a, b, c := fill(n, nan), fill(n, nan), fill(n, nan)
			dst := make([]float32, n)
			maxRows(dst, a, b, c)
			for i := range dst {
				if want := ref(a[i], b[i], c[i]); !same(dst[i], want) {
					t.Fatalf("maxRows n=%d nan=%v: dst[%d] = %v, want %v", n, nan, i, dst[i], want)
				}
			}
			acc := append([]float32(nil), a...)
			maxRows(acc, acc, b, b)
			for i := range acc {
				if want := ref(a[i], b[i]); !same(acc[i], want) {
					t.Fatalf("maxRows in place n=%d nan=%v: dst[%d] = %v, want %v", n, nan, i, acc[i], want)
				}
			}
			for _, s := range []int{1, 2} {
				for _, k := range []int{1, 2, 3, 5} {
					for _, extra := range []int{0, 1, 3} {
						x := fill(s*(n-1)+k+extra, nan)
						y := make([]float32, n)
						done := maxCols(y, x, k, s)
						if done != n && done != n-1 && done != 0 {
							t.Fatalf("maxCols n=%d: did %d outputs", n, done)
						}
						for o := 0; o < done; o++ {
							if want := ref(x[s*o : s*o+k]...); !same(y[o], want) {
								t.Fatalf("maxCols n=%d k=%d s=%d extra=%d nan=%v: y[%d] = %v, want %v", n, k, s, extra, nan, o, y[o], want)
							}
						}
						maxColsGo(y, x, k, s)
						for o := range y {
							if want := ref(x[s*o : s*o+k]...); !same(y[o], want) {
								t.Fatalf("maxColsGo n=%d k=%d s=%d: y[%d] = %v, want %v", n, k, s, o, y[o], want)
							}
						}
					}
				}
			}
		}
	}
}

// TestMaxPoolWide runs float32 MaxPool on planes wide enough for the
// vector kernels (SqueezeNet's 3x3 stride 2 with ceil_mode, 2x2 stride 2,
// 3x3 stride 1 padded, dilated and stride-3 fallbacks) at 1 and 2 threads
// against the float64 reference.
func TestMaxPoolWide(t *testing.T) { checkMaxPoolWide(t) }

func checkMaxPoolWide(t *testing.T) {
	r := rand.New(rand.NewSource(22))
	pool := NewWorkPool(WithThreads(2))
	defer pool.Close()
	for ci, c := range []poolCase{
		{xs: []int{1, 5, 111, 111}, k: []int{3, 3}, s: []int{2, 2}, ceil: true},
		{xs: []int{1, 3, 55, 55}, k: []int{3, 3}, s: []int{2, 2}, ceil: true},
		{xs: []int{1, 7, 27, 27}, k: []int{3, 3}, s: []int{2, 2}, ceil: true},
		{xs: []int{1, 3, 34, 41}, k: []int{3, 3}, s: []int{2, 2}, pads: []int{1, 1, 1, 1}},
		{xs: []int{2, 3, 24, 37}, k: []int{2, 2}, s: []int{2, 2}},
		{xs: []int{1, 4, 19, 33}, k: []int{2, 2}, s: []int{2, 2}, ceil: true},
		{xs: []int{1, 3, 17, 29}, k: []int{3, 3}, s: []int{1, 1}, pads: []int{1, 1, 1, 1}},
		{xs: []int{1, 2, 21, 40}, k: []int{5, 4}, s: []int{1, 2}, pads: []int{2, 1, 2, 2}},
		{xs: []int{1, 2, 21, 40}, k: []int{3, 3}, s: []int{2, 2}, d: []int{2, 2}},
		{xs: []int{1, 2, 21, 52}, k: []int{3, 3}, s: []int{3, 3}, pads: []int{1, 1, 1, 1}},
	} {
		in := nnRand(r, c.xs...)
		shape, want, _ := refPool(nnF64(in), c, "max", 0)
		for _, threads := range []int{1, 2} {
			n := nnNode("MaxPool", 12, c.attrs(), 1, in)
			if threads == 2 {
				n.Pool = pool
			}
			if err := MaxPool(n); err != nil {
				t.Fatal(err)
			}
			nnCheck(t, fmt.Sprintf("case %d, %d threads", ci, threads), n.Out[0], shape, want, 0)
		}
	}
}

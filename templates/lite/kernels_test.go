package lite

import (
	le "encoding/binary"
	"math"
	"math/rand"
	"testing"
)

// blob is v as the little-endian bytes the kernels read constants from.
func blob(v []float32) string {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		le.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return string(b)
}

func randF32(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

// near fails t unless got is within a float32-accumulation tolerance of
// the float64 reference want.
func near(t *testing.T, what string, got []float32, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d elements, want %d", what, len(got), len(want))
	}
	for i := range want {
		if d := math.Abs(float64(got[i]) - want[i]); d > 1e-4*(1+math.Abs(want[i])) || math.IsNaN(float64(got[i])) != math.IsNaN(want[i]) {
			t.Fatalf("%s: [%d] = %v, want %v", what, i, got[i], want[i])
		}
	}
}

func TestWF(t *testing.T) {
	v := []float32{1.5, -2, float32(math.Inf(1)), 3e-38}
	s := blob(v)
	for i, x := range v {
		if got := wf(s, i); got != x {
			t.Errorf("wf(%d) = %v, want %v", i, got, x)
		}
	}
}

func TestConv2D(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	type cs struct{ n, c, h, w, m, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr, g int }
	for _, k := range []cs{
		{1, 1, 7, 5, 3, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0, 1},
		{2, 3, 9, 11, 5, 3, 2, 2, 1, 1, 2, 1, 2, 0, 1, 1},
		{1, 6, 8, 7, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 6}, // depthwise
		{1, 4, 13, 10, 6, 10, 4, 2, 2, 1, 1, 5, 1, 5, 1, 2},
		{1, 5, 6, 6, 7, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1},
		{1, 2, 5, 4, 2, 3, 3, 3, 2, 2, 1, 2, 2, 2, 2, 1},
	} {
		oh := (k.h+k.pt+k.pb-(k.dh*(k.kh-1)+1))/k.sh + 1
		ow := (k.w+k.pl+k.pr-(k.dw*(k.kw-1)+1))/k.sw + 1
		cg := k.c / k.g
		x := randF32(r, k.n*k.c*k.h*k.w)
		w := randF32(r, k.m*cg*k.kh*k.kw)
		b := randF32(r, k.m)
		y := make([]float32, k.n*k.m*oh*ow)
		conv2d(y, x, blob(w), blob(b), k.n, k.c, k.h, k.w, k.m, k.kh, k.kw, oh, ow, k.sh, k.sw, k.dh, k.dw, k.pt, k.pl, k.g)
		want := make([]float64, len(y))
		for bn := 0; bn < k.n; bn++ {
			for oc := 0; oc < k.m; oc++ {
				g := oc / (k.m / k.g)
				for oy := 0; oy < oh; oy++ {
					for ox := 0; ox < ow; ox++ {
						s := float64(b[oc])
						for ic := 0; ic < cg; ic++ {
							for ky := 0; ky < k.kh; ky++ {
								for kx := 0; kx < k.kw; kx++ {
									iy, ix := oy*k.sh-k.pt+ky*k.dh, ox*k.sw-k.pl+kx*k.dw
									if iy < 0 || iy >= k.h || ix < 0 || ix >= k.w {
										continue
									}
									s += float64(x[((bn*k.c+g*cg+ic)*k.h+iy)*k.w+ix]) * float64(w[((oc*cg+ic)*k.kh+ky)*k.kw+kx])
								}
							}
						}
						want[((bn*k.m+oc)*oh+oy)*ow+ox] = s
					}
				}
			}
		}
		near(t, "conv2d", y, want)
	}
	// No bias.
	y := make([]float32, 4)
	conv2d(y, []float32{1, 2, 3, 4}, blob([]float32{2}), "", 1, 1, 2, 2, 1, 1, 1, 2, 2, 1, 1, 1, 1, 0, 0, 1)
	near(t, "conv2d no bias", y, []float64{2, 4, 6, 8})
}

func TestGemm(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	for _, m := range []int{1, 3} {
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				for ck := 0; ck <= 4; ck++ {
					k, n := 7, 5
					a, b := randF32(r, m*k), randF32(r, k*n)
					c := randF32(r, []int{0, 1, n, m, m * n}[ck])
					alpha, beta := float32(0.5), float32(-2)
					y := make([]float32, m*n)
					gemm(y, a, blob(b), blob(c), m, k, n, ta, tb, alpha, beta, ck)
					want := make([]float64, m*n)
					for i := 0; i < m; i++ {
						for j := 0; j < n; j++ {
							s := 0.0
							for p := 0; p < k; p++ {
								av, bv := a[i*k+p], b[p*n+j]
								if ta {
									av = a[p*m+i]
								}
								if tb {
									bv = b[j*k+p]
								}
								s += float64(av) * float64(bv)
							}
							s *= float64(alpha)
							switch ck {
							case 1:
								s += float64(beta) * float64(c[0])
							case 2:
								s += float64(beta) * float64(c[j])
							case 3:
								s += float64(beta) * float64(c[i])
							case 4:
								s += float64(beta) * float64(c[i*n+j])
							}
							want[i*n+j] = s
						}
					}
					near(t, "gemm", y, want)
				}
			}
		}
	}
}

func TestPool2D(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	type cs struct{ nc, h, w, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr int }
	for _, k := range []cs{
		{3, 8, 8, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0},
		{2, 7, 9, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},
		{1, 25, 5, 25, 5, 25, 5, 1, 1, 0, 0, 0, 0},
		{2, 6, 7, 2, 3, 1, 2, 2, 1, 0, 1, 1, 0},
	} {
		oh := (k.h+k.pt+k.pb-(k.dh*(k.kh-1)+1))/k.sh + 1
		ow := (k.w+k.pl+k.pr-(k.dw*(k.kw-1)+1))/k.sw + 1
		x := randF32(r, k.nc*k.h*k.w)
		for _, mode := range []int{0, 1, 2} { // max, avg, avg counting pads
			y := make([]float32, k.nc*oh*ow)
			pool2d(y, x, mode > 0, mode == 2, k.nc, k.h, k.w, oh, ow, k.kh, k.kw, k.sh, k.sw, k.dh, k.dw, k.pt, k.pl, k.h+k.pb, k.w+k.pr)
			want := make([]float64, len(y))
			for q := 0; q < k.nc; q++ {
				for oy := 0; oy < oh; oy++ {
					for ox := 0; ox < ow; ox++ {
						mx, s, cnt, all := math.Inf(-1), 0.0, 0, 0
						for ky := 0; ky < k.kh; ky++ {
							for kx := 0; kx < k.kw; kx++ {
								iy, ix := oy*k.sh-k.pt+ky*k.dh, ox*k.sw-k.pl+kx*k.dw
								all++
								if iy < 0 || iy >= k.h || ix < 0 || ix >= k.w {
									continue
								}
								v := float64(x[(q*k.h+iy)*k.w+ix])
								mx, s, cnt = math.Max(mx, v), s+v, cnt+1
							}
						}
						o := mx
						if mode == 1 {
							o = s / float64(cnt)
						} else if mode == 2 {
							o = s / float64(all)
						}
						want[(q*oh+oy)*ow+ox] = o
					}
				}
			}
			near(t, "pool2d", y, want)
		}
	}
	y := make([]float32, 2)
	globalAvg(y, []float32{1, 2, 3, 4, 5, 6}, 2, 3)
	near(t, "globalAvg", y, []float64{2, 5})
}

func TestUnary(t *testing.T) {
	x := []float32{-2, -0.5, 0, 0.25, 3}
	ref := map[int]func(float64) float64{
		opRelu:      func(v float64) float64 { return math.Max(v, 0) },
		opSigmoid:   func(v float64) float64 { return 1 / (1 + math.Exp(-v)) },
		opTanh:      math.Tanh,
		opClip:      func(v float64) float64 { return math.Min(math.Max(v, -1), 2) },
		opLeakyRelu: func(v float64) float64 { return map[bool]float64{true: v * -1, false: v}[v < 0] },
		opNeg:       func(v float64) float64 { return -v },
		opExp:       math.Exp,
		opSqrt:      math.Sqrt,
		opAbs:       math.Abs,
	}
	for op, f := range ref {
		y := append([]float32(nil), x...)
		unary(y, y, op, -1, 2) // in place
		want := make([]float64, len(x))
		for i, v := range x {
			want[i] = f(float64(v))
		}
		near(t, "unary", y, want)
	}
}

func TestBinary(t *testing.T) {
	r := rand.New(rand.NewSource(4))
	// y [2, 3, 4] = a [2, 1, 4] op b [3, 1]
	a, b := randF32(r, 8), randF32(r, 3)
	dims := [binRank]int{1, 1, 1, 2, 3, 4}
	sa := [binRank]int{0, 0, 0, 4, 0, 1}
	sb := [binRank]int{0, 0, 0, 0, 1, 0}
	ref := []func(x, z float64) float64{
		func(x, z float64) float64 { return x + z },
		func(x, z float64) float64 { return x - z },
		func(x, z float64) float64 { return x * z },
		func(x, z float64) float64 { return x / z },
		math.Max, math.Min,
	}
	for op, f := range ref {
		want := make([]float64, 24)
		for i := 0; i < 2; i++ {
			for j := 0; j < 3; j++ {
				for k := 0; k < 4; k++ {
					want[(i*3+j)*4+k] = f(float64(a[i*4+k]), float64(b[j]))
				}
			}
		}
		y := make([]float32, 24)
		binary(y, a, "", b, "", op, dims, sa, sb)
		near(t, "binary", y, want)
		binary(y, nil, blob(a), b, "", op, dims, sa, sb)
		near(t, "binary const a", y, want)
		binary(y, a, "", nil, blob(b), op, dims, sa, sb)
		near(t, "binary const b", y, want)
	}
}

func TestSoftmax(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	x := randF32(r, 3*7)
	for _, log := range []bool{false, true} {
		y := make([]float32, len(x))
		softmax(y, x, 3, 7, log)
		want := make([]float64, len(x))
		for row := 0; row < 3; row++ {
			s := 0.0
			for i := 0; i < 7; i++ {
				s += math.Exp(float64(x[row*7+i]))
			}
			for i := 0; i < 7; i++ {
				v := math.Exp(float64(x[row*7+i])) / s
				if log {
					v = math.Log(v)
				}
				want[row*7+i] = v
			}
		}
		near(t, "softmax", y, want)
	}
	y := make([]float32, 2)
	copyF32(y, blob([]float32{4, -1}))
	near(t, "copyF32", y, []float64{4, -1})
}

// TestNoAlloc: the kernels allocate nothing.
func TestNoAlloc(t *testing.T) {
	x, y := make([]float32, 64), make([]float32, 64)
	w := blob(make([]float32, 9))
	if n := testing.AllocsPerRun(3, func() {
		conv2d(y, x, w, "", 1, 1, 8, 8, 1, 3, 3, 6, 6, 1, 1, 1, 1, 0, 0, 1)
		pool2d(y, x, false, false, 1, 8, 8, 4, 4, 2, 2, 2, 2, 1, 1, 0, 0, 8, 8)
		softmax(y, x, 8, 8, true)
	}); n != 0 {
		t.Errorf("%v allocations per run", n)
	}
}

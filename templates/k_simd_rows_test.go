package templates

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The vector kernels (assembly where the build and CPU have it, else the
// twin) against float64 references, and against their pure-Go twins, on
// odd sizes with tails.

var vecSizes = []int{1, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 40, 63, 77, 100, 129}

func vecRand(r *rand.Rand, n int, scale float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32((r.Float64()*2 - 1) * scale)
	}
	return v
}

func TestVecExpGelu(t *testing.T) {
	for x := -90.0; x < 88.37; x += 0.01 {
		got, want := float64(vecExpGo(float32(x))), math.Exp(float64(float32(x)))
		if x < -87.3 {
			if got > 1.3e-38 {
				t.Fatalf("exp(%v) = %v, want about 0", x, got)
			}
			continue
		}
		if math.Abs(got-want) > 3e-7*want {
			t.Fatalf("exp(%v) = %v, want %v", x, got, want)
		}
	}
	for x := -12.0; x < 12; x += 0.001 {
		xf := float32(x)
		got, want := float64(vecGeluGo(xf)), vecGeluRef(float64(xf))
		if math.Abs(got-want) > vecGeluTol(x)*math.Abs(want)+1e-30 {
			t.Fatalf("gelu(%v) = %v, want %v (rel %v)", xf, got, want, math.Abs(got-want)/math.Abs(want))
		}
	}
}

func TestVecKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range vecSizes {
		// GELU: kernel against the twin and float64.
		x := vecRand(r, n, 6)
		y := append([]float32(nil), x...)
		gelu32(y)
		for i := range x {
			want := vecGeluRef(float64(x[i]))
			if d := math.Abs(float64(y[i]) - want); d > vecGeluTol(float64(x[i]))*math.Abs(want)+1e-30 {
				t.Fatalf("n=%d gelu(%v) = %v, want %v", n, x[i], y[i], want)
			}
		}
		// Exp and sum.
		e := make([]float32, n)
		sub := float32(0.7)
		s := expSum32(e, x, sub)
		var ws float64
		for i := range x {
			want := math.Exp(float64(x[i] - sub))
			ws += want
			if d := math.Abs(float64(e[i]) - want); d > 3e-7*want {
				t.Fatalf("n=%d exp(%v) = %v, want %v", n, x[i]-sub, e[i], want)
			}
		}
		if math.Abs(float64(s)-ws) > 1e-5*ws {
			t.Fatalf("n=%d expSum = %v, want %v", n, s, ws)
		}
		// Max, with the maximum in the tail and in the body.
		for _, at := range []int{0, n - 1, n / 2} {
			m := append([]float32(nil), x...)
			m[at] = 100
			if got := max32(m); got != 100 {
				t.Fatalf("n=%d max32 with 100 at %d = %v", n, at, got)
			}
		}
		// Bias and clamp.
		b := append([]float32(nil), x...)
		biasClamp(b, 0.5, -1, 2)
		for i := range x {
			if want := min(max(x[i]+0.5, -1), 2); b[i] != want {
				t.Fatalf("n=%d biasClamp(%v) = %v, want %v", n, x[i], b[i], want)
			}
		}
		// scale.
		sy := append([]float32(nil), x...)
		scale32(sy, 0.37)
		for i := range x {
			if want := x[i] * 0.37; sy[i] != want {
				t.Fatalf("n=%d scale(%v) = %v, want %v", n, x[i], sy[i], want)
			}
		}
		// mul: the float64 product rounded once, so exact bits.
		ma, mb := vecRand(r, n+5, 1), vecRand(r, n+3, 1)
		my := make([]float32, n)
		mul32(my, ma[5:], mb)
		for i := range my {
			if want := float32(float64(ma[5+i]) * float64(mb[i])); my[i] != want {
				t.Fatalf("n=%d mul[%d] = %v, want %v", n, i, my[i], want)
			}
		}
		// mulRows16: n rows of 16, each times its scalar.
		rs, rx := vecRand(r, n, 1), vecRand(r, 16*n+1, 1)
		ry := make([]float32, 16*n)
		mulRows16(ry, rx[1:], rs)
		for i := range ry {
			if want := float32(float64(rx[1+i]) * float64(rs[i/16])); ry[i] != want {
				t.Fatalf("n=%d mulRows16[%d] = %v, want %v", n, i, ry[i], want)
			}
		}
		// axpy.
		ay := vecRand(r, n, 1)
		ax := vecRand(r, n+3, 1)
		aw := append([]float32(nil), ay...)
		axpy32(ay, ax, -0.75)
		for i := range aw {
			want := float64(aw[i]) - 0.75*float64(ax[i])
			if math.Abs(float64(ay[i])-want) > 1e-6 {
				t.Fatalf("n=%d axpy[%d] = %v, want %v", n, i, ay[i], want)
			}
		}
		// Depthwise row: nine sources of different offsets.
		var src [9][]float32
		var w [9]float32
		for k := range src {
			src[k] = vecRand(r, n+k, 1)[k:]
			w[k] = float32(r.Float64() - 0.5)
		}
		d, dg := make([]float32, n), make([]float32, n)
		dwConv9(d, &src, &w, 0.25, -0.5, 0.5)
		dwConv9Go(dg, &src, 0, &w, 0.25, -0.5, 0.5)
		for i := range d {
			acc := 0.25
			for k := range src {
				acc += float64(w[k]) * float64(src[k][i])
			}
			want := math.Min(math.Max(acc, -0.5), 0.5)
			if math.Abs(float64(d[i])-want) > 1e-6 || math.Abs(float64(dg[i])-want) > 1e-6 {
				t.Fatalf("n=%d dwConv9[%d] = %v (twin %v), want %v", n, i, d[i], dg[i], want)
			}
		}
	}
}

// vecGeluTol is the GELU kernels' relative error bound: 1e-6 near 0; for
// negative x it grows with the float32 rounding of exp's argument (about
// -x*x/2, whose ulp is 1e-6 near 16), where |gelu| is small anyway
// (4e-3 at -3, 1e-8 at -6).
func vecGeluTol(x float64) float64 { return 1e-6 * max(1, x*x/4) }

// vecGeluRef is GELU through erfc, accurate for negative x too.
func vecGeluRef(x float64) float64 { return 0.5 * x * math.Erfc(-x/math.Sqrt2) }

// NaN passes through the clamp kernels, as through Go's min and max.
func TestVecClampNaN(t *testing.T) {
	y := make([]float32, 19)
	nan := float32(math.NaN())
	y[3], y[17] = nan, nan
	biasClamp(y, 1, 0, 6)
	if !math.IsNaN(float64(y[3])) || !math.IsNaN(float64(y[17])) || y[0] != 1 {
		t.Fatalf("biasClamp: %v", y)
	}
}

// Softmax's float32 row path (vector max, exp-and-sum, scale), serial and
// over a pool, against float64 on odd row lengths.
func TestSoftmaxRows32(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	pool := NewWorkPool(WithThreads(3))
	defer pool.Close()
	for _, dim := range []int{1, 7, 8, 13, 77, 128} {
		rows := 300
		x := vecRand(r, rows*dim, 8)
		x64 := make([]float64, len(x))
		for i, v := range x {
			x64[i] = float64(v)
		}
		want := refSoftmax(x64, rows, dim, 1, "softmax")
		for _, p := range []*WorkPool{nil, pool} {
			X := &Tensor{DType: F32, Shape: []int{rows, dim}, Data: x}
			n := nnNode("Softmax", 13, Attrs{"axis": int64(-1)}, 1, X)
			n.Pool = p
			if err := Softmax(n); err != nil {
				t.Fatal(err)
			}
			for i, g := range n.Out[0].F32() {
				if math.Abs(float64(g)-want[i]) > 1e-6*want[i]+1e-7 {
					t.Fatalf("dim %d: y[%d] = %v, want %v", dim, i, g, want[i])
				}
			}
		}
	}
}

// TestVecNormKernels checks the layer norm kernels (sums, squared
// deviations, the affine pass) against float64 on odd sizes.
func TestVecNormKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range vecSizes {
		a, b, s, sh := vecRand(r, n, 3), vecRand(r, n, 3), vecRand(r, n, 2), vecRand(r, n, 1)
		yG := make([]float32, n+17)
		for i := range yG {
			yG[i] = 7
		}
		y := yG[:n]
		var want, abs float64
		for i := range a {
			v := a[i] + b[i]
			want += float64(v)
			abs += math.Abs(float64(v))
		}
		if got := addSum32(y, a, b); math.Abs(float64(got)-want) > 1e-6*abs+1e-6 {
			t.Fatalf("n=%d addSum = %v, want %v", n, got, want)
		}
		for i := n; i < len(yG); i++ {
			if yG[i] != 7 {
				t.Fatalf("n=%d addSum wrote past the row at %d", n, i)
			}
		}
		for i := range y {
			if y[i] != a[i]+b[i] {
				t.Fatalf("n=%d addSum y[%d] = %v, want %v", n, i, y[i], a[i]+b[i])
			}
		}
		if got := sum32(y); math.Abs(float64(got)-want) > 1e-6*abs+1e-6 {
			t.Fatalf("n=%d sum = %v, want %v", n, got, want)
		}
		mean := float32(want / float64(n))
		var ss float64
		for _, v := range y {
			d := float64(v) - float64(mean)
			ss += d * d
		}
		if got := sumSqDev32(y, mean); math.Abs(float64(got)-ss) > 1e-6*ss+1e-6 {
			t.Fatalf("n=%d sumSqDev = %v, want %v", n, got, ss)
		}
		inv := float32(1.3)
		for _, bias := range [][]float32{sh, nil} {
			// out has sentinels past n: the masked tail must not write them.
			outG, twin := make([]float32, n+17), make([]float32, n)
			for i := range outG {
				outG[i] = 7
			}
			out := outG[:n]
			normAffine32(out, y, s, bias, mean, inv)
			for i := n; i < len(outG); i++ {
				if outG[i] != 7 {
					t.Fatalf("n=%d normAffine wrote past the row at %d", n, i)
				}
			}
			normAffineGo(twin, y, s, bias, mean, inv)
			for i := range out {
				w := (float64(y[i]) - float64(mean)) * float64(inv) * float64(s[i])
				if bias != nil {
					w += float64(bias[i])
				}
				if math.Abs(float64(out[i])-w) > 1e-6*(math.Abs(w)+1) || math.Abs(float64(twin[i])-w) > 1e-6*(math.Abs(w)+1) {
					t.Fatalf("n=%d normAffine y[%d] = %v (twin %v), want %v", n, i, out[i], twin[i], w)
				}
			}
		}
	}
}

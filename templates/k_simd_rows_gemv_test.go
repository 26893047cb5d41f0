package templates

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// dot4x32 and lstmGates32 (assembly where the build and CPU have it)
// against float64 references and their twins, on odd sizes with tails.

// dot4Exact is sum_p a[p]*b[p] for p in [0, len(a)), exactly (each
// float32 product is exact in float64; the sum is taken in big.Float),
// and sum_p |a[p]*b[p]|.
func dot4Exact(a, b []float32) (sum, mag float64) {
	acc := new(big.Float).SetPrec(2048)
	for p := range a {
		v := float64(a[p]) * float64(b[p])
		acc.Add(acc, new(big.Float).SetFloat64(v))
		mag += math.Abs(v)
	}
	sum, _ = acc.Float64()
	return sum, mag
}

// dot4Tol is how far a dot product summed in float64 and rounded once to
// float32 may be from the exact sum: the final rounding (half a float32
// ulp, 6e-8 relative) plus float64 summation error (k*2^-53*mag at worst,
// far less in practice). A float32 accumulator is off by about 6e-8*mag
// per step and fails it on cancelling data.
func dot4Tol(want, mag float64) float64 { return 1.2e-7*math.Abs(want) + 1e-12*mag + 1e-37 }

func dot4Check(t *testing.T, name string, a, b []float32, ldb int) {
	t.Helper()
	k := len(a)
	var got, twin [4]float32
	dot4x32(a, b, ldb, &got)
	dot4Go(a, b, ldb, &twin)
	for q := range 4 {
		want, mag := dot4Exact(a, b[q*ldb:q*ldb+k])
		for _, g := range []float32{got[q], twin[q]} {
			if d := math.Abs(float64(g) - want); d > dot4Tol(want, mag) {
				t.Fatalf("%s k=%d ldb=%d row %d: dot = %v (twin %v), want %v (off %.3g, tolerance %.3g)",
					name, k, ldb, q, got[q], twin[q], want, d, dot4Tol(want, mag))
			}
		}
	}
}

func TestDot4(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, k := range append(vecSizes, 4099) {
		for _, pad := range []int{0, 3} {
			ldb := k + pad
			a := vecRand(r, k, 1)
			b := vecRand(r, 3*ldb+k, 1)
			dot4Check(t, "random", a, b, ldb)
		}
	}
}

// TestDot4Cancel sums long, ill-conditioned dot products: the first half
// of the terms are large (about 1e4) and positive, the second half nearly
// cancels them (same a, b negated and nudged by about 1e-3), so the
// running sum climbs to about 2e7 and the result is a few units. Summed
// in float32 the result is off by several units; in float64 it is
// within a float32 rounding.
func TestDot4Cancel(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, k := range []int{4099, 4096, 1029} {
		for _, pad := range []int{0, 3} {
			ldb := k + pad
			half := k / 2
			a := make([]float32, k)
			b := make([]float32, 3*ldb+k)
			for p := range half {
				a[p] = float32(100 * (1 + r.Float64()))
				a[half+p] = a[p]
			}
			if k%2 == 1 {
				a[k-1] = 1
			}
			for q := range 4 {
				row := b[q*ldb : q*ldb+k]
				for p := range half {
					row[p] = float32(100 * (1 + r.Float64()))
					row[half+p] = -row[p] + float32((r.Float64()*2-1)*1e-3)
				}
				if k%2 == 1 {
					row[k-1] = 0.75
				}
				// The case has to be one a float32 accumulator gets wrong.
				var s32 float32
				for p := range k {
					s32 += a[p] * row[p]
				}
				want, mag := dot4Exact(a, row)
				if d := math.Abs(float64(s32) - want); d <= 10*dot4Tol(want, mag) {
					t.Fatalf("k=%d row %d: float32 sum %v is within %.3g of %v: not ill-conditioned enough", k, q, s32, d, want)
				}
			}
			dot4Check(t, "cancel", a, b, ldb)
		}
	}
}

func TestLSTMGates(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	sig := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	for _, hs := range vecSizes {
		g := vecRand(r, 4*hs, 8)
		g[0] = 100 // saturated gates
		g[4*hs-1] = -100
		c0 := vecRand(r, hs, 3)
		c, h := append([]float32(nil), c0...), make([]float32, hs)
		ct, ht := append([]float32(nil), c0...), make([]float32, hs)
		lstmGates32(g, c, h)
		lstmGatesGo(g, ct, ht)
		for u := range hs {
			i, o, f, z := float64(g[u]), float64(g[hs+u]), float64(g[2*hs+u]), float64(g[3*hs+u])
			cw := sig(f)*float64(c0[u]) + sig(i)*math.Tanh(z)
			hw := sig(o) * math.Tanh(cw)
			for _, p := range [][2]float32{{c[u], h[u]}, {ct[u], ht[u]}} {
				if math.Abs(float64(p[0])-cw) > 1e-6*(1+math.Abs(cw)) || math.Abs(float64(p[1])-hw) > 1e-6 {
					t.Fatalf("hs=%d u=%d: c, h = %v, %v (asm %v, %v), want %v, %v", hs, u, p[0], p[1], c[u], h[u], cw, hw)
				}
			}
		}
	}
}

// TestSgemvRowTransB checks the batch-1 product with B transposed on both
// of its paths: alpha 1 with beta 0 or 1 on the vector row kernels
// (gemvRows32, float32 sums: tolerance k ulps of the sum of |terms|), the
// rest on dot4x32 (float64 sums).
func TestSgemvRowTransB(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{1, 3, 4, 5, 10, 13, 37} {
		for _, k := range []int{1, 7, 8, 9, 17, 33, 130, 577} {
			ldb := k + 2
			a := vecRand(r, k, 1)
			b := vecRand(r, n*ldb, 1)
			c0 := vecRand(r, n, 1)
			for _, alpha := range []float32{1, 1.5} {
				for _, beta := range []float32{0, 1, 0.5} {
					c := append([]float32(nil), c0...)
					sgemvRow(true, n, k, alpha, a, b, ldb, beta, c)
					for j := range n {
						var want, abs float64
						for p := range k {
							want += float64(a[p]) * float64(b[j*ldb+p])
							abs += math.Abs(float64(a[p]) * float64(b[j*ldb+p]))
						}
						want = float64(alpha)*want + float64(beta)*float64(c0[j])
						if tol := float64(k)*6e-8*abs + 1e-6; math.Abs(float64(c[j])-want) > tol {
							t.Fatalf("n=%d k=%d alpha=%v beta=%v: c[%d] = %v, want %v (tolerance %.2g)", n, k, alpha, beta, j, c[j], want, tol)
						}
					}
				}
			}
		}
	}
}

// TestGemvRows checks gemvRows32 (float32 sums; AVX-512 or AVX2 where the
// CPU has it), each assembly kernel the CPU has called directly, and the twin against exact dot products on odd row counts, lengths
// and row strides: each result within a float32 accumulation's error,
// k*2^-24 of the sum of |terms| (plus what y held before).
func TestGemvRows(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, n := range []int{1, 3, 4, 7, 64, 257} {
		for _, k := range []int{1, 15, 16, 17, 33, 64, 100} {
			for _, pad := range []int{0, 5} {
				lda := k + pad
				x := vecRand(r, k, 1)
				a := vecRand(r, (n-1)*lda+k, 1)
				y0 := vecRand(r, n, 1)
				got := append([]float32(nil), y0...)
				twin := append([]float32(nil), y0...)
				gemvRows32(got, x, a, lda)
				gemvRowsGo(twin, x, a, lda)
				direct := gemvRowsDirect(y0, x, a, lda) // each assembly kernel, whatever the dispatch picks
				for j := range n {
					want, mag := dot4Exact(x, a[j*lda:j*lda+k])
					want += float64(y0[j])
					tol := float64(k+2)*0x1p-24*(mag+math.Abs(float64(y0[j]))) + 1e-30
					gs := []float32{got[j], twin[j]}
					for _, d := range direct {
						gs = append(gs, d[j])
					}
					for _, g := range gs {
						if d := math.Abs(float64(g) - want); d > tol {
							t.Fatalf("n=%d k=%d lda=%d row %d: got %v (twin %v), want %v (off %.3g, tolerance %.3g)",
								n, k, lda, j, got[j], twin[j], want, d, tol)
						}
					}
				}
			}
		}
	}
}

// BenchmarkGemvRows is an LSTM step's recurrent product at hidden size 64
// (R [256, 64], 64 KB: L2-resident across the steps).
func BenchmarkGemvRows(b *testing.B) {
	hs, gh := 64, 256
	a := make([]float32, gh*hs)
	x := make([]float32, hs)
	y := make([]float32, gh)
	for i := range a {
		a[i] = float32(i%7) * 0.01
	}
	b.Run("gemvRows32", func(b *testing.B) {
		for range b.N {
			gemvRows32(y, x, a, hs)
		}
	})
	b.Run("sgemvRow", func(b *testing.B) {
		for range b.N {
			sgemvRow(true, gh, hs, 1, x, a, hs, 1, y)
		}
	})
}

// TestSgemvRowNoTrans checks the batch-1 product with B as stored [k, n]
// (rows of B scaled by a[p] and added, axpy32) against float64 sums.
func TestSgemvRowNoTrans(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{1, 3, 7, 8, 9, 17, 40, 1001} {
		for _, k := range []int{1, 2, 5, 33} {
			ldb := n + 3
			a := vecRand(r, k, 1)
			b := vecRand(r, k*ldb, 1)
			c0 := vecRand(r, n, 1)
			for _, alpha := range []float32{1, -0.75} {
				for _, beta := range []float32{0, 1, 0.5} {
					c := append([]float32(nil), c0...)
					sgemvRow(false, n, k, alpha, a, b, ldb, beta, c)
					for j := range n {
						var want, abs float64
						for p := range k {
							want += float64(a[p]) * float64(b[p*ldb+j])
							abs += math.Abs(float64(a[p]) * float64(b[p*ldb+j]))
						}
						want = float64(alpha)*want + float64(beta)*float64(c0[j])
						if tol := float64(k+2)*1.2e-7*(abs+math.Abs(float64(c0[j]))) + 1e-7; math.Abs(float64(c[j])-want) > tol {
							t.Fatalf("n=%d k=%d alpha=%v beta=%v: c[%d] = %v, want %v (tolerance %.2g)", n, k, alpha, beta, j, c[j], want, tol)
						}
					}
				}
			}
		}
	}
}

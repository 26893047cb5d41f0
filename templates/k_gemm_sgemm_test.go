package templates

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
)

// sgemmPkRef computes alpha*op(A)*op(B) + beta*C in float64, and for each
// element a bound on the float32 rounding error of any summation order:
// (k+2) * eps32 * (|alpha| * sum_p |a||b| + |beta*c|).
func sgemmPkRef(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) (want, tol []float64) {
	want = make([]float64, m*n)
	tol = make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s, abs float64
			for p := 0; p < k; p++ {
				var av, bv float64
				if transA {
					av = float64(a[p*lda+i])
				} else {
					av = float64(a[i*lda+p])
				}
				if transB {
					bv = float64(b[j*ldb+p])
				} else {
					bv = float64(b[p*ldb+j])
				}
				s += av * bv
				abs += math.Abs(av * bv)
			}
			v := float64(alpha) * s
			abs *= math.Abs(float64(alpha))
			if beta != 0 {
				v += float64(beta) * float64(c[i*ldc+j])
				abs += math.Abs(float64(beta) * float64(c[i*ldc+j]))
			}
			want[i*n+j] = v
			tol[i*n+j] = float64(k+2)*0x1p-23*abs + 1e-30
		}
	}
	return want, tol
}

func sgemmPkRandom(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(r.Float64()*2 - 1)
	}
	return s
}

// sgemmPkCheck compares c (m x n inside stride ldc) with the reference and
// checks the padding columns past n still hold their sentinel.
func sgemmPkCheck(t *testing.T, name string, m, n int, c []float32, ldc int, want, tol []float64, pad float32) {
	t.Helper()
	bad := 0
	for i := 0; i < m; i++ {
		for j := 0; j < ldc; j++ {
			got := c[i*ldc+j]
			if j >= n {
				if got != pad && !(math.IsNaN(float64(got)) && math.IsNaN(float64(pad))) {
					t.Errorf("%s: C[%d][%d] (padding past n=%d) changed to %v", name, i, j, n, got)
					return
				}
				continue
			}
			w := want[i*n+j]
			if d := math.Abs(float64(got) - w); !(d <= tol[i*n+j]) {
				if bad++; bad <= 3 {
					t.Errorf("%s: C[%d][%d] = %v, want %v (tolerance %.3g)", name, i, j, got, w, tol[i*n+j])
				}
			}
		}
	}
	if bad > 3 {
		t.Errorf("%s: %d elements wrong", name, bad)
	}
}

type sgemmPkCase struct {
	transA, transB bool
	m, n, k        int
	alpha, beta    float32
	extra          int // added to lda, ldb and ldc
}

func (tc sgemmPkCase) String() string {
	return fmt.Sprintf("tA=%v tB=%v m=%d n=%d k=%d alpha=%v beta=%v extra=%d", tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.alpha, tc.beta, tc.extra)
}

// run checks sgemmPacked and both prepacked variants on one case.
func (tc sgemmPkCase) run(t *testing.T, r *rand.Rand) {
	t.Helper()
	m, n, k := tc.m, tc.n, tc.k
	lda := k + tc.extra
	arows := m
	if tc.transA {
		lda, arows = m+tc.extra, k
	}
	ldb := n + tc.extra
	brows := k
	if tc.transB {
		ldb, brows = k+tc.extra, n
	}
	ldc := n + tc.extra
	a := sgemmPkRandom(r, max(arows*lda, 1))
	b := sgemmPkRandom(r, max(brows*ldb, 1))
	c0 := sgemmPkRandom(r, m*ldc)
	pad := float32(-7.25)
	if tc.beta == 0 {
		// beta == 0 must not read C: NaNs there must vanish.
		pad = float32(math.NaN())
		for i := range c0 {
			c0[i] = pad
		}
	} else {
		for i := 0; i < m; i++ {
			for j := n; j < ldc; j++ {
				c0[i*ldc+j] = pad
			}
		}
	}
	want, tol := sgemmPkRef(tc.transA, tc.transB, m, n, k, tc.alpha, a, lda, b, ldb, tc.beta, c0, ldc)

	c := append([]float32(nil), c0...)
	sgemmPacked(tc.transA, tc.transB, m, n, k, tc.alpha, a, lda, b, ldb, tc.beta, c, ldc)
	sgemmPkCheck(t, "sgemmPacked "+tc.String(), m, n, c, ldc, want, tol, pad)

	bp := sgemmPackB(tc.transB, k, n, b, ldb)
	c = append(c[:0], c0...)
	sgemmPrepackedB(tc.transA, m, n, k, tc.alpha, a, lda, bp, tc.beta, c, ldc)
	sgemmPkCheck(t, "sgemmPrepackedB "+tc.String(), m, n, c, ldc, want, tol, pad)

	ap := sgemmPackA(tc.transA, m, k, a, lda)
	c = append(c[:0], c0...)
	sgemmPrepackedA(tc.transB, m, n, k, tc.alpha, ap, b, ldb, tc.beta, c, ldc)
	sgemmPkCheck(t, "sgemmPrepackedA "+tc.String(), m, n, c, ldc, want, tol, pad)

	c = append(c[:0], c0...)
	sgemmDrive(nil, m, n, k, tc.alpha, sgemmOperand{data: ap, packed: true}, sgemmOperand{data: bp, packed: true}, tc.beta, c, ldc)
	sgemmPkCheck(t, "sgemmDrive both prepacked "+tc.String(), m, n, c, ldc, want, tol, pad)
}

func TestSgemmPackedSmall(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	ms := []int{1, 2, 5, 6, 7, 11, 13, 23, 37, 70}
	ns := []int{1, 3, 8, 15, 16, 17, 31, 47, 70}
	ks := []int{1, 2, 3, 4, 7, 29, 64, 70}
	ab := [][2]float32{{1, 0}, {1, 1}, {-0.75, 0.5}, {2.5, -1}, {1, 0.25}, {0.5, 0}}
	cases := 0
	for _, m := range ms {
		for _, n := range ns {
			for _, k := range ks {
				for tr := 0; tr < 4; tr++ {
					v := ab[cases%len(ab)]
					tc := sgemmPkCase{transA: tr&1 != 0, transB: tr&2 != 0, m: m, n: n, k: k, alpha: v[0], beta: v[1], extra: cases % 3}
					tc.run(t, r)
					cases++
					if t.Failed() {
						return
					}
				}
			}
		}
	}
	t.Logf("%d cases", cases)
}

// TestSgemmPackedBlocks crosses the MC, KC and NC block edges.
func TestSgemmPackedBlocks(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	for _, tc := range []sgemmPkCase{
		{m: sgemmPkMC + 7, n: 33, k: sgemmPkKC + 1, alpha: 1, beta: 0},
		{transA: true, m: 2*sgemmPkMC + 1, n: 21, k: 2*sgemmPkKC + 3, alpha: -1.5, beta: 0.5, extra: 2},
		{transB: true, m: 13, n: sgemmPkNC + 17, k: sgemmPkKC + 5, alpha: 0.5, beta: 1, extra: 1},
		{m: 19, n: 45, k: 4*sgemmPkKC + 1, alpha: 1, beta: 0.5}, // 5 blocks of 208 and 193
		{transA: true, transB: true, m: sgemmPkMC + 1, n: sgemmPkNC + 3, k: 37, alpha: 1, beta: -2},
	} {
		tc.run(t, r)
	}
}

// TestSgemmPackedDegenerate covers alpha == 0 and k == 0 (C = beta*C) and
// empty outputs.
func TestSgemmPackedDegenerate(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for _, tc := range []sgemmPkCase{
		{m: 7, n: 19, k: 0, alpha: 1, beta: 0.5},
		{m: 7, n: 19, k: 0, alpha: 1, beta: 0},
		{m: 9, n: 5, k: 13, alpha: 0, beta: -1},
		{m: 9, n: 5, k: 13, alpha: 0, beta: 0},
		{m: 9, n: 5, k: 13, alpha: 0, beta: 1, extra: 2},
	} {
		tc.run(t, r)
	}
	sgemmPacked(false, false, 0, 5, 3, 1, nil, 3, make([]float32, 15), 5, 0, nil, 5)
	sgemmPacked(false, false, 4, 0, 3, 1, make([]float32, 12), 3, nil, 0, 0, nil, 0)
}

// TestSgemmMicroGo checks the pure-Go micro-kernel twin, which the assembly
// kernels are compared with, against the float64 reference.
func TestSgemmMicroGo(t *testing.T) {
	r := rand.New(rand.NewSource(4))
	for _, kc := range []int{1, 5, 64} {
		for _, mr := range []int{1, 4, 6} {
			for _, nr := range []int{1, 9, 16} {
				for _, beta := range []float32{0, 1, -0.5} {
					const ldc = 21
					a := sgemmPkRandom(r, kc*sgemmPkMR)
					b := sgemmPkRandom(r, kc*sgemmPkNR)
					c := sgemmPkRandom(r, sgemmPkMR*ldc)
					// Reference on the packed panels: A is mr x kc with
					// stride 6 when read transposed, B kc x 16.
					want, tol := sgemmPkRef(true, false, mr, nr, kc, 1.5, a, sgemmPkMR, b, sgemmPkNR, beta, c, ldc)
					c0 := append([]float32(nil), c...)
					sgemmMicroGo(kc, a, b, c, ldc, 1.5, beta, mr, nr)
					name := fmt.Sprintf("kc=%d mr=%d nr=%d beta=%v", kc, mr, nr, beta)
					for i := 0; i < sgemmPkMR; i++ {
						for j := 0; j < ldc; j++ {
							got := c[i*ldc+j]
							if i >= mr || j >= nr {
								if got != c0[i*ldc+j] {
									t.Fatalf("%s: C[%d][%d] outside the tile changed", name, i, j)
								}
								continue
							}
							if d := math.Abs(float64(got) - want[i*nr+j]); !(d <= tol[i*nr+j]) {
								t.Fatalf("%s: C[%d][%d] = %v, want %v", name, i, j, got, want[i*nr+j])
							}
						}
					}
				}
			}
		}
	}
}

func benchmarkSgemm(b *testing.B, m, n, k int, prepackA bool) {
	r := rand.New(rand.NewSource(5))
	a := sgemmPkRandom(r, m*k)
	bm := sgemmPkRandom(r, k*n)
	c := make([]float32, m*n)
	ap := sgemmPackA(false, m, k, a, k)
	sgemmPacked(false, false, m, n, k, 1, a, k, bm, n, 0, c, n) // warm the pools
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if prepackA {
			sgemmPrepackedA(false, m, n, k, 1, ap, bm, n, 0, c, n)
		} else {
			sgemmPacked(false, false, m, n, k, 1, a, k, bm, n, 0, c, n)
		}
	}
	reportSgemmRate(b, m, n, k)
}

// sgemmPeak returns the measured FMA peak of one core in GFLOP/s for the
// SGEMM driver's instruction set (asm_fmapeak_amd64_test.go); nil where
// there is no assembly.
var sgemmPeak func() float64

// reportSgemmRate reports an m x n x k SGEMM benchmark's GFLOP/s and, where
// the FMA peak is known, its share of it (%peak).
func reportSgemmRate(b *testing.B, m, n, k int) {
	rate := 2 * float64(m) * float64(n) * float64(k) * float64(b.N) / b.Elapsed().Seconds() / 1e9
	b.ReportMetric(rate, "GFLOP/s")
	if sgemmPeak != nil && sgemmUseAsm {
		b.StopTimer()
		b.ReportMetric(100*rate/sgemmPeak(), "%peak")
	}
}

// BenchmarkSgemm256x3136x1152 is the im2col GEMM of a 3x3 convolution with
// 128 input and 256 output channels on a 56x56 image.
func BenchmarkSgemm256x3136x1152(b *testing.B) { benchmarkSgemm(b, 256, 3136, 1152, false) }

// BenchmarkSgemmPrepackedA256x3136x1152 is the same with the weights (A)
// packed ahead of time, as gen will do for constant weights.
func BenchmarkSgemmPrepackedA256x3136x1152(b *testing.B) {
	benchmarkSgemm(b, 256, 3136, 1152, true)
}

// BenchmarkSgemmPrepackedAB256x3136x1152 has both operands packed ahead of
// time: the micro-kernel and C traffic alone, the ceiling for a convolution
// whose im2col writes packed B panels directly.
func BenchmarkSgemmPrepackedAB256x3136x1152(b *testing.B) {
	const m, n, k = 256, 3136, 1152
	r := rand.New(rand.NewSource(5))
	ap := sgemmPackA(false, m, k, sgemmPkRandom(r, m*k), k)
	bp := sgemmPackB(false, k, n, sgemmPkRandom(r, k*n), n)
	c := make([]float32, m*n)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sgemmDrive(nil, m, n, k, 1, sgemmOperand{data: ap, packed: true}, sgemmOperand{data: bp, packed: true}, 0, c, n)
	}
	reportSgemmRate(b, m, n, k)
}

func BenchmarkSgemm64x64x64(b *testing.B) { benchmarkSgemm(b, 64, 64, 64, false) }

// BenchmarkSgemmPackBBlock packs the B blocks of the 256x3136x1152 GEMM,
// the packing share of BenchmarkSgemm256x3136x1152.
func BenchmarkSgemmPackBBlock(b *testing.B) {
	const k, n = 1152, 3136
	r := rand.New(rand.NewSource(8))
	bm := sgemmPkRandom(r, k*n)
	dst := make([]float32, sgemmPkKC*sgemmPkNC)
	b.SetBytes(k * n * 4)
	for i := 0; i < b.N; i++ {
		for pc, kb := 0, sgemmKBlock(k); pc < k; pc += kb {
			sgemmPackBBlock(dst, false, bm, n, pc, 0, min(kb, k-pc), n)
		}
	}
}

// TestSgemmPackA6 checks sgemmPackA6 (the AVX transpose on multiples of 8
// k steps, the Go twin on the rest) against the definition on awkward kc
// and row strides, and that it writes nothing past the panel.
func TestSgemmPackA6(t *testing.T) {
	for _, kc := range []int{1, 7, 8, 9, 15, 16, 23, 64, 96, 100, 256} {
		for _, lda := range []int{kc, kc + 3, 768} {
			a := make([]float32, 5*lda+kc)
			for i := range a {
				a[i] = float32(i)*0.25 - 7
			}
			dst := make([]float32, 6*kc+9)
			for i := range dst {
				dst[i] = -99
			}
			sgemmPackA6(kc, a, lda, dst)
			for p := 0; p < kc; p++ {
				for i := 0; i < 6; i++ {
					if got, want := dst[p*6+i], a[i*lda+p]; got != want {
						t.Fatalf("kc=%d lda=%d: dst[%d*6+%d] = %v, want %v", kc, lda, p, i, got, want)
					}
				}
			}
			for i, v := range dst[6*kc:] {
				if v != -99 {
					t.Fatalf("kc=%d lda=%d: wrote past the panel at %d", kc, lda, 6*kc+i)
				}
			}
		}
	}
}

package templates

import (
	"fmt"
	"math/rand"
	"testing"
)

// TestNHWCPWGemm checks nhwcPWGemm (the AVX-512 tiles where the CPU has
// them, else their Go twin) against a float64 reference on awkward sizes:
// A read linearly and through tap offsets, every epilogue flag, K over
// one k block, C contiguous and a channel slice of a wider row (ldc > M).
func TestNHWCPWGemm(t *testing.T) {
	r := rand.New(rand.NewSource(9))
	for _, M := range []int{8, 16, 24, 40, 64} {
		for _, K := range []int{3, 16, 27, 33, 300} {
			for _, m := range []int{1, 7, 13, 25} {
				for _, offs := range []bool{false, true} {
					for flags := 0; flags < 16; flags += 5 {
						for _, ldc := range []int{M, M + 13} {
							what := fmt.Sprintf("M=%d K=%d m=%d offs=%v flags=%d ldc=%d", M, K, m, offs, flags&^nhwcPWAccum, ldc)
							// flags 5 and 15 with the C and z prefetch.
							nhwcPWCheck(t, r, what, m, M, K, ldc, offs, flags&^nhwcPWAccum|(flags&1)*nhwcPWPrefetch)
						}
					}
				}
			}
		}
	}
}

func nhwcPWCheck(t *testing.T, r *rand.Rand, what string, m, M, K, ldc int, offs bool, flags int) {
	t.Helper()
	rnd := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = r.Float32()*2 - 1
		}
		return v
	}
	// A: linear rows of stride lda >= K, or rows 3 apart read through
	// scrambled offsets.
	lda := K + 5
	var off []int
	var a []float32
	at := func(row, p int) float32 { return a[row*lda+p] }
	if offs {
		lda = 3
		off = make([]int, K)
		for p := range off {
			off[p] = 4 * r.Intn(4*K)
		}
		a = rnd((m-1)*lda + 4*K)
		at = func(row, p int) float32 { return a[row*lda+off[p]/4] }
	} else {
		a = rnd((m-1)*lda + K)
	}
	w := rnd(K * M)
	wp := sgemmPackB(false, K, M, w, M)
	e := nhwcPWEpi{lo: -0.3, hi: 0.5, flags: flags}
	if flags&nhwcPWBias != 0 {
		e.bias = rnd(M)
	}
	if flags&nhwcPWZ != 0 {
		e.z = rnd(m * ldc)
	}
	c := rnd(m * ldc)
	c0 := append([]float32(nil), c...)
	nhwcPWGemm(m, M, K, a, lda, off, wp, c, ldc, &e)
	for i := 0; i < m; i++ {
		for j := 0; j < M; j++ {
			var v float64
			for p := 0; p < K; p++ {
				v += float64(at(i, p)) * float64(w[p*M+j])
			}
			if e.bias != nil {
				v += float64(e.bias[j])
			}
			if e.z != nil {
				v += float64(e.z[i*ldc+j])
			}
			if flags&nhwcPWClamp != 0 {
				v = min(max(v, float64(e.lo)), float64(e.hi))
			}
			if d := float64(c[i*ldc+j]) - v; d > 1e-4*float64(K) || d < -1e-4*float64(K) {
				t.Fatalf("%s: C[%d][%d] = %v, want %v", what, i, j, c[i*ldc+j], v)
			}
		}
		// Columns past M of a wider row stay as they were.
		for j := M; j < ldc && i < m-1; j++ {
			if c[i*ldc+j] != c0[i*ldc+j] {
				t.Fatalf("%s: C[%d][%d] past M written", what, i, j)
			}
		}
	}
}

// TestNHWCPWGemmCols checks that nhwcPWGemmCols over a column range gives
// exactly the bits of nhwcPWGemm in those columns and leaves the others
// alone (a split by columns equals a split by rows), over one and several
// k blocks and a masked last tile, A linear and through tap offsets.
func TestNHWCPWGemmCols(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	rnd := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = r.Float32()*2 - 1
		}
		return v
	}
	for _, M := range []int{40, 80, 136} {
		for _, K := range []int{27, 300, 600} {
			for _, m := range []int{5, 13, 49} {
				for _, offs := range []bool{false, true} {
					lda, a := K+3, rnd((m-1)*(K+3)+K)
					var off []int
					if offs {
						lda, off = 2, make([]int, K)
						for p := range off {
							off[p] = 4 * r.Intn(3*K)
						}
						a = rnd((m-1)*lda + 3*K)
					}
					wp := sgemmPackB(false, K, M, rnd(K*M), M)
					e := nhwcPWEpi{bias: rnd(M), z: rnd(m * M), lo: -0.3, hi: 0.5, flags: nhwcPWBias | nhwcPWZ | nhwcPWClamp | nhwcPWPrefetch}
					want := make([]float32, m*M)
					nhwcPWGemm(m, M, K, a, lda, off, wp, want, M, &e)
					for j0 := 0; j0 < M; j0 += 32 {
						for _, j1 := range []int{min(j0+32, M), M} {
							got := make([]float32, m*M)
							for i := range got {
								got[i] = 7
							}
							nhwcPWGemmCols(m, M, j0, j1, K, a, lda, off, wp, got, M, &e)
							for i := 0; i < m; i++ {
								for j := 0; j < M; j++ {
									w := want[i*M+j]
									if j < j0 || j >= j1 {
										w = 7
									}
									if got[i*M+j] != w {
										t.Fatalf("M=%d K=%d m=%d offs=%v cols [%d,%d): C[%d][%d] = %v, want %v", M, K, m, offs, j0, j1, i, j, got[i*M+j], w)
									}
								}
							}
						}
					}
				}
			}
		}
	}
}

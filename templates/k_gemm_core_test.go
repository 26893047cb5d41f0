package templates

import (
	"math"
	"math/rand"
	"testing"
)

func refGemm(transA, transB bool, m, n, k int, alpha float64, a []float32, lda int, b []float32, ldb int, beta float64, c []float32, ldc int) []float64 {
	out := make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			s := 0.0
			for p := 0; p < k; p++ {
				var av, bv float32
				if transA {
					av = a[p*lda+i]
				} else {
					av = a[i*lda+p]
				}
				if transB {
					bv = b[j*ldb+p]
				} else {
					bv = b[p*ldb+j]
				}
				s += float64(av) * float64(bv)
			}
			out[i*n+j] = alpha*s + beta*float64(c[i*ldc+j])
		}
	}
	return out
}

func randF32(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(r.Float64()*2 - 1)
		if s[i] == 0 {
			s[i] = 0.5
		}
	}
	return s
}

func TestSgemm(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	sizes := [][3]int{{1, 1, 1}, {3, 5, 7}, {4, 4, 4}, {13, 17, 9}, {65, 33, 300}, {70, 261, 5}, {129, 7, 513}, {5, 300, 1}}
	for _, sz := range sizes {
		m, n, k := sz[0], sz[1], sz[2]
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				for _, ab := range [][2]float32{{1, 0}, {0.5, 1}, {-1.5, 0.25}} {
					lda, ldb, ldc := k+1, n+2, n+3
					if ta {
						lda = m + 1
					}
					if tb {
						ldb = k + 2
					}
					arows, brows := m, k
					if ta {
						arows = k
					}
					if tb {
						brows = n
					}
					a := randF32(r, arows*lda)
					b := randF32(r, brows*ldb)
					c := randF32(r, m*ldc)
					want := refGemm(ta, tb, m, n, k, float64(ab[0]), a, lda, b, ldb, float64(ab[1]), c, ldc)
					sgemm(ta, tb, m, n, k, ab[0], a, lda, b, ldb, ab[1], c, ldc)
					for i := 0; i < m; i++ {
						for j := 0; j < n; j++ {
							if d := math.Abs(float64(c[i*ldc+j]) - want[i*n+j]); d > 1e-4*(1+math.Abs(want[i*n+j]))*math.Sqrt(float64(k)) {
								t.Fatalf("m%d n%d k%d ta%v tb%v ab%v: c[%d,%d]=%v want %v", m, n, k, ta, tb, ab, i, j, c[i*ldc+j], want[i*n+j])
							}
						}
					}
				}
			}
		}
	}
}

func TestSgemmNoAlloc(t *testing.T) {
	a := make([]float32, 64*64)
	b := make([]float32, 64*64)
	c := make([]float32, 64*64)
	sgemm(false, false, 64, 64, 64, 1, a, 64, b, 64, 0, c, 64)
	if n := testing.AllocsPerRun(5, func() { sgemm(false, true, 64, 64, 64, 1, a, 64, b, 64, 0, c, 64) }); n != 0 {
		t.Fatalf("sgemm allocates %v per run", n)
	}
}

func BenchmarkSgemm256(b *testing.B) {
	const n = 256
	r := rand.New(rand.NewSource(1))
	x, y, z := randF32(r, n*n), randF32(r, n*n), make([]float32, n*n)
	b.SetBytes(2 * n * n * n) // "bytes" = flops, so MB/s reads as MFLOPS
	for i := 0; i < b.N; i++ {
		sgemm(false, false, n, n, n, 1, x, n, y, n, 0, z, n)
	}
}

// TestSgemmSmallM checks the matrix-vector path (m <= 2) against a
// float64 reference on odd sizes.
func TestSgemmSmallM(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	for _, m := range []int{1, 2, 3} {
		for _, nk := range [][2]int{{1, 1}, {7, 13}, {33, 301}, {1000, 67}} {
			n, k := nk[0], nk[1]
			for _, transB := range []bool{false, true} {
				for _, beta := range []float32{0, 0.5} {
					a, b, c := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
					for i := range a {
						a[i] = r.Float32()*2 - 1
					}
					for i := range b {
						b[i] = r.Float32()*2 - 1
					}
					for i := range c {
						c[i] = r.Float32()
					}
					want := make([]float64, m*n)
					for i := 0; i < m; i++ {
						for j := 0; j < n; j++ {
							var s float64
							for p := 0; p < k; p++ {
								bv := b[p*n+j]
								if transB {
									bv = b[j*k+p]
								}
								s += float64(a[i*k+p]) * float64(bv)
							}
							want[i*n+j] = 1.5*s + float64(beta)*float64(c[i*n+j])
						}
					}
					ldb := n
					if transB {
						ldb = k
					}
					sgemm(false, transB, m, n, k, 1.5, a, k, b, ldb, beta, c, n)
					for i := range want {
						if math.Abs(float64(c[i])-want[i]) > 1e-4*(1+math.Abs(want[i])) {
							t.Fatalf("m=%d n=%d k=%d transB=%v beta=%v: C[%d] = %v, want %v", m, n, k, transB, beta, i, c[i], want[i])
						}
					}
				}
			}
		}
	}
}

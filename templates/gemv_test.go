package templates

import (
	"math"
	"math/rand"
	"testing"
)

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

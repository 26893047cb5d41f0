package templates

import (
	"fmt"
	"math/rand"
	"testing"
)

// TestSgemmDirectA runs the cases where sgemmDrive reads A in place
// (untransposed A, whole 32-column tiles) against the float64 reference,
// with every row tail (m mod 6), k across the KC blocks and B packed on
// the fly or prepacked, and wants the same bits as with A packed.
func TestSgemmDirectA(t *testing.T) {
	r := rand.New(rand.NewSource(21))
	cases := 0
	for _, m := range []int{1, 5, 6, 7, 8, 11, 12, 13, 14, 128, sgemmPkMC + 9} {
		for _, n := range []int{32, 64, 160} {
			for _, k := range []int{1, 3, 29, sgemmPkKC, 2*sgemmPkKC + 3} {
				v := [][2]float32{{1, 0}, {0.5, 1}, {-1.25, 0.5}}[cases%3]
				tc := sgemmPkCase{transB: cases%2 == 1, m: m, n: n, k: k, alpha: v[0], beta: v[1], extra: cases % 3}
				tc.run(t, r)
				cases++
				if t.Failed() {
					return
				}
				// Bits: A in place (sgemmPrepackedB) against A packed
				// (sgemmDrive with both prepacked).
				lda, ldb := k+tc.extra, n
				a, b := sgemmPkRandom(r, m*lda), sgemmPkRandom(r, k*n)
				bp := sgemmPackB(false, k, n, b, ldb)
				ap := sgemmPackA(false, m, k, a, lda)
				c1, c2 := make([]float32, m*n), make([]float32, m*n)
				sgemmPrepackedB(false, m, n, k, tc.alpha, a, lda, bp, 0, c1, n)
				sgemmDrive(nil, m, n, k, tc.alpha, sgemmOperand{data: ap, packed: true}, sgemmOperand{data: bp, packed: true}, 0, c2, n)
				for i := range c1 {
					if c1[i] != c2[i] {
						t.Fatalf("%v: c[%d] = %v with A in place, %v packed", tc, i, c1[i], c2[i])
					}
				}
			}
		}
	}
	t.Logf("%d cases", cases)
}

// TestSgemmMicroWideDirect checks the direct kernels of 1 to 6 rows and
// their pure-Go twin against the float64 reference; C's rows past the tile
// and its padding column must stay untouched.
func TestSgemmMicroWideDirect(t *testing.T) {
	r := rand.New(rand.NewSource(22))
	for _, kc := range []int{0, 1, 7, 64, 257} {
		for rows := 1; rows <= sgemmPkMR; rows++ {
			lda, ldc := kc+3, 2*sgemmPkNR+1
			a := sgemmPkRandom(r, rows*lda)
			b := sgemmPkRandom(r, kc*2*sgemmPkNR)
			b0, b1 := make([]float32, kc*sgemmPkNR), make([]float32, kc*sgemmPkNR)
			for p := 0; p < kc; p++ {
				copy(b0[p*sgemmPkNR:], b[p*2*sgemmPkNR:p*2*sgemmPkNR+sgemmPkNR])
				copy(b1[p*sgemmPkNR:], b[p*2*sgemmPkNR+sgemmPkNR:(p+1)*2*sgemmPkNR])
			}
			c0 := sgemmPkRandom(r, (rows+1)*ldc)
			for i := 0; i <= rows; i++ {
				c0[i*ldc+2*sgemmPkNR] = -7.25 // the padding column
			}
			want, tol := sgemmPkRef(false, false, rows, 2*sgemmPkNR, kc, 0.75, a, lda, b, 2*sgemmPkNR, 0.5, c0, ldc)
			for _, f := range []struct {
				name string
				run  func(kc, rows int, a []float32, lda int, b0, b1 []float32, c []float32, ldc int, alpha, beta float32)
			}{{"twin", sgemmMicroWideDirectGo}, {"kernel", sgemmMicroWideDirect}} {
				if f.name == "kernel" && !sgemmWide {
					continue
				}
				c := append([]float32(nil), c0...)
				f.run(kc, rows, a, lda, b0, b1, c, ldc, 0.75, 0.5)
				sgemmPkCheck(t, fmt.Sprintf("direct %s rows=%d kc=%d", f.name, rows, kc), rows, 2*sgemmPkNR, c, ldc, want, tol, -7.25)
				for j, v := range c[rows*ldc:] {
					if v != c0[rows*ldc+j] {
						t.Fatalf("direct %s rows=%d kc=%d: row %d past the tile changed", f.name, rows, kc, rows)
					}
				}
			}
		}
	}
}

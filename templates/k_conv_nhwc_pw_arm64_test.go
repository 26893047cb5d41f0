//go:build arm64 && !purego

package templates

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
)

// TestNHWCPWTileNEON compares every NEON tile (rows 1..6, row-major and
// gathered A) with the pure-Go twin and a float64 reference, for every
// width n of the last panel (1..16: the narrow ones through the local
// tile), every flag combination, k across a few lengths, and C, z rows of
// stride ldc > 16 whose columns past n must stay as they were.
func TestNHWCPWTileNEON(t *testing.T) {
	if !nhwcPWFast {
		t.Fatal("NEON tiles not chosen although ASIMD is present")
	}
	const NR = sgemmPkNR
	r := rand.New(rand.NewSource(13))
	rnd := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = r.Float32()*2 - 1
		}
		return v
	}
	cases := 0
	for rows := 1; rows <= nhwcPWNEONRows; rows++ {
		for _, k := range []int{1, 2, 5, 33} {
			for _, n := range []int{1, 3, 4, 7, 8, 12, 13, 16} {
				for flags := 0; flags < 16; flags++ {
					for _, gather := range []bool{false, true} {
						lda, ldc := k+3, NR+5
						var offs []int
						a := rnd(rows*lda + 4*k)
						at := func(i, p int) float32 { return a[i*lda+p] }
						if gather {
							offs = make([]int, k)
							for p := range offs {
								offs[p] = 4 * r.Intn(4*k)
							}
							at = func(i, p int) float32 { return a[i*lda+offs[p]/4] }
						}
						b := rnd(k * NR)
						bias, z := rnd(NR), rnd(rows*ldc)
						c := rnd(rows * ldc)
						c0 := append([]float32(nil), c...)
						want := append([]float32(nil), c...)
						lo, hi := float32(-0.5), float32(0.75)
						nhwcPWTile(rows, 1, k, a, lda, offs, b, NR*k, nil, c, ldc, bias, z, lo, hi, flags, n)
						nhwcPWTileGo(rows, 1, k, a, lda, offs, b, NR*k, want, ldc, bias, z, lo, hi, flags, n)
						what := fmt.Sprintf("rows %d k %d n %d flags %d gather %v", rows, k, n, flags, gather)
						for i := 0; i < rows; i++ {
							for j := 0; j < ldc; j++ {
								o := i*ldc + j
								if j >= n {
									if c[o] != c0[o] {
										t.Fatalf("%s: C[%d][%d] past n changed", what, i, j)
									}
									continue
								}
								var ref float64
								for p := 0; p < k; p++ {
									ref += float64(at(i, p)) * float64(b[p*NR+j])
								}
								if flags&nhwcPWAccum != 0 {
									ref += float64(c0[o])
								}
								if flags&nhwcPWBias != 0 {
									ref += float64(bias[j])
								}
								if flags&nhwcPWZ != 0 {
									ref += float64(z[o])
								}
								if flags&nhwcPWClamp != 0 {
									ref = min(max(ref, float64(lo)), float64(hi))
								}
								tol := 1e-5 * float64(k+3)
								if d := math.Abs(float64(c[o]) - ref); !(d <= tol) {
									t.Fatalf("%s: C[%d][%d] = %v, want %v", what, i, j, c[o], ref)
								}
								if d := math.Abs(float64(c[o]) - float64(want[o])); !(d <= tol) {
									t.Fatalf("%s: C[%d][%d] = %v, twin %v", what, i, j, c[o], want[o])
								}
							}
						}
						cases++
					}
				}
			}
		}
	}
	t.Logf("%d cases", cases)
}

//go:build arm64 && !purego

package templates

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
)

// TestAsmSgemmKernelNEON compares the NEON micro-kernel (full tiles and
// the edge path of sgemmMicro) with the pure-Go twin on random packed
// panels, for every partial tile shape, several k, and beta 0 (NaN in C),
// 1 and another value. Elements outside the tile must be left alone.
func TestAsmSgemmKernelNEON(t *testing.T) {
	if !cpuHasASIMD {
		t.Fatal("no ASIMD: every arm64 core Go runs on has it")
	}
	r := rand.New(rand.NewSource(6))
	const ldc = 23
	cases := 0
	for _, kc := range []int{1, 2, 3, 7, 31, 257} {
		for mr := 1; mr <= sgemmPkMR; mr++ {
			for nr := 1; nr <= sgemmPkNR; nr++ {
				for _, beta := range []float32{0, 1, -0.625} {
					alpha := float32(1)
					if cases%2 == 1 {
						alpha = -1.25
					}
					a := sgemmPkRandom(r, kc*sgemmPkMR)
					b := sgemmPkRandom(r, kc*sgemmPkNR)
					c := sgemmPkRandom(r, (sgemmPkMR+1)*ldc)
					if beta == 0 {
						for i := 0; i < mr; i++ {
							for j := 0; j < nr; j++ {
								c[i*ldc+j] = float32(math.NaN())
							}
						}
					}
					want := append([]float32(nil), c...)
					sgemmMicroGo(kc, a, b, want, ldc, alpha, beta, mr, nr)
					sgemmMicro(kc, a, b, c, ldc, alpha, beta, mr, nr)
					name := fmt.Sprintf("kc=%d mr=%d nr=%d alpha=%v beta=%v", kc, mr, nr, alpha, beta)
					for i := range c {
						g, w := float64(c[i]), float64(want[i])
						if !(i/ldc < mr && i%ldc < nr) {
							if c[i] != want[i] {
								t.Fatalf("%s: element (%d,%d) outside the tile changed", name, i/ldc, i%ldc)
							}
							continue
						}
						if d := math.Abs(g - w); !(d <= 1e-5*float64(kc)*max(1, math.Abs(w))) {
							t.Fatalf("%s: C[%d][%d] = %v, twin %v", name, i/ldc, i%ldc, g, w)
						}
					}
					cases++
				}
			}
		}
	}
	t.Logf("%d cases", cases)
}

// BenchmarkAsmSgemmKernel6x16NEON runs the full micro-kernel on
// L1-resident panels (kc 256).
func BenchmarkAsmSgemmKernel6x16NEON(b *testing.B) {
	r := rand.New(rand.NewSource(1))
	const kc = 256
	a := sgemmPkRandom(r, kc*sgemmPkMR)
	bb := sgemmPkRandom(r, kc*sgemmPkNR)
	c := make([]float32, sgemmPkMR*sgemmPkNR)
	b.SetBytes(2 * kc * sgemmPkMR * sgemmPkNR) // FLOPs, reported as bytes
	for i := 0; i < b.N; i++ {
		sgemmKernel6x16NEON(kc, &a[0], &bb[0], &c[0], sgemmPkNR, 1, 0)
	}
}

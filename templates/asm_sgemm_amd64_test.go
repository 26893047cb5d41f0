//go:build amd64 && !purego

package templates

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
)

// TestAsmSgemmKernel compares the assembly micro-kernels with the pure-Go
// twin on random packed panels, for every partial tile shape, k values
// around the unroll factor, and beta 0 (NaN in C), 1 and another value.
// Elements outside the tile must be left alone.
func TestAsmSgemmKernel(t *testing.T) {
	if !cpuHasAVX2FMA {
		t.Skip("CPU lacks AVX2 or FMA")
	}
	r := rand.New(rand.NewSource(6))
	const ldc = 23
	cases := 0
	for _, kc := range []int{1, 2, 3, 4, 5, 7, 8, 9, 31, 256, 257} {
		for mr := 1; mr <= sgemmPkMR; mr++ {
			for nr := 1; nr <= sgemmPkNR; nr++ {
				for _, beta := range []float32{0, 1, -0.625} {
					alpha := float32(1)
					if cases%2 == 1 {
						alpha = -1.25
					}
					a := sgemmPkRandom(r, kc*sgemmPkMR)
					b := sgemmPkRandom(r, kc*sgemmPkNR)
					// One row of slack past the tile, to catch stray stores.
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
					if mr == sgemmPkMR && nr == sgemmPkNR {
						sgemmKernel6x16AVX2(kc, &a[0], &b[0], &c[0], ldc, alpha, beta)
					} else {
						sgemmKernel6x16EdgeAVX2(kc, &a[0], &b[0], &c[0], ldc, alpha, beta, mr, nr)
					}
					name := fmt.Sprintf("kc=%d mr=%d nr=%d alpha=%v beta=%v", kc, mr, nr, alpha, beta)
					for i := range c {
						g, w := float64(c[i]), float64(want[i])
						inTile := i/ldc < mr && i%ldc < nr
						if !inTile {
							if c[i] != want[i] {
								t.Fatalf("%s: element (%d,%d) outside the tile changed", name, i/ldc, i%ldc)
							}
							continue
						}
						// The twin rounds a*b before adding; FMA does not.
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

// BenchmarkAsmSgemmKernel6x16 runs the full micro-kernel on L1-resident
// panels: the ceiling the blocked driver can reach.
func BenchmarkAsmSgemmKernel6x16(b *testing.B) {
	if !cpuHasAVX2FMA {
		b.Skip("CPU lacks AVX2 or FMA")
	}
	r := rand.New(rand.NewSource(7))
	const kc = 256
	a := sgemmPkRandom(r, kc*sgemmPkMR)
	bp := sgemmPkRandom(r, kc*sgemmPkNR)
	c := make([]float32, sgemmPkMR*sgemmPkNR)
	for i := 0; i < b.N; i++ {
		sgemmKernel6x16AVX2(kc, &a[0], &bp[0], &c[0], sgemmPkNR, 1, 1)
	}
	b.ReportMetric(2*sgemmPkMR*sgemmPkNR*kc*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// TestAsmSgemmPackB16 compares the assembly panel copy with its Go twin.
func TestAsmSgemmPackB16(t *testing.T) {
	if !cpuHasAVX2FMA {
		t.Skip("CPU lacks AVX2 or FMA")
	}
	r := rand.New(rand.NewSource(9))
	for _, kc := range []int{1, 2, 7, 256} {
		for _, ldb := range []int{16, 17, 45} {
			src := sgemmPkRandom(r, (kc-1)*ldb+sgemmPkNR)
			got := sgemmPkRandom(r, kc*sgemmPkNR+5)
			want := append([]float32(nil), got...)
			sgemmPackB16Go(kc, src, ldb, want)
			sgemmPackB16AVX(kc, &src[0], ldb, &got[0])
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("kc=%d ldb=%d: dst[%d] = %v, want %v", kc, ldb, i, got[i], want[i])
				}
			}
		}
	}
}

// TestAsmSgemmKernelWide compares the AVX-512 6x32 kernel with two 6x16
// tiles of the pure-Go twin, for k around the unroll factor and beta 0
// (NaN in C), 1 and another value; columns past the tile stay untouched.
func TestAsmSgemmKernelWide(t *testing.T) {
	if !cpuHasAVX512 {
		t.Skip("CPU lacks AVX-512")
	}
	r := rand.New(rand.NewSource(16))
	const ldc = 37
	for _, kc := range []int{1, 2, 3, 4, 5, 7, 8, 9, 31, 256, 257} {
		for _, beta := range []float32{0, 1, -0.625} {
			alpha := float32(-1.25)
			a := sgemmPkRandom(r, kc*sgemmPkMR)
			b0 := sgemmPkRandom(r, kc*sgemmPkNR)
			b1 := sgemmPkRandom(r, kc*sgemmPkNR)
			c := sgemmPkRandom(r, (sgemmPkMR+1)*ldc)
			if beta == 0 {
				for i := 0; i < sgemmPkMR; i++ {
					for j := 0; j < 2*sgemmPkNR; j++ {
						c[i*ldc+j] = float32(math.NaN())
					}
				}
			}
			want := append([]float32(nil), c...)
			sgemmMicroGo(kc, a, b0, want, ldc, alpha, beta, sgemmPkMR, sgemmPkNR)
			sgemmMicroGo(kc, a, b1, want[sgemmPkNR:], ldc, alpha, beta, sgemmPkMR, sgemmPkNR)
			sgemmMicroWide(kc, a, b0, b1, c, ldc, alpha, beta)
			for i := range c {
				d := math.Abs(float64(c[i] - want[i]))
				if d > 1e-4*(1+math.Abs(float64(want[i]))) || math.IsNaN(float64(c[i])) != math.IsNaN(float64(want[i])) {
					t.Fatalf("k=%d beta=%v: c[%d] = %v, want %v", kc, beta, i, c[i], want[i])
				}
			}
		}
	}
}

// TestAsmSgemmKernelWideEdge compares the masked AVX-512 6x32 edge kernel
// with its pure-Go twin for every partial tile (1-6 rows, 1-32 columns):
// elements outside the tile must be left alone, NaNs in C vanish when beta
// is 0.
func TestAsmSgemmKernelWideEdge(t *testing.T) {
	if !cpuHasAVX512 {
		t.Skip("CPU lacks AVX-512")
	}
	r := rand.New(rand.NewSource(17))
	const ldc = 41
	for _, kc := range []int{1, 3, 4, 5, 9, 64, 257} {
		for _, beta := range []float32{0, 1, -0.625} {
			a := sgemmPkRandom(r, kc*sgemmPkMR)
			b0 := sgemmPkRandom(r, kc*sgemmPkNR)
			b1 := sgemmPkRandom(r, kc*sgemmPkNR)
			for mr := 1; mr <= sgemmPkMR; mr++ {
				for nr := 1; nr <= 2*sgemmPkNR; nr++ {
					c := sgemmPkRandom(r, (sgemmPkMR+1)*ldc)
					if beta == 0 {
						for i := 0; i < mr; i++ {
							for j := 0; j < nr; j++ {
								c[i*ldc+j] = float32(math.NaN())
							}
						}
					}
					want := append([]float32(nil), c...)
					sgemmMicroWideEdgeGo(kc, a, b0, b1, want, ldc, 0.75, beta, mr, nr)
					sgemmMicroWideEdge(kc, a, b0, b1, c, ldc, 0.75, beta, mr, nr)
					for i := range c {
						d := math.Abs(float64(c[i] - want[i]))
						if d > 1e-4*(1+math.Abs(float64(want[i]))) || math.IsNaN(float64(c[i])) != math.IsNaN(float64(want[i])) {
							t.Fatalf("k=%d beta=%v mr=%d nr=%d: c[%d] = %v, want %v", kc, beta, mr, nr, i, c[i], want[i])
						}
					}
				}
			}
		}
	}
}

//go:build linux

package templates

import (
	"math/rand"
	"os"
	"sort"
	"testing"
)

// TestBF16GemmCPUTime (opt-in: CUVIL_BF16_AB=1) times bf16GemmPacked and
// the float32 GEMM with B prepacked (sgemmPrepackedBPart), interleaved, in
// thread CPU time at 1 thread, and logs the medians and their ratio: a
// rough hint on a shared machine, not a measurement.
func TestBF16GemmCPUTime(t *testing.T) {
	if os.Getenv("CUVIL_BF16_AB") == "" {
		t.Skip("set CUVIL_BF16_AB=1")
	}
	t.Logf("AVX512_BF16 tiles: %v", bf16HasAsm())
	rng := rand.New(rand.NewSource(1))
	for _, sz := range [][3]int{{196, 256, 2304}, {128, 768, 768}, {784, 128, 1152}} {
		m, n, k := sz[0], sz[1], sz[2]
		a := make([]float32, m*k)
		b := make([]float32, k*n)
		for i := range a {
			a[i] = float32(rng.NormFloat64())
		}
		for i := range b {
			b[i] = float32(rng.NormFloat64())
		}
		bp := bf16PackB(make([]uint16, bf16PackedBSize(k, n)), false, k, n, b, n)
		fp := sgemmPackB(false, k, n, b, n)
		c := make([]float32, m*n)
		p := NewWorkPool(WithThreads(1))
		var s bf16Gemm
		bufs := newSgemmPkBufs()
		var tb, tf []int64
		for run := 0; run < 21; run++ {
			t0 := threadClockNanos()
			bf16GemmPacked(p, &s, m, n, k, a, k, bp, c, n)
			t1 := threadClockNanos()
			sgemmPrepackedBPart(bufs, n, 0, m, n, k, 1, false, a, k, fp, 0, c, n)
			t2 := threadClockNanos()
			tb, tf = append(tb, t1-t0), append(tf, t2-t1)
		}
		p.Close()
		sort.Slice(tb, func(i, j int) bool { return tb[i] < tb[j] })
		sort.Slice(tf, func(i, j int) bool { return tf[i] < tf[j] })
		mb, mf := tb[len(tb)/2], tf[len(tf)/2]
		gf := func(ns int64) float64 { return 2 * float64(m*n*k) / float64(ns) }
		t.Logf("%dx%dx%d: bf16 %.3f ms (%.0f GFLOP/s), f32 %.3f ms (%.0f GFLOP/s), bf16/f32 %.2f", m, n, k, float64(mb)/1e6, gf(mb), float64(mf)/1e6, gf(mf), float64(mb)/float64(mf))
	}
}

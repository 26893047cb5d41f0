//go:build amd64 && !purego && linux

package templates

import (
	"os"
	"runtime"
	"sort"
	"testing"
)

// TestBF16RateCPUTime (opt-in: CUVIL_BF16_AB=1; needs AVX512_BF16) times
// the register-only throughput probes bf16rate (VDPBF16PS) and fmarate
// (VFMADD231PS on ZMM), 24 independent accumulators each, alternating,
// in thread CPU time at 1 thread, and logs the medians per instruction,
// the instruction-rate ratio and the multiply-add-rate ratio (a
// VDPBF16PS does 32 multiply-adds, an FMA 16): 2.0 would be the issue's
// "twice the fp32 FMA rate"; an earlier session measured 0.5 (a quarter
// of the FMA instruction rate) on a Xeon.
func TestBF16RateCPUTime(t *testing.T) {
	if os.Getenv("CUVIL_BF16_AB") == "" {
		t.Skip("set CUVIL_BF16_AB=1")
	}
	if !cpuHasAVX512BF16 {
		t.Skip("no AVX512_BF16")
	}
	runtime.LockOSThread() // the clock is the thread's
	defer runtime.UnlockOSThread()
	const iters = 1 << 20 // 24M instructions a run
	var tb, tf []float64
	for run := 0; run < 31; run++ {
		t0 := threadClockNanos()
		bf16rate(iters)
		t1 := threadClockNanos()
		fmarate(iters)
		t2 := threadClockNanos()
		tb, tf = append(tb, float64(t1-t0)/(24*iters)), append(tf, float64(t2-t1)/(24*iters))
	}
	sort.Float64s(tb)
	sort.Float64s(tf)
	mb, mf := tb[len(tb)/2], tf[len(tf)/2]
	t.Logf("per instruction, medians of 31 alternating runs (min): VDPBF16PS %.4f ns (%.4f), VFMADD231PS zmm %.4f ns (%.4f); instruction rate bf16/fma %.3f; multiply-add rate bf16/fp32 %.3f",
		mb, tb[0], mf, tf[0], mf/mb, 2*mf/mb)
}

// BenchmarkBF16Rate and BenchmarkFMARate: the same probes, ns per
// instruction (24 a call of bf16rate(1)).
func BenchmarkBF16Rate(b *testing.B) {
	if !cpuHasAVX512BF16 {
		b.Skip("no AVX512_BF16")
	}
	b.ResetTimer()
	bf16rate(b.N)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(24*b.N), "ns/instr")
}

func BenchmarkFMARate(b *testing.B) {
	b.ResetTimer()
	fmarate(b.N)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(24*b.N), "ns/instr")
}

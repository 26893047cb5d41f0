//go:build amd64 && !purego

package templates

import (
	"sync"
	"testing"
	"time"
)

// The FMA peak of one core, measured with register-only FMA chains
// (asm_fmapeak_amd64.s): the ceiling for the SGEMM benchmarks, which report
// their share of it as %peak.

func BenchmarkFMAPeakAVX2(b *testing.B) {
	if !cpuHasAVX2FMA {
		b.Skip("no AVX2/FMA")
	}
	benchmarkFMAPeak(b, fmaPeakAVX2, 192)
}

func BenchmarkFMAPeakAVX512(b *testing.B) {
	if !cpuHasAVX512 {
		b.Skip("no AVX-512")
	}
	benchmarkFMAPeak(b, fmaPeakAVX512, 768)
}

// fmaPeakIters is the iterations of one probe call (about 0.1-0.2 ms).
const fmaPeakIters = 1 << 16

func benchmarkFMAPeak(b *testing.B, probe func(int), flopsPerIter int) {
	for i := 0; i < b.N; i++ {
		probe(fmaPeakIters)
	}
	b.ReportMetric(float64(flopsPerIter)*fmaPeakIters*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

func init() {
	var once sync.Once
	var peak float64
	sgemmPeak = func() float64 {
		once.Do(func() { peak = measureFMAPeak() })
		return peak
	}
}

// measureFMAPeak returns the GFLOP/s of the probe for the ISA the SGEMM
// driver uses (AVX-512 when sgemmWide), the best of 20 short runs, so a
// moment of contention on a shared machine does not lower it.
func measureFMAPeak() float64 {
	probe, flops := fmaPeakAVX2, 192
	if sgemmWide {
		probe, flops = fmaPeakAVX512, 768
	}
	best := 0.0
	for i := 0; i < 20; i++ {
		start := time.Now()
		probe(fmaPeakIters)
		best = max(best, float64(flops)*fmaPeakIters/time.Since(start).Seconds()/1e9)
	}
	return best
}

// BenchmarkSgemmKernel6x32L1 runs the AVX-512 micro-kernel alone on panels
// that stay in L1 (kc = 256: A 6 KiB, the two B panels 32 KiB): the
// kernel's own ceiling, without packing or cache misses.
func BenchmarkSgemmKernel6x32L1(b *testing.B) {
	if !sgemmWide {
		b.Skip("no AVX-512")
	}
	const kc = sgemmPkKC
	a := make([]float32, kc*sgemmPkMR)
	b0 := make([]float32, kc*sgemmPkNR)
	b1 := make([]float32, kc*sgemmPkNR)
	c := make([]float32, sgemmPkMR*2*sgemmPkNR)
	for i := range a {
		a[i] = 1e-3
	}
	for i := range b0 {
		b0[i], b1[i] = 1e-3, 1e-3
	}
	const calls = 256
	for i := 0; i < b.N; i++ {
		for j := 0; j < calls; j++ {
			sgemmKernel6x32AVX512(kc, &a[0], &b0[0], &b1[0], &c[0], 2*sgemmPkNR, 1, 1)
		}
	}
	reportSgemmRate(b, sgemmPkMR, 2*sgemmPkNR, kc*calls)
}

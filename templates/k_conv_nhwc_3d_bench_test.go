package templates

import (
	"math/rand"
	"runtime"
	"testing"
)

// BenchmarkConv3DCPU runs one call of mc3_18's 3-D convolution shapes
// (NDHWC, batch 1, 8 frames, bias and Relu, weights as gen packs them) on
// one thread and reports the calling thread's CPU time per call (cpu-ms)
// and the direct convolution's flops over it (GFLOP/s: above the FMA peak,
// BenchmarkFMAPeak*, only Winograd can go), GEMM panels against Winograd
// where both apply.
//
//	go test -run '^$' -bench Conv3DCPU -benchtime 3x ./templates/
func BenchmarkConv3DCPU(b *testing.B) {
	r := rand.New(rand.NewSource(1))
	type conv struct {
		name        string
		c, t, hw, m int
		kt, k, s, f int // f: Winograd tile (0: GEMM panels)
		pt, p       int // time and spatial pads
	}
	convs := []conv{
		{"stem_3x7x7s2_3_64_112", 3, 8, 112, 64, 3, 7, 2, 0, 1, 3},
		{"l1_3x3x3_gemm_64_56", 64, 8, 56, 64, 3, 3, 1, 0, 1, 1},
		{"l1_3x3x3_w4_64_56", 64, 8, 56, 64, 3, 3, 1, 4, 1, 1},
		{"l1_3x3x3_w2_64_56", 64, 8, 56, 64, 3, 3, 1, 2, 1, 1},
		{"l2_1x3x3_w4_128_28", 128, 8, 28, 128, 1, 3, 1, 4, 0, 1},
		{"l4_1x3x3_gemm_512_7", 512, 8, 7, 512, 1, 3, 1, 0, 0, 1},
		{"l4_1x3x3_w4_512_7", 512, 8, 7, 512, 1, 3, 1, 4, 0, 1},
		{"l4_1x3x3_w2_512_7", 512, 8, 7, 512, 1, 3, 1, 2, 0, 1},
	}
	for _, c := range convs {
		X, W, B := nnRand(r, 1, c.c, c.t, c.hw, c.hw), nnRand(r, c.m, c.c, c.kt, c.k, c.k), nnRand(r, c.m)
		attrs := Attrs{"activation": "Relu", "layout": "NHWC", "strides": []int64{1, int64(c.s), int64(c.s)},
			"pads": []int64{int64(c.pt), int64(c.p), int64(c.p), int64(c.pt), int64(c.p), int64(c.p)}}
		var wp *Tensor
		if c.f != 0 {
			wp = wnWeights(b, W, c.f)
			attrs[ConvWinogradAttr] = ints64(W.Shape)
		} else {
			p, _ := PrepackConvWeightsNHWC(W.F32(), W.Shape, 1)
			wp = &Tensor{DType: F32, Shape: []int{len(p)}, Data: p}
			attrs[ConvPackedAttr] = ints64(W.Shape)
		}
		oh := (c.hw+2*c.p-c.k)/c.s + 1
		flops := 2 * float64(c.t*oh*oh) * float64(c.m*c.c*c.kt*c.k*c.k)
		n := nnNode("cuvil::FusedConv", 1, attrs, 1, channelsLast(X, F32), wp, B)
		b.Run(c.name, func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			if err := FusedConv(n); err != nil { // buffers, first touch
				b.Fatal(err)
			}
			b.ResetTimer()
			cpu0 := threadCPUNanos()
			for i := 0; i < b.N; i++ {
				if err := FusedConv(n); err != nil {
					b.Fatal(err)
				}
			}
			if cpu := threadCPUNanos() - cpu0; cpu0 != 0 && cpu > 0 {
				b.ReportMetric(float64(cpu)/1e6/float64(b.N), "cpu-ms")
				b.ReportMetric(flops*float64(b.N)/float64(cpu), "GFLOP/s")
			}
		})
	}
}

//go:build amd64 && !purego

package templates

import (
	"math/rand"
	"runtime"
	"testing"
)

// BenchmarkGroupedNHWC times the grouped 3x3 convolutions of ResNeXt-50
// 32x4d and RegNetY-400MF (NHWC, batch 1, W prepacked, bias and Relu) on the direct
// kernel and on the per-group GEMM (nhwcGrpWidest 0), one thread,
// reporting GFLOP/s of the calling thread's CPU time next to ns/op.
func BenchmarkGroupedNHWC(b *testing.B) {
	r := rand.New(rand.NewSource(1))
	convs := []struct {
		name         string
		c, hw, g, st int
	}{
		{"rx_l1_128g32_56", 128, 56, 4, 1},
		{"rx_l2_256g32_28", 256, 28, 8, 1},
		{"rx_l3_512g32_14", 512, 14, 16, 1},
		{"rx_l4_1024g32_7", 1024, 7, 32, 1},
		{"rx_l4_1024g32_14s2", 1024, 14, 32, 2},
		{"rg_b1_48g6_112s2", 48, 112, 8, 2},
		{"rg_b2_104g13_28", 104, 28, 8, 1},
		{"rg_b3_208g26_14", 208, 14, 8, 1},
		{"rg_b4_440g55_7", 440, 7, 8, 1},
	}
	for _, c := range convs {
		X, W, B := nnRand(r, 1, c.c, c.hw, c.hw), nnRand(r, c.c, c.g, 3, 3), nnRand(r, c.c)
		attrs := Attrs{"activation": "Relu", "layout": "NHWC", "group": int64(c.c / c.g),
			"strides": []int64{int64(c.st), int64(c.st)}, "pads": []int64{1, 1, 1, 1}}
		oh := (c.hw-1)/c.st + 1
		flop := 2 * float64(oh*oh) * float64(c.c) * float64(c.g*9)
		x := nhwcOf(X, F32)
		for _, path := range []string{"direct", "gemm"} {
			b.Run(c.name+"/"+path, func(b *testing.B) {
				if path == "gemm" {
					defer func(w int) { nhwcGrpWidest = w }(nhwcGrpWidest)
					nhwcGrpWidest = 0
				}
				// W prepacked, as gen stores it (unpacked W is packed on
				// every run).
				p, _ := PrepackConvWeightsNHWC(W.F32(), W.Shape, c.c/c.g)
				at := Attrs{ConvPackedAttr: ints64(W.Shape)}
				for k, v := range attrs {
					at[k] = v
				}
				n := nnNode("cuvil::FusedConv", 1, at, 1, x, &Tensor{DType: F32, Shape: []int{len(p)}, Data: p}, B)
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				cpu0 := threadCPUNanos()
				defer func() {
					if cpu := threadCPUNanos() - cpu0; cpu0 != 0 && cpu > 0 {
						b.ReportMetric(flop*float64(b.N)/float64(cpu), "gflops")
					}
				}()
				for i := 0; i < b.N; i++ {
					if err := FusedConv(n); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

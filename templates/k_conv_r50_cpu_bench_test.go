package templates

import (
	"math/rand"
	"runtime"
	"testing"
)

// BenchmarkR50CPU runs one call of each of resnet50's convolution shapes
// (NHWC, batch 1, bias and Relu, weights as gen packs them: GEMM panels
// for 1x1 and strided 3x3, F(4x4) and F(2x2) Winograd for the unit-stride
// 3x3) and reports the calling thread's CPU time per call (cpu-ms). It
// builds for every GOARCH, so under qemu-aarch64-static it compares the
// NEON kernels with -tags purego on the same work: the host CPU time qemu
// spends, a proxy for the emulated work that a loaded machine leaves
// nearly alone (wall time it does not).
//
//	GOARCH=arm64 go test -exec qemu-aarch64-static -run '^$' -bench R50CPU -benchtime 1x ./templates/
func BenchmarkR50CPU(b *testing.B) {
	r := rand.New(rand.NewSource(1))
	type conv struct {
		name     string
		c, hw, m int
		k, s, f  int // f: Winograd tile (0: GEMM panels)
		residual bool
	}
	convs := []conv{
		{"l1_conv1_64_64_56", 64, 56, 64, 1, 1, 0, false},
		{"l1_conv3_64_256_56", 64, 56, 256, 1, 1, 0, true},
		{"l1_conv2_w4_64_56", 64, 56, 64, 3, 1, 4, false},
		{"l1_conv2_w2_64_56", 64, 56, 64, 3, 1, 2, false},
		{"l2_conv2_3x3s2_128_56", 128, 56, 128, 3, 2, 0, false},
		{"l2_ds_s2_256_512_56", 256, 56, 512, 1, 2, 0, false},
		{"l2_conv2_w4_128_28", 128, 28, 128, 3, 1, 4, false},
		{"l3_conv1_1024_256_14", 1024, 14, 256, 1, 1, 0, false},
		{"l3_conv2_w4_256_14", 256, 14, 256, 3, 1, 4, false},
		{"l3_conv2_w2_256_14", 256, 14, 256, 3, 1, 2, false},
		{"l4_conv2_w2_512_7", 512, 7, 512, 3, 1, 2, false},
		{"l4_conv3_512_2048_7", 512, 7, 2048, 1, 1, 0, true},
	}
	for _, c := range convs {
		X, W, B := nnRand(r, 1, c.c, c.hw, c.hw), nnRand(r, c.m, c.c, c.k, c.k), nnRand(r, c.m)
		attrs := Attrs{"activation": "Relu", "layout": "NHWC", "strides": []int64{int64(c.s), int64(c.s)}}
		var wp *Tensor
		if c.f != 0 {
			wp = wnWeights(b, W, c.f)
			attrs[ConvWinogradAttr] = ints64(W.Shape)
		} else {
			p, _ := PrepackConvWeightsNHWC(W.F32(), W.Shape, 1)
			wp = &Tensor{DType: F32, Shape: []int{len(p)}, Data: p}
			attrs[ConvPackedAttr] = ints64(W.Shape)
		}
		if c.k == 3 {
			attrs["pads"] = []int64{1, 1, 1, 1}
		}
		oh := (c.hw+2*(c.k/2)-c.k)/c.s + 1
		in := []*Tensor{nhwcOf(X, F32), wp, B}
		if c.residual {
			in = append(in, nnRand(r, 1, oh, oh, c.m))
		}
		n := nnNode("cuvil::FusedConv", 1, attrs, 1, in...)
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
			}
		})
	}
}

//go:build amd64 && !purego

package templates

import (
	"math/rand"
	"runtime"
	"slices"
	"testing"
	"time"
)

// BenchmarkR50Layers times resnet50's GEMM convolutions (NHWC, batch 1,
// weights prepacked as gen stores them, bias and Relu; conv3 with a
// residual) on one thread and reports GFLOP/s of the calling thread's CPU
// time (gflops) next to the wall-clock ns/op.
func BenchmarkR50Layers(b *testing.B) {
	r := rand.New(rand.NewSource(1))
	type conv struct {
		name     string
		c, hw, m int
		k, s     int
		residual bool
	}
	convs := []conv{
		{"l1_conv1_64_64_56", 64, 56, 64, 1, 1, false},
		{"l1_conv1_256_64_56", 256, 56, 64, 1, 1, false},
		{"l1_conv3_64_256_56", 64, 56, 256, 1, 1, true},
		{"l2_conv1_256_128_56", 256, 56, 128, 1, 1, false},
		{"l2_conv2_3x3s2_128_56", 128, 56, 128, 3, 2, false},
		{"l2_ds_s2_256_512_56", 256, 56, 512, 1, 2, false},
		{"l2_conv1_512_128_28", 512, 28, 128, 1, 1, false},
		{"l2_conv3_128_512_28", 128, 28, 512, 1, 1, true},
		{"l3_conv2_3x3s2_256_28", 256, 28, 256, 3, 2, false},
		{"l3_ds_s2_512_1024_28", 512, 28, 1024, 1, 2, false},
		{"l3_conv1_1024_256_14", 1024, 14, 256, 1, 1, false},
		{"l3_conv3_256_1024_14", 256, 14, 1024, 1, 1, true},
		{"l4_conv1_1024_512_14", 1024, 14, 512, 1, 1, false},
		{"l4_conv2_3x3s2_512_14", 512, 14, 512, 3, 2, false},
		{"l4_ds_s2_1024_2048_14", 1024, 14, 2048, 1, 2, false},
		{"l4_conv1_2048_512_7", 2048, 7, 512, 1, 1, false},
		{"l4_conv3_512_2048_7", 512, 7, 2048, 1, 1, true},
	}
	for _, c := range convs {
		X, W, B := nnRand(r, 1, c.c, c.hw, c.hw), nnRand(r, c.m, c.c, c.k, c.k), nnRand(r, c.m)
		p, _ := PrepackConvWeightsNHWC(W.F32(), W.Shape, 1)
		wp := &Tensor{DType: F32, Shape: []int{len(p)}, Data: p}
		attrs := Attrs{"activation": "Relu", "layout": "NHWC", ConvPackedAttr: ints64(W.Shape),
			"strides": []int64{int64(c.s), int64(c.s)}}
		if c.k == 3 {
			attrs["pads"] = []int64{1, 1, 1, 1}
		}
		oh := (c.hw+2*(c.k/2)-c.k)/c.s + 1
		in := []*Tensor{nhwcOf(X, F32), wp, B}
		if c.residual {
			in = append(in, nnRand(r, 1, oh, oh, c.m))
		}
		n := nnNode("cuvil::FusedConv", 1, attrs, 1, in...)
		flop := 2 * float64(oh*oh) * float64(c.m) * float64(c.c*c.k*c.k)
		b.Run(c.name+"/cold", func(b *testing.B) {
			// Weights and activations evicted from the caches before each
			// call (as inside the model, where ~100 MB of weights stream
			// through per run): the median call's GFLOP/s, wall clock.
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var ns []float64
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				r50Evict()
				b.StartTimer()
				t0 := time.Now()
				if err := FusedConv(n); err != nil {
					b.Fatal(err)
				}
				ns = append(ns, float64(time.Since(t0)))
			}
			slices.Sort(ns)
			b.ReportMetric(flop/ns[len(ns)/2], "gflops")
		})
		b.Run(c.name+"/warm", func(b *testing.B) {
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

// r50Evict reads and writes a buffer larger than the last-level cache.
var r50EvictBuf []float32

func r50Evict() {
	if r50EvictBuf == nil {
		r50EvictBuf = make([]float32, 96<<20)
	}
	for i := 0; i < len(r50EvictBuf); i += 16 {
		r50EvictBuf[i]++
	}
}

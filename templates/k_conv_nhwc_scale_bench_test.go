package templates

import (
	"math/rand"
	"runtime"
	"testing"
	"time"
)

// BenchmarkSqueezenetThreads times squeezenet1_1's layer shapes (NHWC,
// weights as gen stores them, Winograd where gen picks it) at 1 and 2
// threads, alternating blocks of runs, and reports each one's minimum and
// the 1-thread/2-thread speedup (minima: robust on a loaded machine), and
// split: the 2-thread split's parts run one after the other on one core
// (GOMAXPROCS 1) over the 1-thread time, the work splitting adds (when
// other processes keep the second core busy, the speedup reads ~1 while
// split stays meaningful).
// go test ./templates -run '^$' -bench SqueezenetThreads -benchtime 1x
func BenchmarkSqueezenetThreads(b *testing.B) {
	r := rand.New(rand.NewSource(1))
	pad1 := Attrs{"pads": []int64{1, 1, 1, 1}}
	layers := []struct {
		name  string
		x, w  []int // x NHWC (NCHW for nchw)
		attrs Attrs
		wino  int
		nchw  bool
	}{
		{"conv0_3x3s2_3_64_224", []int{1, 3, 224, 224}, []int{64, 3, 3, 3}, Attrs{"strides": []int64{2, 2}}, 0, true},
		{"squeeze3_pw_64_16_55", []int{1, 55, 55, 64}, []int{16, 64, 1, 1}, nil, 0, false},
		{"squeeze4_pw_128_16_55", []int{1, 55, 55, 128}, []int{16, 128, 1, 1}, nil, 0, false},
		{"expand1_pw_16_64_55", []int{1, 55, 55, 16}, []int{64, 16, 1, 1}, nil, 0, false},
		{"expand3_wino4_16_64_55", []int{1, 55, 55, 16}, []int{64, 16, 3, 3}, pad1, 4, false},
		{"squeeze6_pw_128_32_27", []int{1, 27, 27, 128}, []int{32, 128, 1, 1}, nil, 0, false},
		{"expand1_pw_32_128_27", []int{1, 27, 27, 32}, []int{128, 32, 1, 1}, nil, 0, false},
		{"expand3_wino4_32_128_27", []int{1, 27, 27, 32}, []int{128, 32, 3, 3}, pad1, 4, false},
		{"squeeze9_pw_256_48_13", []int{1, 13, 13, 256}, []int{48, 256, 1, 1}, nil, 0, false},
		{"expand1_pw_48_192_13", []int{1, 13, 13, 48}, []int{192, 48, 1, 1}, nil, 0, false},
		{"expand3_wino2_48_192_13", []int{1, 13, 13, 48}, []int{192, 48, 3, 3}, pad1, 2, false},
		{"squeeze12_pw_512_64_13", []int{1, 13, 13, 512}, []int{64, 512, 1, 1}, nil, 0, false},
		{"expand3_wino2_64_256_13", []int{1, 13, 13, 64}, []int{256, 64, 3, 3}, pad1, 2, false},
		{"classifier_pw_512_1000_13", []int{1, 13, 13, 512}, []int{1000, 512, 1, 1}, nil, 0, false},
	}
	for _, l := range layers {
		X, W, B := nnRand(r, l.x...), nnRand(r, l.w...), nnRand(r, l.w[0])
		attrs := Attrs{"activation": "Relu", "layout": "NHWC"}
		for k, v := range l.attrs {
			attrs[k] = v
		}
		if l.nchw {
			attrs["in_layout"] = "NCHW"
		}
		w := W
		if l.wino != 0 {
			w = wnWeights(b, W, l.wino)
			attrs[ConvWinogradAttr] = ints64(W.Shape)
		} else {
			p, _ := PrepackConvWeightsNHWC(W.F32(), W.Shape, 1)
			w = &Tensor{DType: F32, Shape: []int{len(p)}, Data: p}
			attrs[ConvPackedAttr] = ints64(W.Shape)
		}
		var nodes [2]*Node
		for i := range nodes {
			nodes[i] = nnNode("cuvil::FusedConv", 1, attrs, 1, X, w, B)
			nodes[i].Pool = NewWorkPool(WithThreads(i + 1))
		}
		b.Run(l.name, func(b *testing.B) {
			best := [3]time.Duration{1 << 62, 1 << 62, 1 << 62}
			for rep := 0; rep < 40*b.N; rep++ {
				for i := range best {
					n, procs := nodes[min(i, 1)], 0
					if i == 2 {
						procs = runtime.GOMAXPROCS(1)
					}
					for k := 0; k < 5; k++ {
						t0 := time.Now()
						if err := FusedConv(n); err != nil {
							b.Fatal(err)
						}
						best[i] = min(best[i], time.Since(t0))
					}
					if procs > 0 {
						runtime.GOMAXPROCS(procs)
					}
				}
			}
			b.ReportMetric(float64(best[0].Microseconds()), "us-1t")
			b.ReportMetric(float64(best[1].Microseconds()), "us-2t")
			b.ReportMetric(float64(best[0])/float64(best[1]), "speedup")
			b.ReportMetric(float64(best[2])/float64(best[0]), "split")
		})
		for _, n := range nodes {
			n.Pool.Close()
		}
	}
}

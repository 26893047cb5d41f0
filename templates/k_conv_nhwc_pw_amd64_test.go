//go:build amd64 && !purego

package templates

import (
	"math/rand"
	"runtime"
	"testing"
)

// BenchmarkNHWCPWLayers times mobilenet_v2's narrow pointwise layers and
// its first convolution (1 thread, weights prepacked as gen stores them)
// with the tile kernels (tiles) and with the packed SGEMM driver (sgemm),
// AVX-512 and AVX2 (avx2: sgemm without the 6x32 kernels); the first
// convolution's old form is the input Transpose plus the NHWC
// convolution.
func BenchmarkNHWCPWLayers(b *testing.B) {
	if !cpuHasAVX2FMA {
		b.Skip("no AVX2")
	}
	r := rand.New(rand.NewSource(1))
	convs := []struct {
		name     string
		x, w     []int
		attrs    Attrs
		residual bool
		act      string
	}{
		{"pw_c32_16_112", []int{1, 32, 112, 112}, []int{16, 32, 1, 1}, nil, false, ""},
		{"pw_c16_96_112", []int{1, 16, 112, 112}, []int{96, 16, 1, 1}, nil, false, ""},
		{"pw_c96_24_56", []int{1, 96, 56, 56}, []int{24, 96, 1, 1}, nil, false, ""},
		{"pw_c144_24_56_res", []int{1, 144, 56, 56}, []int{24, 144, 1, 1}, nil, true, ""},
		{"pw_c24_144_56", []int{1, 24, 56, 56}, []int{144, 24, 1, 1}, nil, false, ""},
		{"pw_c144_32_28", []int{1, 144, 28, 28}, []int{32, 144, 1, 1}, nil, false, ""},
		{"pw_c320_1280_7", []int{1, 320, 7, 7}, []int{1280, 320, 1, 1}, nil, false, ""},
		{"nchw_3x3s2_c3_32_224", []int{1, 3, 224, 224}, []int{32, 3, 3, 3}, Attrs{"strides": []int64{2, 2}, "pads": []int64{1, 1, 1, 1}}, false, ""},
		{"nchw_7x7s2_c3_64_224", []int{1, 3, 224, 224}, []int{64, 3, 7, 7}, Attrs{"strides": []int64{2, 2}, "pads": []int64{3, 3, 3, 3}}, false, ""},
		// mobilenet_v3's and lraspp's stem: 16 channels, HardSwish.
		{"nchw_3x3s2_c3_16_224_hswish", []int{1, 3, 224, 224}, []int{16, 3, 3, 3}, Attrs{"strides": []int64{2, 2}, "pads": []int64{1, 1, 1, 1}}, false, "HardSwish"},
	}
	defer func(f, a, w bool) { nhwcPWFast, nhwcPWAVX2, sgemmWide = f, a, w }(nhwcPWFast, nhwcPWAVX2, sgemmWide)
	for _, c := range convs {
		X, W, B := nnRand(r, c.x...), nnRand(r, c.w...), nnRand(r, c.w[0])
		nchw := c.name[:5] == "nchw_"
		p, _ := PrepackConvWeightsNHWC(W.F32(), W.Shape, 1)
		wp := &Tensor{DType: F32, Shape: []int{len(p)}, Data: p}
		attrs := Attrs{"activation": "Clip", "activation_params": []float32{0, 6}, "layout": "NHWC", ConvPackedAttr: ints64(W.Shape)}
		if c.residual {
			delete(attrs, "activation")
			delete(attrs, "activation_params")
		}
		if c.act != "" {
			attrs["activation"] = c.act
			delete(attrs, "activation_params")
		}
		for k, v := range c.attrs {
			attrs[k] = v
		}
		for _, v := range []struct {
			name              string
			tiles, avx2, wide bool
		}{{"sgemm", false, false, true}, {"tiles", true, false, true}, {"sgemm_avx2", false, true, false}, {"tiles_avx2", true, true, false}} {
			if !v.avx2 && !cpuHasAVX512 {
				continue
			}
			tiles := v.tiles
			nhwcPWFast, nhwcPWAVX2, sgemmWide = v.tiles, v.avx2, v.wide
			var tr *Node
			x := nhwcOf(X, F32)
			a := Attrs{}
			for k, v := range attrs {
				a[k] = v
			}
			if nchw && tiles {
				a["in_layout"] = "NCHW"
				x = X
			} else if nchw {
				tr = nnNode("Transpose", 13, Attrs{"perm": []int64{0, 2, 3, 1}}, 1, X)
			}
			in := []*Tensor{x, wp, B}
			if c.residual {
				in = append(in, nnRand(r, c.x[0], c.x[2], c.x[3], c.w[0]))
			}
			n := nnNode("cuvil::FusedConv", 1, a, 1, in...)
			b.Run(c.name+"/"+v.name, func(b *testing.B) {
				// One thread (no pool): its CPU time is the kernel's.
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				cpu0 := threadCPUNanos()
				defer func() {
					if cpu := threadCPUNanos() - cpu0; cpu0 != 0 && cpu > 0 {
						b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
					}
				}()
				for i := 0; i < b.N; i++ {
					if tr != nil {
						if err := Transpose(tr); err != nil {
							b.Fatal(err)
						}
					}
					if err := FusedConv(n); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestNHWCPWGemmAVX2 runs TestNHWCPWGemm's checks, the column-range and
// NHWC convolution ones (the Winograd GEMMs included) on the AVX2 tiles
// (the AVX-512 machine's own tiles are what the tests run otherwise).
func TestNHWCPWGemmAVX2(t *testing.T) {
	if !cpuHasAVX2FMA {
		t.Skip("no AVX2")
	}
	defer func(f, a bool) { nhwcPWFast, nhwcPWAVX2 = f, a }(nhwcPWFast, nhwcPWAVX2)
	nhwcPWFast, nhwcPWAVX2 = true, true
	TestNHWCPWGemm(t)
	TestNHWCPWGemmCols(t)
	TestFusedConvNHWC(t)
	TestFusedConvWinogradNHWC(t)
}

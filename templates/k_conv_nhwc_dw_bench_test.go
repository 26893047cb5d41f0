package templates

import (
	"fmt"
	"math/rand"
	"testing"
)

// BenchmarkNHWCLayers times NHWC FusedConv layers of mobilenet_v2 and
// resnet50 (weights prepacked as gen stores them, Relu) at 1 and 2 threads.
func BenchmarkNHWCLayers(b *testing.B) {
	r := rand.New(rand.NewSource(1))
	p1 := Attrs{"pads": []int64{1, 1, 1, 1}}
	dw := func(c int, s int64) Attrs {
		return Attrs{"group": int64(c), "strides": []int64{s, s}, "pads": []int64{1, 1, 1, 1}}
	}
	convs := []struct {
		name  string
		x, w  []int
		attrs Attrs
	}{
		{"dw_c32_112", []int{1, 32, 112, 112}, []int{32, 1, 3, 3}, dw(32, 1)},
		{"dws2_c96_112", []int{1, 96, 112, 112}, []int{96, 1, 3, 3}, dw(96, 2)},
		{"dw_c144_56", []int{1, 144, 56, 56}, []int{144, 1, 3, 3}, dw(144, 1)},
		{"dws2_c144_56", []int{1, 144, 56, 56}, []int{144, 1, 3, 3}, dw(144, 2)},
		{"dw_c192_28", []int{1, 192, 28, 28}, []int{192, 1, 3, 3}, dw(192, 1)},
		{"dw_c576_14", []int{1, 576, 14, 14}, []int{576, 1, 3, 3}, dw(576, 1)},
		{"dw_c960_7", []int{1, 960, 7, 7}, []int{960, 1, 3, 3}, dw(960, 1)},
		{"3x3_c512_7", []int{1, 512, 7, 7}, []int{512, 512, 3, 3}, p1},
		{"pw_c2048_512_7", []int{1, 2048, 7, 7}, []int{512, 2048, 1, 1}, nil},
		{"pw_c512_2048_7", []int{1, 512, 7, 7}, []int{2048, 512, 1, 1}, nil},
		{"pws2_c1024_2048_14", []int{1, 1024, 14, 14}, []int{2048, 1024, 1, 1}, Attrs{"strides": []int64{2, 2}}},
		{"pws2_c512_1024_28", []int{1, 512, 28, 28}, []int{1024, 512, 1, 1}, Attrs{"strides": []int64{2, 2}}},
		{"pw_c1024_256_14", []int{1, 1024, 14, 14}, []int{256, 1024, 1, 1}, nil},
		{"pw_c512_256_28", []int{1, 512, 28, 28}, []int{256, 512, 1, 1}, nil},
		{"7x7s2_c3_64_224", []int{1, 3, 224, 224}, []int{64, 3, 7, 7}, Attrs{"strides": []int64{2, 2}, "pads": []int64{3, 3, 3, 3}}},
	}
	for _, c := range convs {
		X, W, B := nnRand(r, c.x...), nnRand(r, c.w...), nnRand(r, c.w[0])
		group := 1
		if g, ok := c.attrs["group"]; ok {
			group = int(g.(int64))
		}
		attrs := Attrs{"activation": "Relu", "layout": "NHWC"}
		for k, v := range c.attrs {
			attrs[k] = v
		}
		p, _ := PrepackConvWeightsNHWC(W.F32(), W.Shape, group)
		w := &Tensor{DType: F32, Shape: []int{len(p)}, Data: p}
		attrs[ConvPackedAttr] = ints64(W.Shape)
		for _, threads := range []int{1, 2} {
			n := nnNode("cuvil::FusedConv", 1, attrs, 1, nhwcOf(X, F32), w, B)
			n.Pool = NewWorkPool(WithThreads(threads))
			b.Run(fmt.Sprintf("%s/t%d", c.name, threads), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					if err := FusedConv(n); err != nil {
						b.Fatal(err)
					}
				}
			})
			n.Pool.Close()
		}
	}
}

// BenchmarkNHWCColdW times resnet50's small-map layers with W' cold: each
// run reads one of enough weight copies to overflow the caches, as in a
// whole-model run.
func BenchmarkNHWCColdW(b *testing.B) {
	r := rand.New(rand.NewSource(1))
	convs := []struct {
		name  string
		x, w  []int
		attrs Attrs
	}{
		{"3x3_c512_7", []int{1, 512, 7, 7}, []int{512, 512, 3, 3}, Attrs{"pads": []int64{1, 1, 1, 1}}},
		{"pw_c2048_512_7", []int{1, 2048, 7, 7}, []int{512, 2048, 1, 1}, nil},
		{"pws2_c1024_2048_14", []int{1, 1024, 14, 14}, []int{2048, 1024, 1, 1}, Attrs{"strides": []int64{2, 2}}},
	}
	for _, c := range convs {
		X, W, B := nnRand(r, c.x...), nnRand(r, c.w...), nnRand(r, c.w[0])
		attrs := Attrs{"activation": "Relu", "layout": "NHWC"}
		for k, v := range c.attrs {
			attrs[k] = v
		}
		attrs[ConvPackedAttr] = ints64(W.Shape)
		p, _ := PrepackConvWeightsNHWC(W.F32(), W.Shape, 1)
		copies := max(2, (400<<20)/(4*len(p)))
		ws := make([]*Tensor, copies)
		for i := range ws {
			ws[i] = &Tensor{DType: F32, Shape: []int{len(p)}, Data: append([]float32(nil), p...)}
		}
		x := nhwcOf(X, F32)
		for _, threads := range []int{1, 2} {
			n := nnNode("cuvil::FusedConv", 1, attrs, 1, x, ws[0], B)
			n.Pool = NewWorkPool(WithThreads(threads))
			b.Run(fmt.Sprintf("%s/t%d", c.name, threads), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					n.In[1] = ws[i%copies]
					if err := FusedConv(n); err != nil {
						b.Fatal(err)
					}
				}
			})
			n.Pool.Close()
		}
	}
}

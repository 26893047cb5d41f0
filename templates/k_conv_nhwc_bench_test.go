package templates

import (
	"fmt"
	"math/rand"
	"testing"
)

// BenchmarkLayout times layer shapes of mobilenet_v2, squeezenet and
// resnet50 in both layouts on one thread, weights prepacked as gen stores
// them: the measurements behind the layout pass's cost model
// (passes/layout.go).
func BenchmarkLayout(b *testing.B) {
	r := rand.New(rand.NewSource(1))
	convs := []struct {
		name  string
		x, w  []int
		attrs Attrs
	}{
		{"dw3x3_c144_56", []int{1, 144, 56, 56}, []int{144, 1, 3, 3}, Attrs{"group": int64(144), "pads": []int64{1, 1, 1, 1}}},
		{"dw3x3s2_c96_112", []int{1, 96, 112, 112}, []int{96, 1, 3, 3}, Attrs{"group": int64(96), "strides": []int64{2, 2}, "pads": []int64{1, 1, 1, 1}}},
		{"dw3x3_c960_7", []int{1, 960, 7, 7}, []int{960, 1, 3, 3}, Attrs{"group": int64(960), "pads": []int64{1, 1, 1, 1}}},
		{"pw_c32_16_112", []int{1, 32, 112, 112}, []int{16, 32, 1, 1}, nil},
		{"pw_c576_96_14", []int{1, 576, 14, 14}, []int{96, 576, 1, 1}, nil},
		{"pw_c96_24_56", []int{1, 96, 56, 56}, []int{24, 96, 1, 1}, nil},
		{"pw_c16_96_112", []int{1, 16, 112, 112}, []int{96, 16, 1, 1}, nil},
		{"pw_c64_256_56", []int{1, 64, 56, 56}, []int{256, 64, 1, 1}, nil},
		{"3x3s2_c3_32_224", []int{1, 3, 224, 224}, []int{32, 3, 3, 3}, Attrs{"strides": []int64{2, 2}, "pads": []int64{1, 1, 1, 1}}},
		{"3x3_c64_64_56", []int{1, 64, 56, 56}, []int{64, 64, 3, 3}, Attrs{"pads": []int64{1, 1, 1, 1}}},
		{"3x3_c256_256_14", []int{1, 256, 14, 14}, []int{256, 256, 3, 3}, Attrs{"pads": []int64{1, 1, 1, 1}}},
	}
	for _, c := range convs {
		X, W, B := nnRand(r, c.x...), nnRand(r, c.w...), nnRand(r, c.w[0])
		group := 1
		if g, ok := c.attrs["group"]; ok {
			group = int(g.(int64))
		}
		for _, nhwc := range []bool{false, true} {
			attrs := Attrs{"activation": "Relu"}
			for k, v := range c.attrs {
				attrs[k] = v
			}
			x, w := X, W
			if nhwc {
				attrs["layout"] = "NHWC"
				x = nhwcOf(X, F32)
				p, _ := PrepackConvWeightsNHWC(W.F32(), W.Shape, group)
				w = &Tensor{DType: F32, Shape: []int{len(p)}, Data: p}
				attrs[ConvPackedAttr] = ints64(W.Shape)
			} else if p, ok := PrepackConvWeights(W.F32(), W.Shape, group); ok {
				w = &Tensor{DType: F32, Shape: []int{len(p)}, Data: p}
				attrs[ConvPackedAttr] = ints64(W.Shape)
			}
			n := nnNode("cuvil::FusedConv", 1, attrs, 1, x, w, B)
			b.Run(fmt.Sprintf("%s/nhwc=%v", c.name, nhwc), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					if err := FusedConv(n); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
	X := nnRand(r, 1, 64, 112, 112)
	pool := Attrs{"kernel_shape": []int64{3, 3}, "strides": []int64{2, 2}, "pads": []int64{1, 1, 1, 1}}
	b.Run("maxpool3x3s2_c64_112/nhwc=false", func(b *testing.B) {
		n := nnNode("MaxPool", 12, pool, 1, X)
		for i := 0; i < b.N; i++ {
			MaxPool(n)
		}
	})
	b.Run("maxpool3x3s2_c64_112/nhwc=true", func(b *testing.B) {
		attrs := Attrs{"mode": "max"}
		for k, v := range pool {
			attrs[k] = v
		}
		n := nnNode("cuvil::PoolNHWC", 1, attrs, 1, nhwcOf(X, F32))
		for i := 0; i < b.N; i++ {
			PoolNHWC(n)
		}
	})
	b.Run("transpose_c64_112", func(b *testing.B) {
		n := nnNode("Transpose", 13, Attrs{"perm": []int64{0, 2, 3, 1}}, 1, X)
		for i := 0; i < b.N; i++ {
			Transpose(n)
		}
	})
}

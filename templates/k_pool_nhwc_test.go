package templates

import (
	"fmt"
	"math/rand"
	"testing"
)

func TestPoolNHWC(t *testing.T) {
	r := rand.New(rand.NewSource(6))
	cases := []struct {
		op    string
		x     []int
		attrs Attrs
	}{
		{"MaxPool", []int{2, 13, 11, 9}, Attrs{"kernel_shape": []int64{3, 3}, "strides": []int64{2, 2}, "ceil_mode": int64(1)}},
		{"MaxPool", []int{1, 40, 15, 16}, Attrs{"kernel_shape": []int64{3, 3}, "pads": []int64{1, 1, 1, 1}}},
		{"MaxPool", []int{1, 64, 33, 30}, Attrs{"kernel_shape": []int64{2, 2}, "strides": []int64{2, 2}, "dilations": []int64{1, 2}}},
		{"AveragePool", []int{1, 21, 10, 12}, Attrs{"kernel_shape": []int64{3, 3}, "pads": []int64{1, 1, 1, 1}}},
		{"AveragePool", []int{2, 35, 10, 12}, Attrs{"kernel_shape": []int64{3, 3}, "pads": []int64{1, 1, 1, 1}, "count_include_pad": int64(1)}},
		{"AveragePool", []int{1, 48, 28, 28}, Attrs{"kernel_shape": []int64{2, 2}, "strides": []int64{2, 2}}},
		{"AveragePool", []int{1, 19, 9, 9}, Attrs{"kernel_shape": []int64{3, 3}, "strides": []int64{2, 2}, "pads": []int64{0, 0, 1, 1}, "ceil_mode": int64(1)}},
		{"GlobalAveragePool", []int{2, 37, 7, 6}, nil},
		// Past parMinFlops: split by blocks of poolGlobalBlock pixels
		// (53 and 9 channels: a tail on the Go twin), images of 1763
		// pixels (a short last block), a map of one block.
		{"GlobalAveragePool", []int{1, 53, 50, 51}, nil},
		{"GlobalAveragePool", []int{2, 40, 41, 43}, nil},
		{"GlobalAveragePool", []int{1, 9, 120, 130}, nil},
		{"GlobalAveragePool", []int{3, 600, 8, 16}, nil},
	}
	for _, c := range cases {
		X := nnRand(r, c.x...)
		ref := nhwcOf(nnRun(t, c.op, 11, c.attrs, 1, nnAs(X, F64))[0], F64)
		attrs := Attrs{"mode": map[string]string{"MaxPool": "max", "AveragePool": "avg", "GlobalAveragePool": "global_avg"}[c.op]}
		for k, v := range c.attrs {
			attrs[k] = v
		}
		what := fmt.Sprintf("%s%v%v", c.op, c.x, c.attrs)
		got := nhwcRunBoth(t, what, "cuvil::PoolNHWC", attrs, nhwcOf(X, F32))
		nnCheck(t, what, got, ref.Shape, nnF64(ref), 1e-5)
	}
	if err := PoolNHWC(nnNode("cuvil::PoolNHWC", 1, Attrs{"mode": "min"}, 1, nnRand(r, 1, 3, 3, 2))); err == nil {
		t.Fatal("unknown mode accepted")
	}
}

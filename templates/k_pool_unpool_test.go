package templates

import (
	"testing"
)

func TestMaxUnpool(t *testing.T) {
	x := miscTensorF(F32, []float64{1, 2, 3, 4}, 1, 1, 2, 2)
	ind := miscTensorI64([]int64{5, 7, 13, 15}, 1, 1, 2, 2)
	n := &Node{Op: "MaxUnpool", Version: 11, Attrs: Attrs{"kernel_shape": []int64{2, 2}, "strides": []int64{2, 2}}, In: []*Tensor{x, ind}, Out: []*Tensor{{}}}
	miscRun(t, MaxUnpool, n)
	want := make([]float64, 16)
	want[5], want[7], want[13], want[15] = 1, 2, 3, 4
	miscCheckClose(t, "unpool", n.Out[0], want, []int{1, 1, 4, 4}, 0)
	n.In = append(n.In, miscTensorI64([]int64{1, 1, 5, 5}, 4))
	miscRun(t, MaxUnpool, n)
	// output_shape pads the 4x4 unpooled plane at the end: the indices keep
	// their (row, col) in it (the ONNX test test_maxunpool_export_with_output_shape).
	want = make([]float64, 25)
	want[6], want[8], want[16], want[18] = 1, 2, 3, 4
	miscCheckClose(t, "unpool shape", n.Out[0], want, []int{1, 1, 5, 5}, 0)
	miscNoAllocs(t, n, MaxUnpool)
}

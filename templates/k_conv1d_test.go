package templates

import (
	"fmt"
	"math/rand"
	"testing"
)

// TestConv1DPaddedBeyondInput covers 1-D convolutions whose kernel is
// longer than the input, which only the padding makes valid (ONNX's
// test_Conv1d_pad2size1: length 1, kernel 5, pads 2+2), against the
// float64 reference, in every float dtype.
func TestConv1DPaddedBeyondInput(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	for _, c := range []struct {
		xs, ws []int
		pads   []int
		stride int
	}{
		{[]int{1, 4, 1}, []int{4, 4, 5}, []int{2, 2}, 1},
		{[]int{2, 3, 2}, []int{5, 3, 5}, []int{2, 2}, 1},
		{[]int{1, 2, 1}, []int{3, 2, 3}, []int{1, 1}, 1},
		{[]int{1, 3, 3}, []int{2, 3, 7}, []int{3, 3}, 2},
	} {
		X, W, B := nnRand(r, c.xs...), nnRand(r, c.ws...), nnRand(r, c.ws[0])
		k := c.ws[2]
		out := (c.xs[2]+c.pads[0]+c.pads[1]-k)/c.stride + 1
		attrs := Attrs{"kernel_shape": []int64{int64(k)}, "pads": ints64(c.pads), "strides": []int64{int64(c.stride)}, "dilations": []int64{1}, "group": int64(1)}
		for _, dt := range nnFloatTypes {
			in := nnInputsAs([]*Tensor{X, W, B}, dt)
			want := refConv(nnF64(in[0]), nnF64(in[1]), nnF64(in[2]), c.xs, c.ws, 1, []int{c.stride}, []int{1}, c.pads[:1], []int{out})
			for _, v := range []int{1, 11} {
				got := nnRun(t, "Conv", v, attrs, 1, in...)
				nnCheck(t, fmt.Sprintf("Conv1d v%d x%v w%v pads %v %v", v, c.xs, c.ws, c.pads, dt), got[0], []int{c.xs[0], c.ws[0], out}, want, nnTol(dt)*10)
			}
		}
	}
}

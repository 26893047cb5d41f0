package templates

import (
	"math/rand"
	"testing"
)

// TestCenterCropPad crops and pads (odd and even differences) on chosen
// axes and checks every output element against its centred source.
func TestCenterCropPad(t *testing.T) {
	r := rand.New(rand.NewSource(17))
	x := tewRand(r, F32, -5, 5, 5, 6, 3)
	for _, c := range []struct {
		axes   []int64
		target []int64
		want   []int
	}{
		{nil, []int64{3, 9, 3}, []int{3, 9, 3}},
		{nil, []int64{2, 2, 8}, []int{2, 2, 8}},
		{[]int64{1}, []int64{7}, []int{5, 7, 3}},
		{[]int64{-1, 0}, []int64{1, 10}, []int{10, 6, 1}},
	} {
		attrs := Attrs{}
		if c.axes != nil {
			attrs["axes"] = c.axes
		}
		n := tewNode("CenterCropPad", 18, attrs, x, tewI64([]int{len(c.target)}, c.target...))
		tewRun(t, n)
		out := n.Out[0]
		if !tewSameShape(out.Shape, c.want) {
			t.Fatalf("axes %v shape %v: got %v, want %v", c.axes, c.target, out.Shape, c.want)
		}
		idx := make([]int, 3)
		for o := 0; o < out.Len(); o++ {
			tewUnravel(o, c.want, idx)
			src, inside := make([]int, 3), true
			for d := 0; d < 3; d++ {
				in, od := x.Shape[d], c.want[d]
				if od <= in {
					src[d] = idx[d] + (in-od)/2
				} else {
					src[d] = idx[d] - (od-in)/2
				}
				if src[d] < 0 || src[d] >= in {
					inside = false
				}
			}
			want := 0.0
			if inside {
				want = tewGet(x, tewRavel(src, x.Shape))
			}
			if got := tewGet(out, o); got != want {
				t.Fatalf("axes %v shape %v at %v: %v, want %v", c.axes, c.target, idx, got, want)
			}
		}
	}
}

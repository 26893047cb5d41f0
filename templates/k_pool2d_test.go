package templates

import (
	"math/rand"
	"testing"
)

// TestMaxPool2DMatchesWalk compares the separated 2-D MaxPool with the
// general N-D walk on odd sizes, strides, dilations and paddings.
func TestMaxPool2DMatchesWalk(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for _, c := range []struct{ h, w, kh, kw, sh, sw, dh, dw, ph, pw int }{
		{7, 9, 3, 3, 2, 2, 1, 1, 0, 0},
		{11, 5, 3, 2, 1, 2, 1, 1, 1, 1},
		{13, 17, 3, 3, 2, 3, 2, 2, 2, 1},
		{5, 5, 2, 2, 2, 2, 1, 1, 1, 1},
		{1, 23, 1, 5, 1, 3, 1, 2, 0, 2},
		{4, 6, 3, 5, 1, 1, 1, 1, 1, 2},
		{2, 3, 3, 7, 1, 1, 1, 1, 1, 3},
		{9, 12, 3, 3, 1, 1, 1, 3, 1, 1},
	} {
		oh := (c.h+2*c.ph-(c.kh-1)*c.dh-1)/c.sh + 1
		ow := (c.w+2*c.pw-(c.kw-1)*c.dw-1)/c.sw + 1
		win := nnWin{k: []int{c.kh, c.kw}, s: []int{c.sh, c.sw}, d: []int{c.dh, c.dw},
			pb: []int{c.ph, c.pw}, pe: []int{c.ph, c.pw}, out: []int{oh, ow}}
		planes := 3
		x := make([]float32, planes*c.h*c.w)
		for i := range x {
			x[i] = r.Float32()*2 - 1
		}
		want := make([]float32, planes*oh*ow)
		got := make([]float32, planes*oh*ow)
		maxPool(x, want, nil, []int{1, planes, c.h, c.w}, win, false, make([]int, 10))
		maxPool2D(x, got, make([]float32, c.w), planes, []int{c.h, c.w}, win)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%+v: output %d = %v, want %v", c, i, got[i], want[i])
			}
		}
	}
}

package templates

import (
	"math"
	"math/rand/v2"
	"testing"
)

// convDW3x3 (vector kernel, padded phase planes) against the generic
// direct kernel plus epilogue, on odd sizes, both strides, asymmetric and
// zero padding, and each clamp activation.
func TestConvDW3x3(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	cases := []struct {
		h, w, s, pt, pl, pb, pr int
	}{
		{7, 7, 1, 1, 1, 1, 1}, {14, 14, 2, 1, 1, 1, 1}, {13, 11, 2, 1, 1, 1, 1}, {5, 9, 1, 0, 0, 0, 0},
		{9, 17, 2, 0, 0, 1, 1}, {3, 3, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1, 1}, {2, 3, 2, 1, 1, 1, 1},
		{33, 30, 1, 1, 2, 0, 1}, {112, 112, 1, 1, 1, 1, 1}, {112, 112, 2, 0, 0, 1, 1},
		{10, 10, 2, 2, 2, 0, 0}, {11, 12, 2, 0, 0, 2, 2}, {6, 9, 2, 1, 2, 2, 1}, {4, 4, 2, 3, 3, 3, 3}, {4, 4, 1, 3, 3, 3, 3},
	}
	acts := []fusedAct{{}, {kind: fusedActRelu}, {kind: fusedActClip, p0: -0.3, p1: 0.4}, {kind: fusedActClip, p0: 0, p1: 6}}
	for _, c := range cases {
		C := 5
		oh := (c.h+c.pt+c.pb-3)/c.s + 1
		ow := (c.w+c.pl+c.pr-3)/c.s + 1
		win := nnWin{k: []int{3, 3}, s: []int{c.s, c.s}, d: []int{1, 1}, pb: []int{c.pt, c.pl}, pe: []int{c.pb, c.pr}, out: []int{oh, ow}}
		x := vecRand(r, C*c.h*c.w, 1)
		w := vecRand(r, C*9, 1)
		bias := vecRand(r, C, 0.5)
		for ai, act := range acts {
			for _, b := range [][]float32{bias, nil} {
				want := make([]float32, C*oh*ow)
				convDepthwise2D(x, w, b, want, 0, C, []int{c.h, c.w}, win)
				for ch := 0; ch < C; ch++ {
					fusedEpilogue(want[ch*oh*ow:(ch+1)*oh*ow], 0, nil, 0, nil, false, act)
				}
				got := make([]float32, C*oh*ow)
				buf := make([]float32, convDW3x3Scratch(win))
				for i := range buf {
					buf[i] = float32(math.NaN()) // scratch comes dirty
				}
				convDW3x3(x, w, b, got, 0, 2, []int{c.h, c.w}, win, act, buf)
				convDW3x3(x, w, b, got, 2, C, []int{c.h, c.w}, win, act, buf)
				for i := range want {
					if math.Abs(float64(got[i]-want[i])) > 1e-5 || math.IsNaN(float64(got[i])) {
						t.Fatalf("%+v act %d bias %v: y[%d] = %v, want %v", c, ai, b != nil, i, got[i], want[i])
					}
				}
			}
		}
	}
}

package templates

import (
	"math/rand"
	"testing"
)

// TestSgemmPackIm2col compares the implicit im2col packing with
// im2col2D followed by sgemmPackBBlock, block by block (starting at panel boundaries), on odd sizes:
// padding, strides, dilations, kernels longer than the input, 1-D, maps
// narrower than a panel, k blocks starting mid-channel.
func TestSgemmPackIm2col(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	cases := []struct{ C, H, W, KH, KW, sh, sw, dh, dw, ph, pw, pe int }{
		{3, 7, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1},
		{2, 17, 19, 3, 3, 2, 2, 1, 1, 1, 1, 0},
		{5, 5, 23, 1, 1, 2, 2, 1, 1, 0, 0, 0},
		{1, 4, 4, 5, 5, 1, 1, 1, 1, 2, 2, 2},
		{4, 9, 11, 3, 2, 1, 3, 2, 2, 2, 1, 1},
		{2, 3, 40, 7, 7, 2, 2, 1, 1, 3, 3, 3},
		{3, 1, 37, 1, 5, 1, 1, 1, 1, 0, 2, 2},
		{2, 2, 3, 3, 3, 1, 1, 1, 1, 4, 4, 4},
		// ONNX test_Conv1d_pad2size1: width 1, kernel 5, pads 2+2 (the
		// outer taps read padding only).
		{4, 1, 1, 1, 5, 1, 1, 1, 1, 0, 2, 2},
	}
	for _, c := range cases {
		in := []int{c.H, c.W}
		win := nnWin{k: []int{c.KH, c.KW}, s: []int{c.sh, c.sw}, d: []int{c.dh, c.dw},
			pb: []int{c.ph, c.pw}, pe: []int{c.pe, c.pe}, out: make([]int, 2)}
		for i := range in {
			win.out[i] = (in[i]+win.pb[i]+win.pe[i]-(win.k[i]-1)*win.d[i]-1)/win.s[i] + 1
		}
		if win.out[0] <= 0 || win.out[1] <= 0 {
			t.Fatalf("bad case %+v", c)
		}
		x := make([]float32, c.C*c.H*c.W)
		for i := range x {
			x[i] = r.Float32() + 1
		}
		rows, cols := c.C*c.KH*c.KW, win.out[0]*win.out[1]
		col := make([]float32, rows*cols)
		im2col2D(x, col, c.C, in, win)
		im := convIm2colOf(x, in, win)
		for _, pc := range []int{0, 1, rows / 2} {
			kc := rows - pc
			for _, j0 := range []int{0, 16, cols / 3 / 16 * 16} {
				if j0 >= cols {
					continue
				}
				nr := cols - j0
				want := make([]float32, kc*sgemmRoundUp(nr, 16))
				sgemmPackBBlock(want, false, col, cols, pc, j0, kc, nr)
				got := make([]float32, len(want))
				for i := range got {
					got[i] = -7
				}
				sgemmPackIm2col(got, &im, pc, j0, kc, nr)
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("%+v pc=%d j0=%d: panel[%d] = %v, want %v", c, pc, j0, i, got[i], want[i])
					}
				}
			}
		}
	}
}

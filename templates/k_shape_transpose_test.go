package templates

import (
	"math/rand"
	"testing"
)

// TestTransposeNHWC checks Transpose's tiled path for the layout
// conversions against the general one (perm [0,2,3,1] and back, rank 4
// float32, odd sizes over the tile).
func TestTransposeNHWC(t *testing.T) {
	r := rand.New(rand.NewSource(8))
	X := nnRand(r, 2, 37, 5, 13)
	y := nnRun(t, "Transpose", 13, Attrs{"perm": []int64{0, 2, 3, 1}}, 1, X)[0]
	want := nhwcOf(X, F32)
	nnCheck(t, "to NHWC", y, want.Shape, nnF64(want), 0)
	back := nnRun(t, "Transpose", 13, Attrs{"perm": []int64{0, 3, 1, 2}}, 1, y)[0]
	nnCheck(t, "to NCHW", back, X.Shape, nnF64(X), 0)
}

// TestTransposeBlocks checks Transpose on float32 against the index map
// for random perms of ranks 2-6 with dims over the 32-wide tile, so the
// block transpose (transposeBlocks32), the blocked run copy and the
// strided walk all run; and the swin/attention perms by name.
func TestTransposeBlocks(t *testing.T) {
	r := rand.New(rand.NewSource(61))
	type tc struct {
		shape []int
		perm  []int
	}
	cases := []tc{
		{[]int{6, 7, 3, 3, 5}, []int{2, 0, 3, 1, 4}},       // QKV head split
		{[]int{4, 3, 37, 33}, []int{0, 1, 3, 2}},           // K^T
		{[]int{1, 3, 5, 2, 5, 9}, []int{0, 1, 3, 2, 4, 5}}, // window partition
		{[]int{2, 35, 1, 33}, []int{0, 3, 1, 2}},
		{[]int{70, 45}, []int{1, 0}},
	}
	for k := 0; k < 40; k++ {
		rank := 2 + r.Intn(5)
		shape := make([]int, rank)
		for i := range shape {
			shape[i] = 1 + r.Intn(6)
		}
		shape[r.Intn(rank)] = 30 + r.Intn(12)
		cases = append(cases, tc{shape, r.Perm(rank)})
	}
	for _, c := range cases {
		x := nnRand(r, c.shape...)
		p := make([]int64, len(c.perm))
		for i, v := range c.perm {
			p[i] = int64(v)
		}
		y := nnRun(t, "Transpose", 13, Attrs{"perm": p}, 1, x)[0]
		want := make([]int, len(c.shape))
		for i, q := range c.perm {
			want[i] = c.shape[q]
		}
		xs, ys := x.F32(), y.F32()
		if len(ys) != len(xs) {
			t.Fatalf("%v perm %v: %d elements, want %d", c.shape, c.perm, len(ys), len(xs))
		}
		idx := make([]int, len(want))
		in := make([]int, len(want))
		for o := range ys {
			rem := o
			for i := len(want) - 1; i >= 0; i-- {
				idx[i] = rem % want[i]
				rem /= want[i]
			}
			for i, q := range c.perm {
				in[q] = idx[i]
			}
			src := 0
			for i, d := range c.shape {
				src = src*d + in[i]
			}
			if ys[o] != xs[src] {
				t.Fatalf("%v perm %v: y[%d] = %v, want x[%d] = %v", c.shape, c.perm, o, ys[o], src, xs[src])
			}
		}
		for i, d := range want {
			if y.Shape[i] != d {
				t.Fatalf("%v perm %v: shape %v, want %v", c.shape, c.perm, y.Shape, want)
			}
		}
	}
}

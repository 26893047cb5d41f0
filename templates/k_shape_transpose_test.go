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
// at 1, 2 and 3 threads for random perms of ranks 2-6 with dims over the
// 32-wide tile, so the block transpose (transposeBlocks32), the blocked
// run copy and the strided walk all run, the swin/attention perms by
// name, and copies over copyParMin (split between threads, also inside
// one block's columns).
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
		{[]int{300, 260}, []int{1, 0}},                       // one block, split by columns
		{[]int{1, 37, 45, 41}, []int{0, 2, 3, 1}},            // to NHWC
		{[]int{3, 49, 3, 5, 40}, []int{2, 0, 3, 1, 4}},       // runs, split
		{[]int{5, 7, 41, 3, 11, 4}, []int{5, 3, 0, 2, 1, 4}}, // strided, split
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
		for _, threads := range []int{1, 2, 3} {
			n := nnNode("Transpose", 13, Attrs{"perm": p}, 1, x)
			n.Pool = NewWorkPool(WithThreads(threads))
			err := Kernels["Transpose"](n)
			n.Pool.Close()
			if err != nil {
				t.Fatal(err)
			}
			y := n.Out[0]
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
					t.Fatalf("%v perm %v, %d threads: y[%d] = %v, want x[%d] = %v", c.shape, c.perm, threads, o, ys[o], src, xs[src])
				}
			}
			for i, d := range want {
				if y.Shape[i] != d {
					t.Fatalf("%v perm %v: shape %v, want %v", c.shape, c.perm, y.Shape, want)
				}
			}
		}
	}
}

// TestShapeCopyThreads checks that the copy kernels that go through
// shapeCopy give at 2 and 3 threads exactly what they give at 1 (whose
// results the index-map tests check) on inputs over copyParMin: Slice
// with a negative step, Pad, Tile, Expand, Split, DepthToSpace.
func TestShapeCopyThreads(t *testing.T) {
	r := rand.New(rand.NewSource(62))
	x := nnRand(r, 5, 40, 37, 24)
	cases := []struct {
		op    string
		ver   int
		attrs Attrs
		nout  int
		in    []*Tensor
	}{
		{"Slice", 13, nil, 1, []*Tensor{x, nnI64(1, 35), nnI64(38, 2), nnI64(1, 2), nnI64(2, -1)}},
		{"Pad", 13, Attrs{"mode": "constant"}, 1, []*Tensor{x, nnI64(0, 2, 1, 3, 0, 1, 0, 2)}},
		{"Pad", 13, Attrs{"mode": "reflect"}, 1, []*Tensor{x, nnI64(0, 2, 1, 3, 0, 1, 0, 2)}},
		{"Tile", 13, nil, 1, []*Tensor{x, nnI64(1, 2, 1, 1)}},
		{"Expand", 13, nil, 1, []*Tensor{nnRand(r, 1, 40, 1, 24), nnI64(5, 40, 37, 24)}},
		{"Split", 13, Attrs{"axis": int64(2)}, 2, []*Tensor{x, nnI64(20, 17)}},
		{"DepthToSpace", 13, Attrs{"blocksize": int64(2)}, 1, []*Tensor{nnRand(r, 2, 32, 37, 30)}},
	}
	for _, c := range cases {
		var ref []*Tensor
		for _, threads := range []int{1, 2, 3} {
			n := nnNode(c.op, c.ver, c.attrs, c.nout, c.in...)
			n.Pool = NewWorkPool(WithThreads(threads))
			err := Kernels[c.op](n)
			n.Pool.Close()
			if err != nil {
				t.Fatalf("%s: %v", c.op, err)
			}
			if threads == 1 {
				ref = n.Out
				if ref[0].Len() < copyParMin {
					t.Fatalf("%s: %d elements, under copyParMin", c.op, ref[0].Len())
				}
				continue
			}
			for k, o := range n.Out {
				a, b := ref[k].F32(), o.F32()
				if len(a) != len(b) {
					t.Fatalf("%s output %d: %d elements at %d threads, %d at 1", c.op, k, len(b), threads, len(a))
				}
				for i := range a {
					if a[i] != b[i] {
						t.Fatalf("%s output %d, %d threads: [%d] = %v, 1 thread %v", c.op, k, threads, i, b[i], a[i])
					}
				}
			}
		}
	}
}

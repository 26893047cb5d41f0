package templates

import (
	"fmt"
	"math/rand"
	"testing"
)

// TestCol2Im compares with a direct reference: im2col's scatter written
// out for 2-D and 1-D and 3-D images, with pads, strides and dilations.
func TestCol2Im(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	for _, c := range []struct {
		img, blk, dil, pads, str []int
		N, C                     int
	}{
		{[]int{5, 5}, []int{1, 5}, []int{1, 1}, []int{0, 0, 0, 0}, []int{1, 1}, 1, 1},
		{[]int{5, 7}, []int{2, 3}, []int{2, 1}, []int{1, 0, 2, 1}, []int{2, 1}, 2, 3},
		{[]int{9}, []int{3}, []int{1}, []int{1, 2}, []int{3}, 1, 2},
		{[]int{3, 4, 5}, []int{2, 2, 2}, []int{1, 1, 2}, []int{0, 1, 0, 0, 0, 1}, []int{1, 2, 1}, 1, 2},
	} {
		k := len(c.img)
		cnt, L, pb := make([]int, k), 1, 1
		for i := range cnt {
			cnt[i] = (c.img[i]+c.pads[i]+c.pads[k+i]-(c.dil[i]*(c.blk[i]-1)+1))/c.str[i] + 1
			L *= cnt[i]
			pb *= c.blk[i]
		}
		X := nnRand(r, c.N, c.C*pb, L)
		x := nnF64(X)
		imgN := 1
		for _, d := range c.img {
			imgN *= d
		}
		want := make([]float64, c.N*c.C*imgN)
		for nc := 0; nc < c.N*c.C; nc++ {
			for b := 0; b < pb; b++ {
				for l := 0; l < L; l++ {
					bb, ll, off, ok := b, l, 0, true
					bi, li := make([]int, k), make([]int, k)
					for d := k - 1; d >= 0; d-- {
						bi[d], bb = bb%c.blk[d], bb/c.blk[d]
						li[d], ll = ll%cnt[d], ll/cnt[d]
					}
					for d := 0; d < k; d++ {
						p := li[d]*c.str[d] - c.pads[d] + bi[d]*c.dil[d]
						if p < 0 || p >= c.img[d] {
							ok = false
						}
						off = off*c.img[d] + p
					}
					if ok {
						want[nc*imgN+off] += x[(nc*pb+b)*L+l]
					}
				}
			}
		}
		i64 := func(v []int) []int64 {
			o := make([]int64, len(v))
			for i, x := range v {
				o[i] = int64(x)
			}
			return o
		}
		img, blk := tewI64([]int{k}, i64(c.img)...), tewI64([]int{k}, i64(c.blk)...)
		got := nnRun(t, "Col2Im", 18, Attrs{"dilations": i64(c.dil), "pads": i64(c.pads), "strides": i64(c.str)}, 1, X, img, blk)
		nnCheck(t, fmt.Sprintf("Col2Im %v", c.img), got[0], append([]int{c.N, c.C}, c.img...), want, 1e-5)
	}
}

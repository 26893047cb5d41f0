package templates

import (
	"fmt"
	"math"
	"math/rand"
	"sort"
	"testing"
)

func TestTopK(t *testing.T) {
	shape := []int{3, 7, 4}
	for _, dt := range []DType{F32, F64, F16, I64} {
		for _, axis := range []int{0, 1, -1} {
			for _, largest := range []int64{1, 0} {
				for _, ver := range []int{1, 11} {
					if ver == 1 && largest == 0 {
						continue
					}
					t.Run(fmt.Sprintf("%s_a%d_l%d_v%d", dt, axis, largest, ver), func(t *testing.T) {
						rng := rand.New(rand.NewSource(int64(axis)*3 + largest))
						x := miscRandF64(rng, shape...)
						for i := range x {
							x[i] = math.Round(x[i] * 3) // many ties
						}
						var xt *Tensor
						if dt == I64 {
							v := make([]int64, len(x))
							for i := range x {
								v[i] = int64(x[i])
							}
							xt = miscTensorI64(v, shape...)
						} else {
							xt = miscTensorF(dt, x, shape...)
						}
						ax := (axis + 3) % 3
						k := shape[ax] - 1
						n := &Node{Op: "TopK", Version: ver, Attrs: Attrs{"axis": int64(axis)}, Out: []*Tensor{{}, {}}}
						if ver == 1 {
							n.Attrs["k"] = int64(k)
							n.In = []*Tensor{xt}
						} else {
							n.Attrs["largest"] = largest
							n.In = []*Tensor{xt, miscTensorI64([]int64{int64(k)}, 1)}
						}
						miscRun(t, TopK, n)
						oshape := append([]int{}, shape...)
						oshape[ax] = k
						st := miscStrides(shape, make([]int, 3))
						ost := miscStrides(oshape, make([]int, 3))
						wv := make([]float64, len(x)/shape[ax]*k)
						wi := make([]int64, len(wv))
						for o := range wv {
							// Decompose output index, enumerate the slice.
							c := [3]int{o / ost[0], o / ost[1] % oshape[1], o % oshape[2]}
							j := c[ax]
							idx := make([]int, shape[ax])
							for i := range idx {
								idx[i] = i
							}
							at := func(i int) float64 {
								cc := c
								cc[ax] = i
								return x[cc[0]*st[0]+cc[1]*st[1]+cc[2]*st[2]]
							}
							sort.SliceStable(idx, func(a, b int) bool {
								if largest == 1 {
									return at(idx[a]) > at(idx[b])
								}
								return at(idx[a]) < at(idx[b])
							})
							wv[o], wi[o] = at(idx[j]), int64(idx[j])
						}
						miscCheckClose(t, "values", n.Out[0], wv, oshape, 0)
						miscWantI64(t, "indices", n.Out[1], wi, oshape)
						miscNoAllocs(t, n, TopK)
					})
				}
			}
		}
	}
}

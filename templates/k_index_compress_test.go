package templates

import (
	"math/rand"
	"testing"
)

func TestCompress(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	x := miscRandF64(rng, 3, 5, 2)
	xt := miscTensorF(F64, x, 3, 5, 2)
	cond := &Tensor{DType: Bool, Shape: []int{4}, Data: []bool{true, false, true, true}}
	n := &Node{Op: "Compress", Version: 11, Attrs: Attrs{"axis": int64(-2)}, In: []*Tensor{xt, cond}, Out: []*Tensor{{}}}
	miscRun(t, Compress, n)
	var want []float64
	for a := 0; a < 3; a++ {
		for b := 0; b < 5; b++ {
			for c := 0; c < 2; c++ {
				if b < 4 && cond.Bool()[b] {
					want = append(want, x[(a*5+b)*2+c])
				}
			}
		}
	}
	miscCheckClose(t, "compress axis", n.Out[0], want, []int{3, 3, 2}, 0)
	miscNoAllocs(t, n, Compress)
	n = &Node{Op: "Compress", Version: 9, In: []*Tensor{xt, cond}, Out: []*Tensor{{}}}
	miscRun(t, Compress, n)
	miscCheckClose(t, "compress flat", n.Out[0], []float64{x[0], x[2], x[3]}, []int{3}, 0)
}

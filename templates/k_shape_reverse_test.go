package templates

import (
	"math/rand"
	"testing"
)

func TestReverseSequence(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	// Both axis layouts.
	for _, bAx := range []int{0, 1} {
		T, B, in := 5, 3, 2
		lens := []int64{5, 2, 0}
		shape := []int{T, B, in}
		if bAx == 0 {
			shape = []int{B, T, in}
		}
		v := miscRandF64(rng, shape...)
		n := &Node{Op: "ReverseSequence", Version: 10, Attrs: Attrs{"batch_axis": int64(bAx), "time_axis": int64(1 - bAx)},
			In: []*Tensor{miscTensorF(F32, v, shape...), miscTensorI64(lens, B)}, Out: []*Tensor{{}}}
		miscRun(t, ReverseSequence, n)
		want := make([]float64, len(v))
		at := func(tt, b, i int) int {
			if bAx == 0 {
				return (b*T+tt)*in + i
			}
			return (tt*B+b)*in + i
		}
		for b := 0; b < B; b++ {
			for tt := 0; tt < T; tt++ {
				s := tt
				if tt < int(lens[b]) {
					s = int(lens[b]) - 1 - tt
				}
				for i := 0; i < in; i++ {
					want[at(tt, b, i)] = v[at(s, b, i)]
				}
			}
		}
		miscCheckClose(t, "reverse", n.Out[0], miscRepr(F32, want), shape, 0)
		miscNoAllocs(t, n, ReverseSequence)
	}
}

package templates

import (
	"math/rand"
	"testing"
)

func TestCompressReverseShrink(t *testing.T) {
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

	// ReverseSequence, both axis layouts.
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

	// Shrink.
	for _, dt := range []DType{F32, F64, F16} {
		v := miscRepr(dt, miscRandF64(rng, 4, 9))
		n := &Node{Op: "Shrink", Version: 9, Attrs: Attrs{"bias": float32(0.25), "lambd": float32(0.4)}, In: []*Tensor{miscTensorF(dt, v, 4, 9)}, Out: []*Tensor{{}}}
		miscRun(t, Shrink, n)
		want := make([]float64, len(v))
		b, l := float64(float32(0.25)), float64(float32(0.4))
		for i, x := range v {
			if x < -l {
				want[i] = x + b
			} else if x > l {
				want[i] = x - b
			}
		}
		miscCheckClose(t, "shrink", n.Out[0], want, []int{4, 9}, miscTol(dt))
	}
}

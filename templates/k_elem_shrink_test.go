package templates

import (
	"math/rand"
	"testing"
)

func TestShrink(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
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

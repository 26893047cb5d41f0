package templates

import (
	"math/rand"
	"testing"
)

// TestReduceBool: ReduceMax is any, ReduceMin is all (opset 20), also over
// an empty axis (false for max, true for min).
func TestReduceBool(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for _, shape := range [][]int{{3, 4, 5}, {2, 0, 3}} {
		x := &Tensor{}
		x.Resize(Bool, shape...)
		for i := range x.Bool() {
			x.Bool()[i] = r.Intn(4) == 0
		}
		for _, op := range []string{"ReduceMax", "ReduceMin"} {
			n := tewNode(op, 20, Attrs{"keepdims": int64(0)}, x, tewI64([]int{1}, 1))
			tewRun(t, n)
			out := n.Out[0]
			if !tewSameShape(out.Shape, []int{shape[0], shape[2]}) {
				t.Fatalf("%s: shape %v", op, out.Shape)
			}
			for i := 0; i < shape[0]; i++ {
				for k := 0; k < shape[2]; k++ {
					want := op == "ReduceMin"
					for j := 0; j < shape[1]; j++ {
						v := x.Bool()[(i*shape[1]+j)*shape[2]+k]
						if op == "ReduceMax" {
							want = want || v
						} else {
							want = want && v
						}
					}
					if got := out.Bool()[i*shape[2]+k]; got != want {
						t.Fatalf("%s %v at (%d,%d): %v, want %v", op, shape, i, k, got, want)
					}
				}
			}
		}
	}
}

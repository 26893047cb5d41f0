package templates

import (
	"fmt"
	"math/rand"
	"testing"
)

// TestCumProd checks every axis, exclusive and reverse on float and integer
// data against a direct float64 (exact for the small integers) reference.
func TestCumProd(t *testing.T) {
	r := rand.New(rand.NewSource(13))
	shape := []int{3, 4, 5}
	for _, dt := range []DType{F32, F64, F16, I32, I64, U8, I16, U64} {
		x := tewRand(r, dt, 1, 3, shape...)
		for axis := -3; axis < 3; axis++ {
			a := (axis + 3) % 3
			for _, excl := range []int64{0, 1} {
				for _, rev := range []int64{0, 1} {
					n := tewNode("CumProd", 26, Attrs{"exclusive": excl, "reverse": rev}, x, tewI64(nil, int64(axis)))
					tewRun(t, n)
					idx := make([]int, 3)
					for o := 0; o < x.Len(); o++ {
						tewUnravel(o, shape, idx)
						want := 1.0
						for k := 0; k < shape[a]; k++ {
							take := k < idx[a] || (excl == 0 && k == idx[a])
							if rev == 1 {
								take = k > idx[a] || (excl == 0 && k == idx[a])
							}
							if take {
								j := append([]int(nil), idx...)
								j[a] = k
								want *= tewGet(x, tewRavel(j, shape))
							}
						}
						if dt == U8 {
							want = float64(uint8(int64(want)))
						}
						got := tewGet(n.Out[0], o)
						tol := 1e-5 * want
						if dt == F16 {
							tol = 2e-3 * want
						}
						if d := got - want; d > tol || d < -tol {
							t.Fatalf("%s", fmt.Sprintf("CumProd %v axis %d excl %d rev %d at %v: %v, want %v", dt, axis, excl, rev, idx, got, want))
						}
					}
				}
			}
		}
	}
}

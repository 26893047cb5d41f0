package templates

import (
	"math"
	"math/rand"
	"testing"
)

// TestRMSNormalization checks RMSNormalization against a float64 reference
// on random odd shapes, every axis, scales broadcasting from a suffix or
// with size-1 dims, in every float dtype.
func TestRMSNormalization(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	for _, c := range []struct {
		x     []int
		axis  int
		scale []int
	}{
		{[]int{3, 7}, -1, []int{7}},
		{[]int{3, 7}, 0, []int{3, 7}},
		{[]int{2, 5, 9}, 1, []int{5, 9}},
		{[]int{2, 5, 9}, 1, []int{9}},
		{[]int{2, 5, 9}, -2, []int{5, 1}},
		{[]int{3, 2, 5, 7}, 2, []int{1}},
	} {
		for _, dt := range nnFloatTypes {
			X, S := nnAs(nnRand(r, c.x...), dt), nnAs(nnRand(r, c.scale...), dt)
			x, s := nnF64(X), nnF64(S)
			axis := c.axis
			if axis < 0 {
				axis += len(c.x)
			}
			inner := nnProd(c.x[axis:])
			want := make([]float64, len(x))
			ns := c.x[axis:]
			for row := 0; row < len(x)/inner; row++ {
				ms := 0.0
				for j := 0; j < inner; j++ {
					ms += x[row*inner+j] * x[row*inner+j]
				}
				d := math.Sqrt(ms/float64(inner) + 1e-3)
				for j := 0; j < inner; j++ {
					// Scale index by broadcasting j's coordinates in ns.
					o, acc, rem := 0, 1, j
					for a := len(ns) - 1; a >= 0; a-- {
						cd := rem % ns[a]
						rem /= ns[a]
						if k := a - (len(ns) - len(c.scale)); k >= 0 {
							if c.scale[k] == 1 {
								cd = 0
							}
							o += cd * acc
							acc *= c.scale[k]
						}
					}
					want[row*inner+j] = x[row*inner+j] / d * s[o]
				}
			}
			got := nnRun(t, "RMSNormalization", 23, Attrs{"axis": int64(c.axis), "epsilon": float32(1e-3)}, 1, X, S)[0]
			nnCheck(t, "rms "+dt.String(), got, c.x, want, nnTol(dt))
		}
	}
}

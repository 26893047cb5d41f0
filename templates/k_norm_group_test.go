package templates

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
)

// TestGroupNormalization checks both versions against a float64 reference
// on awkward sizes: v18 has per-group scale and bias, v21 per-channel.
func TestGroupNormalization(t *testing.T) {
	r := rand.New(rand.NewSource(31))
	for _, c := range []struct {
		xs []int
		G  int
	}{{[]int{2, 6, 5, 3}, 3}, {[]int{3, 4, 7}, 2}, {[]int{1, 5, 1, 1, 3}, 5}, {[]int{2, 4}, 1}} {
		N, C := c.xs[0], c.xs[1]
		inner := 1
		for _, d := range c.xs[2:] {
			inner *= d
		}
		for _, ver := range []int{18, 21} {
			np := C
			if ver == 18 {
				np = c.G
			}
			X, S, B := nnRand(r, c.xs...), nnRand(r, np), nnRand(r, np)
			for _, dt := range nnFloatTypes {
				in := nnInputsAs([]*Tensor{X, S, B}, dt)
				x, s, b := nnF64(in[0]), nnF64(in[1]), nnF64(in[2])
				eps := float64(float32(1e-3))
				want := make([]float64, len(x))
				cpg := C / c.G
				for i := 0; i < N; i++ {
					for g := 0; g < c.G; g++ {
						lo, hi := (i*C+g*cpg)*inner, (i*C+(g+1)*cpg)*inner
						var mu, vr float64
						for _, v := range x[lo:hi] {
							mu += v
						}
						mu /= float64(hi - lo)
						for _, v := range x[lo:hi] {
							vr += (v - mu) * (v - mu)
						}
						vr /= float64(hi - lo)
						for p := lo; p < hi; p++ {
							ch := (p / inner) % C
							k := ch
							if ver == 18 {
								k = ch / cpg
							}
							want[p] = (x[p]-mu)/math.Sqrt(vr+eps)*s[k] + b[k]
						}
					}
				}
				got := nnRun(t, "GroupNormalization", ver, Attrs{"num_groups": int64(c.G), "epsilon": float32(1e-3)}, 1, in...)
				nnCheck(t, fmt.Sprintf("GroupNormalization v%d %v %v", ver, c.xs, dt), got[0], c.xs, want, nnTol(dt)*10)
			}
		}
	}
}

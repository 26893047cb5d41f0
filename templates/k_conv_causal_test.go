package templates

import (
	"math"
	"math/rand"
	"testing"
)

// TestCausalConvWithState checks CausalConvWithState against a float64
// direct sum over past taps (reading the past state or zeros for negative
// positions) on odd sizes, K = 1 included, with bias, past state and
// silu/swish, in f32 and f16.
func TestCausalConvWithState(t *testing.T) {
	r := rand.New(rand.NewSource(13))
	for _, c := range []struct {
		B, C, L, K int
		bias, past bool
		act        string
		dt         DType
	}{
		{2, 3, 7, 3, false, false, "none", F32},
		{1, 5, 2, 4, true, true, "silu", F32},
		{3, 1, 9, 1, true, false, "swish", F32},
		{2, 4, 1, 5, false, true, "none", F32},
		{2, 3, 6, 3, true, true, "silu", F16},
	} {
		X, W := nnAs(nnRand(r, c.B, c.C, c.L), c.dt), nnAs(nnRand(r, c.C, 1, c.K), c.dt)
		in := []*Tensor{X, W, nil, nil}
		if c.bias {
			in[2] = nnAs(nnRand(r, c.C), c.dt)
		}
		if c.past {
			in[3] = nnAs(nnRand(r, c.B, c.C, c.K-1), c.dt)
		}
		x, w := nnF64(X), nnF64(W)
		at := func(b, ch, p int) float64 { // p in [-(K-1), L)
			if p >= 0 {
				return x[(b*c.C+ch)*c.L+p]
			}
			if !c.past {
				return 0
			}
			return nnF64(in[3])[(b*c.C+ch)*(c.K-1)+c.K-1+p]
		}
		want := make([]float64, c.B*c.C*c.L)
		wantS := make([]float64, c.B*c.C*(c.K-1))
		for b := 0; b < c.B; b++ {
			for ch := 0; ch < c.C; ch++ {
				for tt := 0; tt < c.L; tt++ {
					s := 0.0
					if c.bias {
						s = nnF64(in[2])[ch]
					}
					for j := 0; j < c.K; j++ {
						s += w[ch*c.K+j] * at(b, ch, tt-(c.K-1)+j)
					}
					if c.act != "none" {
						s *= 1 / (1 + math.Exp(-s))
					}
					want[(b*c.C+ch)*c.L+tt] = s
				}
				for j := 0; j < c.K-1; j++ {
					wantS[(b*c.C+ch)*(c.K-1)+j] = at(b, ch, c.L-(c.K-1)+j)
				}
			}
		}
		n := 4
		for n > 2 && in[n-1] == nil {
			n--
		}
		out := nnRun(t, "CausalConvWithState", 27, Attrs{"activation": c.act}, 2, in[:n]...)
		tol := nnTol(c.dt)
		nnCheck(t, "causal conv", out[0], []int{c.B, c.C, c.L}, want, tol)
		nnCheck(t, "causal conv state", out[1], []int{c.B, c.C, c.K - 1}, wantS, tol)
	}
}

package templates

import (
	"math/rand"
	"testing"
)

// TestRotaryEmbedding checks RotaryEmbedding against a float64 reference
// that builds each head's rotated vector from its complex-number form, on
// 3-D and 4-D inputs, with and without position_ids, interleaved or not,
// partial rotary dims, in f32, f16 and bf16.
func TestRotaryEmbedding(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	for _, c := range []struct {
		three       bool
		B, H, S, Dh int
		rot         int
		pos         bool
		interleaved bool
	}{
		{false, 2, 3, 5, 8, 0, true, false},
		{false, 2, 3, 5, 8, 0, false, true},
		{true, 3, 2, 7, 6, 4, true, true},
		{true, 1, 5, 3, 10, 6, false, false},
		{false, 2, 1, 4, 12, 2, true, false},
	} {
		for _, dt := range []DType{F32, F16, BF16} {
			var xsh []int
			if c.three {
				xsh = []int{c.B, c.S, c.H * c.Dh}
			} else {
				xsh = []int{c.B, c.H, c.S, c.Dh}
			}
			R := c.rot
			if R == 0 {
				R = c.Dh
			}
			maxPos := 11
			X := nnAs(nnRand(r, xsh...), dt)
			var C, Sn, Pos *Tensor
			var ids []int64
			if c.pos {
				C, Sn = nnAs(nnRand(r, maxPos, R/2), dt), nnAs(nnRand(r, maxPos, R/2), dt)
				ids = make([]int64, c.B*c.S)
				for i := range ids {
					ids[i] = int64(r.Intn(maxPos))
				}
				Pos = nnI64(ids...)
				Pos.SetShape([]int{c.B, c.S})
			} else {
				C, Sn = nnAs(nnRand(r, c.B, c.S, R/2), dt), nnAs(nnRand(r, c.B, c.S, R/2), dt)
			}
			x, cs, sn := nnF64(X), nnF64(C), nnF64(Sn)
			want := append([]float64(nil), x...)
			at := func(b, h, s, e int) int {
				if c.three {
					return (b*c.S+s)*c.H*c.Dh + h*c.Dh + e
				}
				return ((b*c.H+h)*c.S+s)*c.Dh + e
			}
			for b := 0; b < c.B; b++ {
				for s := 0; s < c.S; s++ {
					row := b*c.S + s
					if c.pos {
						row = int(ids[b*c.S+s])
					}
					for h := 0; h < c.H; h++ {
						for i := 0; i < R/2; i++ {
							a, bb := at(b, h, s, i), at(b, h, s, i+R/2)
							if c.interleaved {
								a, bb = at(b, h, s, 2*i), at(b, h, s, 2*i+1)
							}
							z := complex(x[a], x[bb]) * complex(cs[row*R/2+i], sn[row*R/2+i])
							want[a], want[bb] = real(z), imag(z)
						}
					}
				}
			}
			attrs := Attrs{"rotary_embedding_dim": int64(c.rot)}
			if c.interleaved {
				attrs["interleaved"] = int64(1)
			}
			if c.three {
				attrs["num_heads"] = int64(c.H)
			}
			in := []*Tensor{X, C, Sn}
			if Pos != nil {
				in = append(in, Pos)
			}
			got := nnRun(t, "RotaryEmbedding", 23, attrs, 1, in...)[0]
			nnCheck(t, "rotary "+dt.String(), got, xsh, want, nnTol(dt))
		}
	}
}

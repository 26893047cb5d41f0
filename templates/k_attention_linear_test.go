package templates

import (
	"math"
	"math/rand"
	"testing"
)

// TestLinearAttention checks LinearAttention against a float64 reference
// that keeps the state transposed (Sᵀ [dv, dk]) and unpacks every tensor to
// [B, H, T, d] first, for all four update rules, GQA, per-head and per-dim
// decay, beta per head or shared, erase_gate, a past state, in f32 and f16.
func TestLinearAttention(t *testing.T) {
	r := rand.New(rand.NewSource(9))
	for _, c := range []struct {
		rule          string
		B, T, hq, hkv int
		dk, dv        int
		past, perDim  bool
		betaShared    bool
		erase         bool
		scale         float64
		dt            DType
	}{
		{rule: "linear", B: 2, T: 5, hq: 3, hkv: 3, dk: 4, dv: 3},
		{rule: "gated", B: 1, T: 7, hq: 4, hkv: 2, dk: 3, dv: 5, past: true},
		{rule: "gated", B: 2, T: 3, hq: 2, hkv: 2, dk: 5, dv: 2, perDim: true},
		{rule: "delta", B: 2, T: 4, hq: 6, hkv: 3, dk: 3, dv: 3, betaShared: true, scale: 0.7},
		{rule: "gated_delta", B: 3, T: 6, hq: 2, hkv: 1, dk: 4, dv: 6, past: true, erase: true},
		{rule: "gated_delta", B: 1, T: 1, hq: 2, hkv: 2, dk: 3, dv: 3, past: true, dt: F16},
	} {
		dt := c.dt
		if dt == Undefined {
			dt = F32
		}
		gating := c.rule == "gated" || c.rule == "gated_delta"
		delta := c.rule == "delta" || c.rule == "gated_delta"
		small := func(sh ...int) *Tensor { // keeps the recurrence bounded
			x := nnRand(r, sh...)
			for i, v := range x.F32() {
				x.F32()[i] = v * 0.3
			}
			return nnAs(x, dt)
		}
		Q, K, V := small(c.B, c.T, c.hq*c.dk), small(c.B, c.T, c.hkv*c.dk), small(c.B, c.T, c.hkv*c.dv)
		in := []*Tensor{Q, K, V, nil, nil, nil, nil}
		if c.past {
			in[3] = small(c.B, c.hkv, c.dk, c.dv)
		}
		if gating {
			if c.perDim {
				in[4] = small(c.B, c.T, c.hkv*c.dk)
			} else {
				in[4] = small(c.B, c.T, c.hkv)
			}
		}
		if delta {
			if c.betaShared {
				in[5] = small(c.B, c.T, 1)
			} else {
				in[5] = small(c.B, c.T, c.hkv)
			}
		}
		if c.erase {
			in[6] = small(c.B, c.T, c.hkv*c.dk)
		}
		unpack := func(x *Tensor, h int) [][][][]float64 { // [B][H][T][d]
			v := nnF64(x)
			d := x.Shape[2] / h
			out := make([][][][]float64, c.B)
			for b := range out {
				out[b] = make([][][]float64, h)
				for hh := range out[b] {
					out[b][hh] = make([][]float64, c.T)
					for t := range out[b][hh] {
						out[b][hh][t] = v[(b*c.T+t)*h*d+hh*d:][:d]
					}
				}
			}
			return out
		}
		q, k, v := unpack(Q, c.hq), unpack(K, c.hkv), unpack(V, c.hkv)
		scale := c.scale
		if scale == 0 {
			scale = 1 / math.Sqrt(float64(c.dk))
		}
		want := make([]float64, c.B*c.T*c.hq*c.dv)
		wantS := make([]float64, c.B*c.hkv*c.dk*c.dv)
		for b := 0; b < c.B; b++ {
			for h := 0; h < c.hkv; h++ {
				st := make([][]float64, c.dv) // Sᵀ
				for j := range st {
					st[j] = make([]float64, c.dk)
					if c.past {
						p := nnF64(in[3])
						for i := range st[j] {
							st[j][i] = p[((b*c.hkv+h)*c.dk+i)*c.dv+j]
						}
					}
				}
				for t := 0; t < c.T; t++ {
					if gating {
						g := nnF64(in[4])
						for i := 0; i < c.dk; i++ {
							gi := g[(b*c.T+t)*c.hkv+h]
							if c.perDim {
								gi = g[(b*c.T+t)*c.hkv*c.dk+h*c.dk+i]
							}
							for j := 0; j < c.dv; j++ {
								st[j][i] *= math.Exp(gi)
							}
						}
					}
					vt := append([]float64(nil), v[b][h][t]...)
					if delta {
						bs := nnF64(in[5])
						beta := bs[(b*c.T+t)*in[5].Shape[2]+min(h, in[5].Shape[2]-1)]
						ke := append([]float64(nil), k[b][h][t]...)
						if c.erase {
							e := unpack(in[6], c.hkv)
							for i := range ke {
								ke[i] *= e[b][h][t][i]
							}
						}
						for j := range vt {
							dot := 0.0
							for i := range ke {
								dot += st[j][i] * ke[i]
							}
							vt[j] = beta * (vt[j] - dot)
						}
					}
					for j := range vt {
						for i := 0; i < c.dk; i++ {
							st[j][i] += vt[j] * k[b][h][t][i]
						}
					}
					for g := 0; g < c.hq/c.hkv; g++ {
						hq := h*(c.hq/c.hkv) + g
						for j := 0; j < c.dv; j++ {
							dot := 0.0
							for i := 0; i < c.dk; i++ {
								dot += q[b][hq][t][i] * st[j][i]
							}
							want[(b*c.T+t)*c.hq*c.dv+hq*c.dv+j] = scale * dot
						}
					}
				}
				for j := range st {
					for i := range st[j] {
						wantS[((b*c.hkv+h)*c.dk+i)*c.dv+j] = st[j][i]
					}
				}
			}
		}
		attrs := Attrs{"q_num_heads": int64(c.hq), "kv_num_heads": int64(c.hkv), "update_rule": c.rule}
		if c.scale != 0 {
			attrs["scale"] = float32(c.scale)
		}
		n := len(in)
		for n > 3 && in[n-1] == nil {
			n--
		}
		out := nnRun(t, "LinearAttention", 27, attrs, 2, in[:n]...)
		tol := nnTol(dt)
		if dt == F32 {
			tol = 1e-5
		}
		nnCheck(t, c.rule+" output", out[0], []int{c.B, c.T, c.hq * c.dv}, want, tol)
		nnCheck(t, c.rule+" state", out[1], []int{c.B, c.hkv, c.dk, c.dv}, wantS, tol)
	}
}

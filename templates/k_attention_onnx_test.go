package templates

import (
	"math"
	"math/rand"
	"testing"
)

// attnRef is a float64 reference for ONNX Attention written as the spec's
// steps on whole tensors: 3-D inputs split into heads, past concatenated,
// a full [B, Hq, Sq, T] bias built from mask, causal and padding parts, KV
// heads repeated, then scores, softcap, bias, softmax and the V product.
func attnRef(q, k, v []float64, qsh, ksh, vsh []int, hq, hkv int, mask []float64, msh []int, mbool []bool,
	pk, pv []float64, P int, nonpad []int64, scale, softcap float64, causal bool, mode int) (y, pkOut, pvOut, qk []float64) {
	B := qsh[0]
	to4 := func(x []float64, sh []int, h int) ([]float64, int, int) { // -> [B, h, S, d]
		if len(sh) == 4 {
			return x, sh[2], sh[3]
		}
		S, d := sh[1], sh[2]/h
		out := make([]float64, len(x))
		for b := 0; b < B; b++ {
			for s := 0; s < S; s++ {
				for hh := 0; hh < h; hh++ {
					for e := 0; e < d; e++ {
						out[((b*h+hh)*S+s)*d+e] = x[(b*S+s)*h*d+hh*d+e]
					}
				}
			}
		}
		return out, S, d
	}
	if len(qsh) == 4 {
		hq, hkv = qsh[1], ksh[1]
	}
	Q, Sq, D := to4(q, qsh, hq)
	K, Skv, _ := to4(k, ksh, hkv)
	V, _, Dv := to4(v, vsh, hkv)
	T := P + Skv
	cat := func(past, x []float64, d int) []float64 {
		out := make([]float64, B*hkv*T*d)
		for bh := 0; bh < B*hkv; bh++ {
			for t := 0; t < T; t++ {
				for e := 0; e < d; e++ {
					if t < P {
						out[(bh*T+t)*d+e] = past[(bh*P+t)*d+e]
					} else {
						out[(bh*T+t)*d+e] = x[(bh*Skv+t-P)*d+e]
					}
				}
			}
		}
		return out
	}
	pkOut, pvOut = cat(pk, K, D), cat(pv, V, Dv)
	bias := make([]float64, B*hq*Sq*T)
	idx4 := func(b, h, i, j int) int { return ((b*hq+h)*Sq+i)*T + j }
	for b := 0; b < B; b++ {
		for h := 0; h < hq; h++ {
			for i := 0; i < Sq; i++ {
				for j := 0; j < T; j++ {
					x := 0.0
					if msh != nil {
						last := msh[len(msh)-1]
						if j >= last {
							x = math.Inf(-1)
						} else {
							// Broadcast index into the mask.
							full := []int{b, h, i, j}
							o, acc := 0, 1
							for a := len(msh) - 1; a >= 0; a-- {
								c := full[4-len(msh)+a]
								if msh[a] == 1 {
									c = 0
								}
								o += c * acc
								acc *= msh[a]
							}
							if mbool != nil {
								if !mbool[o] {
									x = math.Inf(-1)
								}
							} else {
								x = mask[o]
							}
						}
					}
					if causal {
						off := P
						if P == 0 && nonpad != nil {
							off = int(nonpad[b]) - Sq
						}
						if j > i+off {
							x += math.Inf(-1)
						}
					}
					if nonpad != nil && j >= int(nonpad[b]) {
						x += math.Inf(-1)
					}
					bias[idx4(b, h, i, j)] = x
				}
			}
		}
	}
	qk = make([]float64, B*hq*Sq*T)
	y4 := make([]float64, B*hq*Sq*Dv)
	g := hq / hkv
	for b := 0; b < B; b++ {
		for h := 0; h < hq; h++ {
			kh := h / g
			for i := 0; i < Sq; i++ {
				s := make([]float64, T)
				for j := 0; j < T; j++ {
					for e := 0; e < D; e++ {
						s[j] += Q[((b*hq+h)*Sq+i)*D+e] * pkOut[((b*hkv+kh)*T+j)*D+e]
					}
					s[j] *= scale
					if softcap > 0 {
						s[j] = softcap * math.Tanh(s[j]/softcap)
					}
					if mode <= 1 {
						qk[idx4(b, h, i, j)] = s[j]
					}
					s[j] += bias[idx4(b, h, i, j)]
					if mode == 2 {
						qk[idx4(b, h, i, j)] = s[j]
					}
				}
				mx := math.Inf(-1)
				for _, x := range s {
					mx = math.Max(mx, x)
				}
				sum := 0.0
				for j := range s {
					s[j] = math.Exp(s[j] - mx)
					sum += s[j]
				}
				for j := range s {
					s[j] /= sum
					if mode == 3 {
						qk[idx4(b, h, i, j)] = s[j]
					}
					for e := 0; e < Dv; e++ {
						y4[((b*hq+h)*Sq+i)*Dv+e] += s[j] * pvOut[((b*hkv+kh)*T+j)*Dv+e]
					}
				}
			}
		}
	}
	if len(qsh) == 4 {
		return y4, pkOut, pvOut, qk
	}
	y = make([]float64, len(y4))
	for b := 0; b < B; b++ {
		for h := 0; h < hq; h++ {
			for i := 0; i < Sq; i++ {
				for e := 0; e < Dv; e++ {
					y[((b*Sq+i)*hq+h)*Dv+e] = y4[((b*hq+h)*Sq+i)*Dv+e]
				}
			}
		}
	}
	return y, pkOut, pvOut, qk
}

// TestAttentionONNX checks ONNX Attention against attnRef on random data of
// odd sizes: 3-D and 4-D inputs, GQA, bool and float masks of every rank
// (some shorter than the keys), causal with and without a past, padding by
// nonpad_kv_seqlen, scale, softcap, every qk_matmul_output_mode, and f16.
func TestAttentionONNX(t *testing.T) {
	r := rand.New(rand.NewSource(23))
	type tc struct {
		three          bool
		B, hq, hkv     int
		sq, skv, d, dv int
		P              int
		msh            []int
		mbool          bool
		causal         bool
		nonpad         []int64
		scale, softcap float64
		mode           int
		dt             DType
	}
	cases := []tc{
		{three: true, B: 2, hq: 3, hkv: 3, sq: 5, skv: 7, d: 3, dv: 5},
		{B: 3, hq: 6, hkv: 2, sq: 4, skv: 9, d: 5, dv: 7, msh: []int{4, 9}},
		{B: 2, hq: 3, hkv: 1, sq: 5, skv: 6, d: 3, dv: 2, msh: []int{2, 1, 5, 4}, causal: true, P: 3},
		{three: true, B: 2, hq: 4, hkv: 2, sq: 3, skv: 3, d: 7, dv: 3, P: 5, msh: []int{3, 8}, mode: 2, softcap: 1.5},
		{B: 1, hq: 2, hkv: 2, sq: 7, skv: 7, d: 4, dv: 4, causal: true, mode: 3, scale: 0.3},
		{B: 2, hq: 3, hkv: 3, sq: 4, skv: 6, d: 5, dv: 3, msh: []int{2, 3, 4, 6}, mbool: true, mode: 1, softcap: 2},
		{B: 2, hq: 2, hkv: 1, sq: 3, skv: 8, d: 3, dv: 5, msh: []int{2, 2, 3, 5}, nonpad: []int64{6, 8}},
		{B: 2, hq: 2, hkv: 2, sq: 2, skv: 7, d: 3, dv: 3, causal: true, nonpad: []int64{5, 7}},
		{B: 2, hq: 4, hkv: 2, sq: 3, skv: 5, d: 6, dv: 6, P: 2, msh: []int{3, 7}, dt: F16},
	}
	for ci, c := range cases {
		var qsh, ksh, vsh []int
		if c.three {
			qsh, ksh, vsh = []int{c.B, c.sq, c.hq * c.d}, []int{c.B, c.skv, c.hkv * c.d}, []int{c.B, c.skv, c.hkv * c.dv}
		} else {
			qsh, ksh, vsh = []int{c.B, c.hq, c.sq, c.d}, []int{c.B, c.hkv, c.skv, c.d}, []int{c.B, c.hkv, c.skv, c.dv}
		}
		dt := c.dt
		if dt == Undefined {
			dt = F32
		}
		Q, K, V := nnAs(nnRand(r, qsh...), dt), nnAs(nnRand(r, ksh...), dt), nnAs(nnRand(r, vsh...), dt)
		in := []*Tensor{Q, K, V, nil, nil, nil, nil}
		var mask []float64
		var mb []bool
		if c.msh != nil {
			if c.mbool {
				M := &Tensor{}
				M.Resize(Bool, c.msh...)
				mb = M.Bool()
				for i := range mb {
					mb[i] = r.Intn(4) != 0
				}
				mb[0] = true
				in[3] = M
			} else {
				M := nnAs(nnRand(r, c.msh...), dt)
				mask = nnF64(M)
				in[3] = M
			}
		}
		var pk, pv []float64
		if c.P > 0 {
			PK, PV := nnAs(nnRand(r, c.B, c.hkv, c.P, c.d), dt), nnAs(nnRand(r, c.B, c.hkv, c.P, c.dv), dt)
			pk, pv = nnF64(PK), nnF64(PV)
			in[4], in[5] = PK, PV
		}
		if c.nonpad != nil {
			in[6] = nnI64(c.nonpad...)
		}
		attrs := Attrs{"qk_matmul_output_mode": int64(c.mode)}
		if c.three {
			attrs["q_num_heads"], attrs["kv_num_heads"] = int64(c.hq), int64(c.hkv)
		}
		scale := 1 / math.Sqrt(float64(c.d))
		if c.scale != 0 {
			attrs["scale"] = float32(c.scale)
			scale = float64(float32(c.scale))
		}
		if c.softcap != 0 {
			attrs["softcap"] = float32(c.softcap)
		}
		if c.causal {
			attrs["is_causal"] = int64(1)
		}
		y, wpk, wpv, wqk := attnRef(nnF64(Q), nnF64(K), nnF64(V), qsh, ksh, vsh, c.hq, c.hkv, mask, c.msh, mb, pk, pv, c.P,
			c.nonpad, scale, float64(float32(c.softcap)), c.causal, c.mode)
		out := nnRun(t, "Attention", 24, attrs, 4, in...)
		T := c.P + c.skv
		ysh := []int{c.B, c.hq, c.sq, c.dv}
		if c.three {
			ysh = []int{c.B, c.sq, c.hq * c.dv}
		}
		tol := nnTol(dt)
		if dt == F32 {
			tol = 1e-5
		}
		what := func(s string) string { return s + " case " + string(rune('0'+ci)) }
		nnCheck(t, what("Y"), out[0], ysh, y, tol)
		nnCheck(t, what("present_key"), out[1], []int{c.B, c.hkv, T, c.d}, wpk, tol)
		nnCheck(t, what("present_value"), out[2], []int{c.B, c.hkv, T, c.dv}, wpv, tol)
		nnCheck(t, what("qk"), out[3], []int{c.B, c.hq, c.sq, T}, wqk, tol)
		if out[0].DType != dt {
			t.Fatalf("case %d: Y dtype %v, want %v", ci, out[0].DType, dt)
		}
	}
}

// TestFlexAttention checks FlexAttention without subgraphs against attnRef
// (no mask, no past) with GQA, an explicit scale and f64, and that a
// subgraph attribute is refused.
func TestFlexAttention(t *testing.T) {
	r := rand.New(rand.NewSource(29))
	for _, c := range []struct {
		B, hq, hkv, sq, sk, d, dv int
		scale                     float32
		dt                        DType
	}{
		{2, 4, 2, 5, 7, 3, 6, 0, F32},
		{1, 3, 3, 4, 2, 5, 5, 0.2, F64},
		{2, 2, 1, 3, 3, 8, 4, 0, F16},
	} {
		qsh, ksh, vsh := []int{c.B, c.hq, c.sq, c.d}, []int{c.B, c.hkv, c.sk, c.d}, []int{c.B, c.hkv, c.sk, c.dv}
		Q, K, V := nnAs(nnRand(r, qsh...), c.dt), nnAs(nnRand(r, ksh...), c.dt), nnAs(nnRand(r, vsh...), c.dt)
		attrs := Attrs{}
		scale := 1 / math.Sqrt(float64(c.d))
		if c.scale != 0 {
			attrs["scale"] = c.scale
			scale = float64(c.scale)
		}
		y, _, _, _ := attnRef(nnF64(Q), nnF64(K), nnF64(V), qsh, ksh, vsh, 0, 0, nil, nil, nil, nil, nil, 0, nil, scale, 0, false, 0)
		got := nnRun(t, "ai.onnx.preview::FlexAttention", 1, attrs, 1, Q, K, V)[0]
		nnCheck(t, "flexattention", got, []int{c.B, c.hq, c.sq, c.dv}, y, max(nnTol(c.dt), 1e-5))
	}
	n := nnNode("ai.onnx.preview::FlexAttention", 1, Attrs{"score_mod": "graph"}, 1, nnRand(r, 1, 1, 2, 2), nnRand(r, 1, 1, 2, 2), nnRand(r, 1, 1, 2, 2))
	if err := FlexAttention(n); err == nil {
		t.Fatal("score_mod was accepted")
	}
}

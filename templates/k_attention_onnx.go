package templates

import "math"

// Kernels of the ONNX transformer ops (opsets 23-27): Attention here,
// LinearAttention in k_attention_linear.go, RotaryEmbedding in
// k_attention_rope.go. They compute in float64 and read and write
// f16/bf16/f32/f64 tensors directly (tfRead, tfWrite), so each output
// keeps its own dtype.

// tfRead widens a float tensor (f16, bf16, f32, f64) into dst.
func tfRead(t *Tensor, dst []float64) {
	switch d := t.Data.(type) {
	case []float32:
		for i, v := range d {
			dst[i] = float64(v)
		}
	case []float64:
		copy(dst, d)
	case []uint16:
		if t.DType == BF16 {
			for i, v := range d {
				dst[i] = float64(BF16ToF32(v))
			}
		} else {
			for i, v := range d {
				dst[i] = float64(F16ToF32(v))
			}
		}
	}
}

// tfWrite resizes t to dtype dt and shape and stores src into it.
func tfWrite(t *Tensor, dt DType, src []float64, shape ...int) {
	nnResize(t, dt, shape...)
	switch d := t.Data.(type) {
	case []float32:
		for i, v := range src {
			d[i] = float32(v)
		}
	case []float64:
		copy(d, src)
	case []uint16:
		if dt == BF16 {
			for i, v := range src {
				d[i] = F32ToBF16(float32(v))
			}
		} else {
			for i, v := range src {
				d[i] = F32ToF16(float32(v))
			}
		}
	}
}

// tfFloat reports whether dt is a dtype tfRead and tfWrite handle.
func tfFloat(dt DType) bool { return dt == F32 || dt == F64 || dt == F16 || dt == BF16 }

// tfBuf is n's float64 scratch slot `slot` (see nnBuf).
func tfBuf(n *Node, slot, size int) []float64 { return nnBuf[float64](n, slot, size) }

// Attention is ONNX Attention (opsets 23 and 24):
// Y = softmax(softcap(scale*Q·Kᵀ) + bias)·V per (batch, query head), where
// bias gathers attn_mask (bool: false masks; float: added; a last dim
// shorter than the total sequence is padded with masked positions), the
// causal mask (is_causal; queries aligned to the end of the past), and
// nonpad_kv_seqlen (keys at or past it are masked). Q, K, V are 4-D
// [B, H, S, D] or 3-D [B, S, H*D] (q_num_heads, kv_num_heads). Query head
// h reads KV head h/(Hq/Hkv) (grouped-query attention). past_key and
// past_value [B, Hkv, P, D] are prepended to K and V, which present_key and
// present_value return. qk_matmul_output is the scores after softcap (mode
// 0, 1), after adding the bias (2) or after softmax (3). Everything is
// computed in float64, whatever softmax_precision asks.
func Attention(n *Node) error {
	Q, K, V := n.Input(0), n.Input(1), n.Input(2)
	if Q == nil || K == nil || V == nil {
		return n.Errorf("needs inputs Q, K and V")
	}
	mask, pk, pv, nonpad := n.Input(3), n.Input(4), n.Input(5), n.Input(6)
	for _, t := range []*Tensor{Q, K, V, pk, pv} {
		if t != nil && !tfFloat(t.DType) {
			return n.Errorf("unsupported dtype %v", t.DType)
		}
	}
	r := len(Q.Shape)
	if r != 3 && r != 4 || len(K.Shape) != r || len(V.Shape) != r {
		return n.Errorf("Q, K and V must all be 3-D or 4-D, have %v %v %v", Q.Shape, K.Shape, V.Shape)
	}
	// Dims, and the strides of (batch, head, position) in Q, K, V.
	var B, Hq, Hkv, Sq, Skv, D, Dv int
	var qs, ks, vs [3]int
	B = Q.Shape[0]
	if r == 4 {
		Hq, Sq, D = Q.Shape[1], Q.Shape[2], Q.Shape[3]
		Hkv, Skv, Dv = K.Shape[1], K.Shape[2], V.Shape[3]
		if K.Shape[3] != D || V.Shape[1] != Hkv || V.Shape[2] != Skv || K.Shape[0] != B || V.Shape[0] != B {
			return n.Errorf("shapes do not match: Q %v, K %v, V %v", Q.Shape, K.Shape, V.Shape)
		}
		qs = [3]int{Hq * Sq * D, Sq * D, D}
		ks = [3]int{Hkv * Skv * D, Skv * D, D}
		vs = [3]int{Hkv * Skv * Dv, Skv * Dv, Dv}
	} else {
		Hq, Hkv = int(n.Attrs.Int("q_num_heads", 0)), int(n.Attrs.Int("kv_num_heads", 0))
		if Hq <= 0 || Hkv <= 0 {
			return n.Errorf("3-D inputs need q_num_heads and kv_num_heads")
		}
		Sq, Skv = Q.Shape[1], K.Shape[1]
		if Q.Shape[2]%Hq != 0 || K.Shape[2]%Hkv != 0 || V.Shape[2]%Hkv != 0 {
			return n.Errorf("hidden sizes %d, %d, %d do not split into %d and %d heads", Q.Shape[2], K.Shape[2], V.Shape[2], Hq, Hkv)
		}
		D, Dv = Q.Shape[2]/Hq, V.Shape[2]/Hkv
		if K.Shape[2]/Hkv != D || V.Shape[1] != Skv || K.Shape[0] != B || V.Shape[0] != B {
			return n.Errorf("shapes do not match: Q %v, K %v, V %v", Q.Shape, K.Shape, V.Shape)
		}
		qs = [3]int{Sq * Hq * D, D, Hq * D}
		ks = [3]int{Skv * Hkv * D, D, Hkv * D}
		vs = [3]int{Skv * Hkv * Dv, Dv, Hkv * Dv}
	}
	if Hq%Hkv != 0 {
		return n.Errorf("q heads %d are not a multiple of kv heads %d", Hq, Hkv)
	}
	P := 0
	if pk != nil || pv != nil {
		if pk == nil || pv == nil {
			return n.Errorf("past_key and past_value go together")
		}
		if len(pk.Shape) != 4 || len(pv.Shape) != 4 || pk.Shape[0] != B || pk.Shape[1] != Hkv || pk.Shape[3] != D ||
			pv.Shape[0] != B || pv.Shape[1] != Hkv || pv.Shape[2] != pk.Shape[2] || pv.Shape[3] != Dv {
			return n.Errorf("past_key %v / past_value %v do not match [%d, %d, P, %d/%d]", pk.Shape, pv.Shape, B, Hkv, D, Dv)
		}
		P = pk.Shape[2]
	}
	T := P + Skv
	var np []int64
	if nonpad != nil {
		np = nonpad.I64()
		if len(np) != B {
			return n.Errorf("nonpad_kv_seqlen has %d entries for batch %d", len(np), B)
		}
	}

	// Buffers: inputs widened, the present K and V [B, Hkv, T, D|Dv], the
	// bias row, scores, Y, qk.
	nQ, nK, nV := Q.Len(), K.Len(), V.Len()
	nPK, nPV := B*Hkv*T*D, B*Hkv*T*Dv
	nY, nS := B*Hq*Sq*Dv, B*Hq*Sq*T
	buf := tfBuf(n, 0, nQ+nK+nV+nPK+nPV+nY+nS)
	q, k, v := buf[:nQ], buf[nQ:nQ+nK], buf[nQ+nK:nQ+nK+nV]
	off := nQ + nK + nV
	kp, vp := buf[off:off+nPK], buf[off+nPK:off+nPK+nPV]
	off += nPK + nPV
	y, sc := buf[off:off+nY], buf[off+nY:off+nY+nS]
	tfRead(Q, q)
	tfRead(K, k)
	tfRead(V, v)
	if P > 0 {
		past := tfBuf(n, 1, max(pk.Len(), pv.Len()))
		tfRead(pk, past[:pk.Len()])
		for bh := 0; bh < B*Hkv; bh++ {
			copy(kp[bh*T*D:bh*T*D+P*D], past[bh*P*D:(bh+1)*P*D])
		}
		tfRead(pv, past[:pv.Len()])
		for bh := 0; bh < B*Hkv; bh++ {
			copy(vp[bh*T*Dv:bh*T*Dv+P*Dv], past[bh*P*Dv:(bh+1)*P*Dv])
		}
	}
	for b := 0; b < B; b++ {
		for h := 0; h < Hkv; h++ {
			for s := 0; s < Skv; s++ {
				copy(kp[((b*Hkv+h)*T+P+s)*D:][:D], k[b*ks[0]+h*ks[1]+s*ks[2]:][:D])
				copy(vp[((b*Hkv+h)*T+P+s)*Dv:][:Dv], v[b*vs[0]+h*vs[1]+s*vs[2]:][:Dv])
			}
		}
	}

	// The mask's element strides over (B, Hq, Sq, T); its last dim may be
	// shorter than T.
	var mstr [4]int
	mlast := T
	var mf []float64
	var mb []bool
	if mask != nil {
		mr := len(mask.Shape)
		if mr < 1 || mr > 4 {
			return n.Errorf("attn_mask %v must have rank 1 to 4", mask.Shape)
		}
		want := [4]int{B, Hq, Sq, T}
		acc := 1
		for i := 3; i >= 0; i-- {
			j := i - (4 - mr)
			if j < 0 {
				break
			}
			m := mask.Shape[j]
			switch {
			case i == 3:
				if m > T {
					return n.Errorf("attn_mask %v is longer than the %d keys", mask.Shape, T)
				}
				mlast = m
				mstr[i] = 1
			case m == want[i]:
				mstr[i] = acc
			case m != 1:
				return n.Errorf("attn_mask %v does not broadcast to %v", mask.Shape, want)
			}
			acc *= m
		}
		switch {
		case mask.DType == Bool:
			mb = mask.Bool()
		case tfFloat(mask.DType):
			mf = tfBuf(n, 2, mask.Len())
			tfRead(mask, mf)
		default:
			return n.Errorf("attn_mask has unsupported dtype %v", mask.DType)
		}
	}

	scale := 1 / math.Sqrt(float64(D))
	if n.Attrs.Has("scale") {
		scale = float64(n.Attrs.Float("scale", 0))
	}
	softcap := float64(n.Attrs.Float("softcap", 0))
	causal := n.Attrs.Int("is_causal", 0) != 0
	mode := n.Attrs.Int("qk_matmul_output_mode", 0)
	if mode < 0 || mode > 3 {
		return n.Errorf("qk_matmul_output_mode %d is not 0-3", mode)
	}
	var qk []float64
	if len(n.Out) > 3 && n.Out[3] != nil {
		qk = tfBuf(n, 3, nS)
	}
	group := Hq / Hkv
	ninf := math.Inf(-1)
	for b := 0; b < B; b++ {
		offset := P // causal frontier: key j is visible to query i when j <= i+offset
		if P == 0 && np != nil {
			offset = int(np[b]) - Sq
		}
		valid := T
		if np != nil {
			valid = int(np[b])
		}
		for h := 0; h < Hq; h++ {
			kh := h / group
			kbase, vbase := (b*Hkv+kh)*T*D, (b*Hkv+kh)*T*Dv
			for i := 0; i < Sq; i++ {
				qrow := q[b*qs[0]+h*qs[1]+i*qs[2]:][:D]
				row := sc[((b*Hq+h)*Sq+i)*T:][:T]
				moff := b*mstr[0] + h*mstr[1] + i*mstr[2]
				for j := 0; j < T; j++ {
					krow := kp[kbase+j*D:][:D]
					var s float64
					for d, qv := range qrow {
						s += qv * krow[d]
					}
					s *= scale
					if softcap > 0 {
						s = softcap * math.Tanh(s/softcap)
					}
					if qk != nil && mode <= 1 {
						qk[((b*Hq+h)*Sq+i)*T+j] = s
					}
					// The bias.
					switch {
					case j >= mlast && mask != nil:
						s = ninf
					case mb != nil:
						if !mb[moff+j] {
							s = ninf
						}
					case mf != nil:
						s += mf[moff+j]
					}
					if causal && j > i+offset || j >= valid {
						s += ninf
					}
					row[j] = s
				}
				if qk != nil && mode == 2 {
					copy(qk[((b*Hq+h)*Sq+i)*T:][:T], row)
				}
				// Softmax; a row with every key masked gives NaN, as the
				// spec's max-subtracted softmax does.
				mx := ninf
				for _, s := range row {
					mx = math.Max(mx, s)
				}
				var sum float64
				for j, s := range row {
					e := math.Exp(s - mx)
					row[j] = e
					sum += e
				}
				for j := range row {
					row[j] /= sum
				}
				if qk != nil && mode == 3 {
					copy(qk[((b*Hq+h)*Sq+i)*T:][:T], row)
				}
				yrow := y[((b*Hq+h)*Sq+i)*Dv:][:Dv]
				clear(yrow)
				for j, p := range row {
					if p == 0 {
						continue
					}
					vrow := vp[vbase+j*Dv:][:Dv]
					for d := range yrow {
						yrow[d] += p * vrow[d]
					}
				}
			}
		}
	}
	if r == 4 {
		tfWrite(n.Out[0], Q.DType, y, B, Hq, Sq, Dv)
	} else {
		// [B, Hq, Sq, Dv] -> [B, Sq, Hq*Dv], through the score buffer.
		t := tfBuf(n, 4, nY)
		for b := 0; b < B; b++ {
			for h := 0; h < Hq; h++ {
				for i := 0; i < Sq; i++ {
					copy(t[((b*Sq+i)*Hq+h)*Dv:][:Dv], y[((b*Hq+h)*Sq+i)*Dv:][:Dv])
				}
			}
		}
		tfWrite(n.Out[0], Q.DType, t, B, Sq, Hq*Dv)
	}
	if len(n.Out) > 1 && n.Out[1] != nil {
		tfWrite(n.Out[1], K.DType, kp, B, Hkv, T, D)
	}
	if len(n.Out) > 2 && n.Out[2] != nil {
		tfWrite(n.Out[2], V.DType, vp, B, Hkv, T, Dv)
	}
	if qk != nil {
		tfWrite(n.Out[3], Q.DType, qk, B, Hq, Sq, T)
	}
	return nil
}

// FlexAttention is ai.onnx.preview FlexAttention (opset 1) without its
// subgraphs: softmax(scale*Q·Kᵀ)·V on 4-D Q [B, Hq, Sq, D], K, V
// [B, Hkv, Sk, D|Dv], query head h reading KV head h/(Hq/Hkv), scale
// 1/sqrt(D) by default. The compiler refuses score_mod, mask_mod and
// prob_mod before code is generated; the check here guards direct calls.
func FlexAttention(n *Node) error {
	for _, a := range []string{"score_mod", "mask_mod", "prob_mod"} {
		if n.Attrs.Has(a) {
			return n.Errorf("the %s subgraph is not supported", a)
		}
	}
	for i := 0; i < 3; i++ {
		if t := n.Input(i); t == nil || len(t.Shape) != 4 {
			return n.Errorf("needs 4-D inputs Q, K and V")
		}
	}
	return Attention(n)
}

package templates

import "math"

// LinearAttention is ONNX LinearAttention (opset 27): a recurrence over the
// T tokens with a state S [B, Hkv, dk, dv] per KV head. Per token t:
// gated rules decay the state (S *= exp(decay_t), decay per head or per key
// dim); delta rules replace v_t by beta_t*(v_t - Sᵀ·(erase_gate_t ⊙ k_t));
// then S += k_t ⊗ v_t and o_t = scale * q_t·S for each query head (query
// head h reads KV head h/(Hq/Hkv)). Q, K, V are [B, T, H*d]; the output is
// [B, T, Hq*dv] and present_state S after the last token, in past_state's
// dtype (the query's without one). Computes in float64.
func LinearAttention(n *Node) error {
	Q, K, V := n.Input(0), n.Input(1), n.Input(2)
	past, decay, beta, erase := n.Input(3), n.Input(4), n.Input(5), n.Input(6)
	if Q == nil || K == nil || V == nil {
		return n.Errorf("needs inputs query, key and value")
	}
	for _, t := range []*Tensor{Q, K, V, past, decay, beta, erase} {
		if t != nil && !tfFloat(t.DType) {
			return n.Errorf("unsupported dtype %v", t.DType)
		}
	}
	rule := n.Attrs.String("update_rule", "gated_delta")
	var gating, delta bool
	switch rule {
	case "linear":
	case "gated":
		gating = true
	case "delta":
		delta = true
	case "gated_delta":
		gating, delta = true, true
	default:
		return n.Errorf("unknown update_rule %q", rule)
	}
	switch {
	case gating != (decay != nil):
		return n.Errorf("update_rule %q and the decay input disagree (decay given: %v)", rule, decay != nil)
	case delta != (beta != nil):
		return n.Errorf("update_rule %q and the beta input disagree (beta given: %v)", rule, beta != nil)
	case erase != nil && !delta:
		return n.Errorf("update_rule %q takes no erase_gate", rule)
	}
	Hq, Hkv := int(n.Attrs.Int("q_num_heads", 0)), int(n.Attrs.Int("kv_num_heads", 0))
	if Hq <= 0 || Hkv <= 0 || Hq%Hkv != 0 {
		return n.Errorf("q_num_heads %d must be a positive multiple of kv_num_heads %d", Hq, Hkv)
	}
	if len(Q.Shape) != 3 || len(K.Shape) != 3 || len(V.Shape) != 3 {
		return n.Errorf("query, key and value must be 3-D, have %v %v %v", Q.Shape, K.Shape, V.Shape)
	}
	B, T := Q.Shape[0], Q.Shape[1]
	if Q.Shape[2]%Hq != 0 || V.Shape[2]%Hkv != 0 {
		return n.Errorf("hidden sizes %d, %d do not split into %d and %d heads", Q.Shape[2], V.Shape[2], Hq, Hkv)
	}
	dk, dv := Q.Shape[2]/Hq, V.Shape[2]/Hkv
	if K.Shape[0] != B || K.Shape[1] != T || K.Shape[2] != Hkv*dk || V.Shape[0] != B || V.Shape[1] != T {
		return n.Errorf("shapes do not match: query %v, key %v, value %v", Q.Shape, K.Shape, V.Shape)
	}
	perDim := false // decay per key dim rather than per head
	if decay != nil {
		switch {
		case len(decay.Shape) == 3 && decay.Shape[0] == B && decay.Shape[1] == T && decay.Shape[2] == Hkv:
		case len(decay.Shape) == 3 && decay.Shape[0] == B && decay.Shape[1] == T && decay.Shape[2] == Hkv*dk:
			perDim = true
		default:
			return n.Errorf("decay %v must be [%d, %d, %d or %d]", decay.Shape, B, T, Hkv, Hkv*dk)
		}
	}
	bh := 0 // beta's last dim
	if beta != nil {
		if len(beta.Shape) != 3 || beta.Shape[0] != B || beta.Shape[1] != T || beta.Shape[2] != Hkv && beta.Shape[2] != 1 {
			return n.Errorf("beta %v must be [%d, %d, %d or 1]", beta.Shape, B, T, Hkv)
		}
		bh = beta.Shape[2]
	}
	if erase != nil && (len(erase.Shape) != 3 || erase.Shape[0] != B || erase.Shape[1] != T || erase.Shape[2] != Hkv*dk) {
		return n.Errorf("erase_gate %v must be [%d, %d, %d]", erase.Shape, B, T, Hkv*dk)
	}
	ns := B * Hkv * dk * dv
	if past != nil && (len(past.Shape) != 4 || past.Len() != ns || past.Shape[0] != B || past.Shape[1] != Hkv || past.Shape[2] != dk) {
		return n.Errorf("past_state %v must be [%d, %d, %d, %d]", past.Shape, B, Hkv, dk, dv)
	}
	scale := float64(n.Attrs.Float("scale", 0))
	if scale == 0 {
		scale = 1 / math.Sqrt(float64(dk))
	}
	lens := [9]int{Q.Len(), K.Len(), V.Len(), ns, B * T * Hq * dv, dv, 0, 0, 0}
	for i, t := range []*Tensor{decay, beta, erase} {
		if t != nil {
			lens[6+i] = t.Len()
		}
	}
	tot := 0
	for _, l := range lens {
		tot += l
	}
	buf := tfBuf(n, 0, tot)
	var parts [9][]float64
	for i, l := range lens {
		parts[i], buf = buf[:l], buf[l:]
	}
	q, k, v, st, out, vt := parts[0], parts[1], parts[2], parts[3], parts[4], parts[5]
	dc, bt, eg := parts[6], parts[7], parts[8]
	tfRead(Q, q)
	tfRead(K, k)
	tfRead(V, v)
	if past != nil {
		tfRead(past, st)
	} else {
		clear(st)
	}
	for i, t := range []*Tensor{decay, beta, erase} {
		if t != nil {
			tfRead(t, parts[6+i])
		}
	}
	group := Hq / Hkv
	for b := 0; b < B; b++ {
		for h := 0; h < Hkv; h++ {
			s := st[(b*Hkv+h)*dk*dv:][:dk*dv]
			for t := 0; t < T; t++ {
				tok := b*T + t
				kt := k[tok*Hkv*dk+h*dk:][:dk]
				copy(vt, v[tok*Hkv*dv+h*dv:][:dv])
				if gating {
					for i := 0; i < dk; i++ {
						g := dc[tok*Hkv+h]
						if perDim {
							g = dc[tok*Hkv*dk+h*dk+i]
						}
						e := math.Exp(g)
						for j := range s[i*dv : (i+1)*dv] {
							s[i*dv+j] *= e
						}
					}
				}
				if delta {
					beta := bt[tok*bh]
					if bh > 1 {
						beta = bt[tok*bh+h]
					}
					for j := 0; j < dv; j++ {
						var r float64
						for i := 0; i < dk; i++ {
							ke := kt[i]
							if eg != nil && erase != nil {
								ke *= eg[tok*Hkv*dk+h*dk+i]
							}
							r += s[i*dv+j] * ke
						}
						vt[j] = beta * (vt[j] - r)
					}
				}
				for i := 0; i < dk; i++ {
					for j := 0; j < dv; j++ {
						s[i*dv+j] += kt[i] * vt[j]
					}
				}
				for g := 0; g < group; g++ {
					hq := h*group + g
					qt := q[tok*Hq*dk+hq*dk:][:dk]
					o := out[tok*Hq*dv+hq*dv:][:dv]
					for j := range o {
						var a float64
						for i := 0; i < dk; i++ {
							a += qt[i] * s[i*dv+j]
						}
						o[j] = scale * a
					}
				}
			}
		}
	}
	tfWrite(n.Out[0], Q.DType, out, B, T, Hq*dv)
	if len(n.Out) > 1 && n.Out[1] != nil {
		sdt := Q.DType
		if past != nil {
			sdt = past.DType
		}
		tfWrite(n.Out[1], sdt, st, B, Hkv, dk, dv)
	}
	return nil
}

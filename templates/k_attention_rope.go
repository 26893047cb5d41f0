package templates

// RotaryEmbedding is ONNX RotaryEmbedding (opset 23). X is
// [B, H, S, Dh] or [B, S, H*Dh] (num_heads); the first R dims of each head
// (rotary_embedding_dim, default Dh) rotate in pairs, (x[i], x[i+R/2]) or,
// interleaved, (x[2i], x[2i+1]), by the angle whose cosine and sine are
// cos_cache and sin_cache at the token's position: [max_pos, R/2] rows
// picked by position_ids [B, S], or [B, S, R/2] without position_ids.
func RotaryEmbedding(n *Node) error {
	X, C, Sn, pos := n.Input(0), n.Input(1), n.Input(2), n.Input(3)
	if X == nil || C == nil || Sn == nil {
		return n.Errorf("needs inputs X, cos_cache and sin_cache")
	}
	if !tfFloat(X.DType) || !tfFloat(C.DType) || !tfFloat(Sn.DType) {
		return n.Errorf("unsupported dtype %v", X.DType)
	}
	var B, H, S, Dh int
	var bs, hs, ss int // element strides of batch, head, position
	switch len(X.Shape) {
	case 4:
		B, H, S, Dh = X.Shape[0], X.Shape[1], X.Shape[2], X.Shape[3]
		bs, hs, ss = H*S*Dh, S*Dh, Dh
	case 3:
		H = int(n.Attrs.Int("num_heads", 0))
		if H <= 0 || X.Shape[2]%H != 0 {
			return n.Errorf("3-D input %v needs num_heads dividing its last dim, have %d", X.Shape, H)
		}
		B, S, Dh = X.Shape[0], X.Shape[1], X.Shape[2]/H
		bs, hs, ss = S*H*Dh, Dh, H*Dh
	default:
		return n.Errorf("input %v must be 3-D or 4-D", X.Shape)
	}
	R := int(n.Attrs.Int("rotary_embedding_dim", 0))
	if R == 0 {
		R = Dh
	}
	if R > Dh || R%2 != 0 {
		return n.Errorf("rotary_embedding_dim %d must be even and at most the head size %d", R, Dh)
	}
	half := R / 2
	if C.Len() != Sn.Len() || len(C.Shape) == 0 || C.Shape[len(C.Shape)-1] != half {
		return n.Errorf("cos_cache %v and sin_cache %v must end in rotary_embedding_dim/2 = %d", C.Shape, Sn.Shape, half)
	}
	var ids []int64
	if pos != nil {
		if len(C.Shape) != 2 || pos.Len() != B*S {
			return n.Errorf("with position_ids %v the caches %v must be [max_position, %d]", pos.Shape, C.Shape, half)
		}
		ids = pos.I64()
	} else if len(C.Shape) != 3 || C.Shape[0] != B || C.Shape[1] != S {
		return n.Errorf("without position_ids the caches %v must be [%d, %d, %d]", C.Shape, B, S, half)
	}
	nx := X.Len()
	buf := tfBuf(n, 0, nx+2*C.Len())
	x, cs, sn := buf[:nx], buf[nx:nx+C.Len()], buf[nx+C.Len():]
	tfRead(X, x)
	tfRead(C, cs)
	tfRead(Sn, sn)
	maxPos := C.Shape[0]
	inter := n.Attrs.Int("interleaved", 0) != 0
	for b := 0; b < B; b++ {
		for s := 0; s < S; s++ {
			row := b*S + s
			if ids != nil {
				p := ids[b*S+s]
				if p < 0 || int(p) >= maxPos {
					return n.Errorf("position id %d out of range [0, %d)", p, maxPos)
				}
				row = int(p)
			}
			c, si := cs[row*half:][:half], sn[row*half:][:half]
			for h := 0; h < H; h++ {
				v := x[b*bs+h*hs+s*ss:][:Dh]
				for i := 0; i < half; i++ {
					i1, i2 := i, i+half
					if inter {
						i1, i2 = 2*i, 2*i+1
					}
					x1, x2 := v[i1], v[i2]
					v[i1] = c[i]*x1 - si[i]*x2
					v[i2] = si[i]*x1 + c[i]*x2
				}
			}
		}
	}
	tfWrite(n.Out[0], X.DType, x, X.Shape...)
	return nil
}

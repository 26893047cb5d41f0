package templates

// ReverseSequence is ONNX ReverseSequence: reverse the first
// sequence_lens[b] steps along time_axis for each batch entry b.
func ReverseSequence(n *Node) error {
	x, sl := n.Input(0), n.Input(1)
	if x == nil || sl == nil {
		return n.Errorf("needs input and sequence_lens")
	}
	if len(x.Shape) < 2 {
		return n.Errorf("input must have rank >= 2")
	}
	bAx, tAx := int(n.Attrs.Int("batch_axis", 1)), int(n.Attrs.Int("time_axis", 0))
	if !(bAx == 0 && tAx == 1 || bAx == 1 && tAx == 0) {
		return n.Errorf("batch_axis %d and time_axis %d must be 0 and 1", bAx, tAx)
	}
	B, T := x.Shape[bAx], x.Shape[tAx]
	if sl.Len() != B {
		return n.Errorf("sequence_lens has %d entries, want %d", sl.Len(), B)
	}
	inner := x.Len() / (B * T)
	idx := miscScr[int](n).getInts(0, x.Len())
	for b := 0; b < B; b++ {
		L := int(ewI64At(sl, b))
		if L < 0 || L > T {
			return n.Errorf("sequence_lens[%d] = %d out of range [0,%d]", b, L, T)
		}
		for t := 0; t < T; t++ {
			s := t
			if t < L {
				s = L - 1 - t
			}
			var dst, src int
			if bAx == 0 {
				dst, src = (b*T+t)*inner, (b*T+s)*inner
			} else {
				dst, src = (t*B+b)*inner, (s*B+b)*inner
			}
			for i := 0; i < inner; i++ {
				idx[dst+i] = src + i
			}
		}
	}
	n.Out[0].Resize(x.DType, x.Shape...)
	miscTake(n.Out[0], x, idx)
	return nil
}

package templates

// MaxUnpool is ONNX MaxUnpool: scatter X into a zero tensor at the flat
// indices MaxPool returned.
func MaxUnpool(n *Node) error {
	if ok, err := nnViaF32(n, MaxUnpool); ok {
		return err
	}
	x, ind := n.Input(0), n.Input(1)
	if x == nil || ind == nil || len(x.Shape) < 3 || ind.Len() != x.Len() {
		return n.Errorf("needs X [N,C,...] and indices of the same shape")
	}
	sp := len(x.Shape) - 2
	st := miscScr[int](n)
	// def is the shape the pooling attributes imply; the indices, like
	// MaxPool's, are flat offsets in it. An output_shape input only pads
	// that shape at the end of each spatial axis (as the ONNX reference
	// does), so indices are moved to the same coordinates in it.
	def := st.getInts(0, len(x.Shape))
	ks, strides, pads := n.Attrs.Ints("kernel_shape"), n.Attrs.Ints("strides"), n.Attrs.Ints("pads")
	if len(ks) != sp {
		return n.Errorf("kernel_shape needs %d entries", sp)
	}
	def[0], def[1] = x.Shape[0], x.Shape[1]
	for i := 0; i < sp; i++ {
		s, pb, pe := 1, 0, 0
		if i < len(strides) {
			s = int(strides[i])
		}
		if len(pads) == 2*sp {
			pb, pe = int(pads[i]), int(pads[sp+i])
		}
		def[2+i] = (x.Shape[2+i]-1)*s + int(ks[i]) - pb - pe
	}
	shape := def
	if os := n.Input(2); os != nil {
		if os.Len() != len(x.Shape) {
			return n.Errorf("output_shape has %d entries, want %d", os.Len(), len(x.Shape))
		}
		shape = st.getInts(2, len(x.Shape))
		for i := range shape {
			shape[i] = int(ewI64At(os, i))
			if shape[i] < def[i] || i < 2 && shape[i] != def[i] {
				return n.Errorf("output_shape %v is smaller than the unpooled shape %v", shape, def)
			}
		}
	}
	y := n.Out[0]
	y.Resize(x.DType, shape...)
	total, defTotal := y.Len(), 1
	for _, d := range def {
		defTotal *= d
	}
	idx := st.getInts(1, total)
	for i := range idx {
		idx[i] = -1
	}
	for i := 0; i < x.Len(); i++ {
		j := int(ewI64At(ind, i))
		if j < 0 || j >= defTotal {
			return n.Errorf("index %d out of range [0,%d)", j, defTotal)
		}
		if &shape[0] != &def[0] { // re-linearise j in the padded shape
			o, mul, rest := 0, 1, j
			for a := len(def) - 1; a >= 0; a-- {
				o += rest % def[a] * mul
				rest /= def[a]
				mul *= shape[a]
			}
			j = o
		}
		idx[j] = i
	}
	miscTake(y, x, idx)
	return nil
}

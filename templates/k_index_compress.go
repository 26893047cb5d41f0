package templates

// Compress is ONNX Compress: keep the slices along axis (or the flattened
// elements) whose condition is true.
func Compress(n *Node) error {
	x, c := n.Input(0), n.Input(1)
	if x == nil || c == nil {
		return n.Errorf("needs input and condition")
	}
	cond := c.Bool()
	st := miscScr[int](n)
	if !n.Attrs.Has("axis") {
		cnt := 0
		for i, b := range cond {
			if b && i < x.Len() {
				cnt++
			}
		}
		idx := st.getInts(0, cnt)
		j := 0
		for i, b := range cond {
			if b && i < x.Len() {
				idx[j] = i
				j++
			}
		}
		n.Out[0].Resize(x.DType, cnt)
		miscTake(n.Out[0], x, idx)
		return nil
	}
	axis, err := miscAxis(n, n.Attrs.Int("axis", 0), len(x.Shape))
	if err != nil {
		return err
	}
	outer, L, inner := miscSplitAxis(x.Shape, axis)
	if len(cond) > L {
		return n.Errorf("condition has %d entries, axis has %d", len(cond), L)
	}
	keep := 0
	for _, b := range cond {
		if b {
			keep++
		}
	}
	shape := st.getInts(1, len(x.Shape))
	copy(shape, x.Shape)
	shape[axis] = keep
	idx := st.getInts(0, outer*keep*inner)
	p := 0
	for o := 0; o < outer; o++ {
		for l, b := range cond {
			if !b {
				continue
			}
			for in := 0; in < inner; in++ {
				idx[p] = (o*L+l)*inner + in
				p++
			}
		}
	}
	n.Out[0].Resize(x.DType, shape...)
	miscTake(n.Out[0], x, idx)
	return nil
}

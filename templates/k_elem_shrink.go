package templates

// Shrink is ONNX Shrink: x-bias above lambd, x+bias below -lambd, else 0.
func Shrink(n *Node) error {
	x := n.Input(0)
	if x == nil {
		return n.Errorf("missing input")
	}
	bias := float64(n.Attrs.Float("bias", 0))
	lambd := float64(n.Attrs.Float("lambd", 0.5))
	y := n.Out[0]
	y.Resize(x.DType, x.Shape...)
	if xd, ok := x.Data.([]float32); ok {
		yd := y.F32()
		b, l := float32(bias), float32(lambd)
		for i, v := range xd {
			switch {
			case v < -l:
				yd[i] = v + b
			case v > l:
				yd[i] = v - b
			default:
				yd[i] = 0
			}
		}
		return nil
	}
	for i := range x.Len() {
		v := ewF64At(x, i)
		switch {
		case v < -lambd:
			v += bias
		case v > lambd:
			v -= bias
		default:
			v = 0
		}
		miscSetAt(y, i, v)
	}
	return nil
}

package templates

// Gelu is cuvil::Gelu (ONNX only has Gelu from opset 20).
func Gelu(n *Node) error {
	if ok, err := nnViaF32(n, Gelu); ok {
		return err
	}
	X := n.Input(0)
	if X == nil {
		return n.Errorf("needs input X")
	}
	act := fusedAct{kind: fusedActGelu}
	switch ap := n.Attrs.String("approximate", "none"); ap {
	case "none":
	case "tanh":
		act.kind = fusedActGeluTanh
	default:
		return n.Errorf("approximate %q: want none or tanh", ap)
	}
	Y := n.Out[0]
	nnResize(Y, X.DType, X.Shape...)
	switch x := X.Data.(type) {
	case []float32:
		y := Y.F32()
		copy(y, x)
		fusedActRow(act, y)
	case []float64:
		y := Y.F64()
		copy(y, x)
		fusedActRow(act, y)
	default:
		return n.Errorf("unsupported dtype %v", X.DType)
	}
	return nil
}

package passes

import "github.com/cuvil/cuvil/ir"

// RemoveIdentity drops Identity nodes, inference-mode Dropout, Pads of 0,
// Slices of a whole tensor and one-input Concats: readers
// of their output read the input instead. A removed node's output that is
// a graph output passes its name to the input's defining node, so the
// model's interface stays; when it cannot (the input is a graph input, a
// constant, or another output) the node stays.
var RemoveIdentity = &Pass{
	Name: "remove-identity",
	Doc:  "remove Identity, inference Dropout, zero Pad, whole-tensor Slice and one-input Concat nodes",
	Run: func(m *ir.Model) error {
		return forGraphs(m, func(g *ir.Graph) error {
			r := newRewriter(m, g)
			for _, n := range g.Nodes {
				at(m, n)
				if !isIdentity(n, r.read) || n.Inputs[0] == nil || n.Inputs[0].Type.Kind != ir.TensorKind {
					continue
				}
				if r.redirect(n.Outputs[0], n.Inputs[0]) {
					r.kill(n)
				}
			}
			r.sweep()
			return nil
		})
	},
}

// isIdentity reports whether n copies its only input: Identity, or a
// Dropout that is not training (no training_mode input, or a constant
// false one) or has a constant ratio 0, whose mask output nobody reads (PyTorch's exports name the
// mask output and leave it unread).
func isIdentity(n *ir.Node, read func(*ir.Value) bool) bool {
	if len(n.Inputs) == 0 || len(n.Outputs) == 0 || n.Outputs[0] == nil {
		return false
	}
	switch {
	case isOp(n, "Identity"):
		return true
	case isOp(n, "Dropout"):
		if len(n.Outputs) > 1 && n.Outputs[1] != nil && read(n.Outputs[1]) {
			return false
		}
		if r := n.Input(1); r != nil && r.IsConst() && r.Const.NumElements() == 1 && r.Const.DType.IsFloat() && r.Const.Float64s()[0] == 0 {
			// Ratio 0 keeps every element and scales by 1/(1-0), training
			// or not (torchvision's swin exports training_mode true).
			return true
		}
		if t := n.Input(2); t != nil {
			if !t.IsConst() {
				return false
			}
			for _, b := range t.Const.Raw {
				if b != 0 {
					return false
				}
			}
		}
		// Before version 7, is_test=0 asks for training; an inference
		// compiler treats it as identity all the same, like ONNX Runtime.
		return true
	case isOp(n, "Pad"):
		return noPadding(n)
	case isOp(n, "Concat"):
		// One input: torchvision's DenseNet starts every dense block so.
		return len(n.Inputs) == 1 && len(n.Outputs) == 1
	case isOp(n, "Slice"):
		return fullSlice(n)
	}
	return false
}

// noPadding reports whether Pad n pads nothing: its pads (the attribute
// before opset 11, a constant input after) are all 0. Swin exports pad
// every window stage to a multiple of the window, by 0 where it divides.
func noPadding(n *ir.Node) bool {
	var pads []int64
	if n.Version < 11 {
		a := n.Attr("pads")
		if a == nil {
			return false
		}
		pads = a.Ints
	} else {
		var ok bool
		if pads, ok = intsConst(n.Input(1)); !ok {
			return false
		}
	}
	for _, p := range pads {
		if p != 0 {
			return false
		}
	}
	return sameStaticShape(n.Inputs[0], n.Outputs[0])
}

// fullSlice reports whether Slice n keeps its whole input: every step 1
// (or none given) and the output's static shape the input's. With step 1
// a range as long as the dim starts at 0.
func fullSlice(n *ir.Node) bool {
	if n.Version >= 10 {
		if st := n.Input(4); st != nil {
			steps, ok := intsConst(st)
			if !ok {
				return false
			}
			for _, s := range steps {
				if s != 1 {
					return false
				}
			}
		}
	}
	return sameStaticShape(n.Inputs[0], n.Outputs[0])
}

// sameStaticShape reports whether x and y have one dtype and the same
// shape of constant dims.
func sameStaticShape(x, y *ir.Value) bool {
	if x == nil || y == nil || !x.Type.Known() || !y.Type.Known() || x.Type.DType != y.Type.DType || len(x.Type.Shape) != len(y.Type.Shape) {
		return false
	}
	for i, d := range x.Type.Shape {
		if !d.IsConst() || d != y.Type.Shape[i] {
			return false
		}
	}
	return true
}

package passes

import "github.com/cuvil/cuvil/ir"

// RemoveIdentity drops Identity nodes and inference-mode Dropout: readers
// of their output read the input instead. A removed node's output that is
// a graph output passes its name to the input's defining node, so the
// model's interface stays; when it cannot (the input is a graph input, a
// constant, or another output) the node stays.
var RemoveIdentity = &Pass{
	Name: "remove-identity",
	Doc:  "remove Identity and inference Dropout nodes",
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
	}
	return false
}

package passes

import "github.com/cuvil/cuvil/ir"

// Shape rules for the ops whose kernels live in templates/k_loss.go,
// k_signal.go and k_text.go, and PRelu's legacy per-channel slope.

func init() {
	reg(inferPRelu, "PRelu")
}

// inferPRelu broadcasts like Add, except that before version 7 a 1-D slope
// of length C applies per channel (axis 1), as the kernel does.
func inferPRelu(x *inferer, n *ir.Node) error {
	if n.Version < 7 && len(n.Inputs) == 2 && n.Inputs[0] != nil && n.Inputs[1] != nil {
		xs, ss := n.Inputs[0].Type.Shape, n.Inputs[1].Type.Shape
		if len(ss) == 1 && len(xs) > 2 && ss[0].IsConst() && ss[0].Size != 1 && ss[0] == xs[1] {
			x.setOut(n, 0, n.Inputs[0].Type.DType, append(ir.Shape(nil), xs...))
			return nil
		}
	}
	return inferBroadcast(x, n)
}

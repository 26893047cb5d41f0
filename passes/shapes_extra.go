package passes

import (
	"fmt"

	"github.com/cuvil/cuvil/ir"
)

// Shape rules for the ops whose kernels live in templates/k_loss.go,
// k_signal.go and k_text.go, PRelu's legacy per-channel slope, and
// cuvil::Elementwise, and the cuvil activations fuse-activation makes.

func init() {
	reg(inferPRelu, "PRelu")
	reg(inferCuvilElementwise, "cuvil::Elementwise")
	reg(inferUnary, "cuvil::Swish", "cuvil::HardSwish", "cuvil::Mish", "cuvil::RoundHalf")
	reg(inferChannelShuffle, "cuvil::ChannelShuffle")
}

// inferCuvilElementwise gives every output of a fused element-wise group
// the type of input 0, which has the outputs' shape (fuse-elementwise);
// the other inputs have that shape or one element of no higher rank.
func inferCuvilElementwise(x *inferer, n *ir.Node) error {
	if len(n.Inputs) == 0 || n.Inputs[0] == nil {
		return fmt.Errorf("needs at least one input")
	}
	t := n.Inputs[0].Type
	for i, v := range n.Inputs[1:] {
		if v == nil || v.Type.DType != t.DType {
			return fmt.Errorf("input %d: want dtype %s", i+1, t.DType)
		}
		// One element of a higher rank would broadcast the result to it.
		if c, ok := v.Type.Shape.NumElements(); !v.Type.Shape.Equal(t.Shape) && (!ok || c != 1 || len(v.Type.Shape) > len(t.Shape)) {
			return fmt.Errorf("input %d has shape %v: want %v or one element of rank <= %d", i+1, v.Type.Shape, t.Shape, len(t.Shape))
		}
	}
	for i := range n.Outputs {
		x.setOut(n, i, t.DType, append(ir.Shape(nil), t.Shape...))
	}
	return nil
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

// inferChannelShuffle: the inputs' concatenation along axis (one input:
// its shape), whose channel count groups divides.
func inferChannelShuffle(x *inferer, n *ir.Node) error {
	first, err := x.in(n, 0)
	if err != nil {
		return err
	}
	r := len(first.Shape)
	axis, err := normAxis(n.IntAttr("axis"), r)
	if err != nil {
		return err
	}
	out := cloneShape(first.Shape)
	var along []ir.Dim
	for i := range n.Inputs {
		t, err := x.inRank(n, i, r, r)
		if err != nil {
			return err
		}
		if t.DType != first.DType {
			return fmt.Errorf("input %d is %s, input 0 %s", i, t.DType, first.DType)
		}
		for j := range out {
			if j == axis {
				continue
			}
			if out[j], err = sameDim(out[j], t.Shape[j]); err != nil {
				return fmt.Errorf("input %d: %w", i, err)
			}
		}
		along = append(along, t.Shape[axis])
	}
	out[axis] = x.sumDims(along)
	if g := n.IntAttr("groups"); g <= 0 || out[axis].IsConst() && out[axis].Size%g != 0 {
		return fmt.Errorf("groups %d does not divide %s channels", g, out[axis])
	}
	x.setOut(n, 0, first.DType, out)
	return nil
}

package passes

import (
	"fmt"

	"github.com/cuvil/cuvil/ir"
)

// Shape rules for the cuvil ops whose layout the layout pass sets
// (layout.go); other cuvil ops keep the types the pass that made them
// declared. An NHWC node is inferred by the ai.onnx rule on a shadow node
// that sees its data input as NCHW, the result permuted back to NHWC.
func init() {
	reg(inferFusedConv, "cuvil::FusedConv")
	reg(inferScaleShift, "cuvil::ScaleShift")
	reg(inferPoolNHWC, "cuvil::PoolNHWC")
	reg(inferConvChain, "cuvil::FusedConvChain")
}

// inferLayoutVia infers n with rule f of op, through NCHW when n has
// layout=NHWC.
func inferLayoutVia(op string, f inferFunc) inferFunc {
	return func(x *inferer, n *ir.Node) error {
		return inferThroughNCHW(x, n, op, f, n.AttrString("layout", "NCHW") == "NHWC")
	}
}

// inferFusedConv is Conv's rule (through NCHW with layout=NHWC); a
// convolution the concat-into pass made write a channel slice of a wider
// output has out_channels channels.
func inferFusedConv(x *inferer, n *ir.Node) error {
	if err := inferLayoutVia("Conv", inferConv)(x, n); err != nil {
		return err
	}
	oc := n.AttrInt("out_channels", 0)
	if t := n.Outputs[0].Type; oc != 0 && t.Kind == ir.TensorKind && !t.Unranked && t.Rank() == 4 {
		s := cloneShape(t.Shape)
		s[3] = ir.D(oc)
		x.setOut(n, 0, t.DType, s)
	}
	return nil
}

// inferScaleShift gives Y X's type; with channels (NHWC, concat-into: X's
// rows are wider), that many channels.
func inferScaleShift(x *inferer, n *ir.Node) error {
	if err := inferLayoutVia("ScaleShift", inferSameAsInput)(x, n); err != nil {
		return err
	}
	ch := n.AttrInt("channels", 0)
	if t := n.Outputs[0].Type; ch != 0 && t.Kind == ir.TensorKind && !t.Unranked && t.Rank() >= 1 {
		s := cloneShape(t.Shape)
		s[len(s)-1] = ir.D(ch)
		x.setOut(n, 0, t.DType, s)
	}
	return nil
}

func inferPoolNHWC(x *inferer, n *ir.Node) error {
	switch n.AttrString("mode", "") {
	case "max":
		return inferThroughNCHW(x, n, "MaxPool", inferPool, true)
	case "avg":
		return inferThroughNCHW(x, n, "AveragePool", inferPool, true)
	case "global_avg":
		return inferThroughNCHW(x, n, "GlobalAveragePool", inferGlobalPool, true)
	}
	return fmt.Errorf("unknown PoolNHWC mode %q", n.AttrString("mode", ""))
}

// inferConvChain: Y [N, H', W', M] from X [N, H, W, C] through the
// depthwise window (Wd, input 3) and the projection (Wp, input 5; M is
// Wd's channels without one).
func inferConvChain(x *inferer, n *ir.Node) error {
	t, err := x.inRank(n, 0, 4, 4)
	if err != nil {
		return err
	}
	wd, err := x.inRank(n, 3, 4, 4)
	if err != nil {
		return err
	}
	m := wd.Shape[0]
	if n.Input(5) != nil {
		wp, err := x.inRank(n, 5, 4, 4)
		if err != nil {
			return err
		}
		m = wp.Shape[0]
	}
	kernel := n.AttrInts("kernel_shape", nil)
	if kernel == nil {
		ks, ok := wd.Shape[2:].Consts()
		if !ok {
			return fmt.Errorf("Wd shape %v has symbolic spatial dims and kernel_shape is not given", wd.Shape)
		}
		kernel = ks
	}
	if len(kernel) != 2 {
		return fmt.Errorf("kernel_shape %v must have 2 dims", kernel)
	}
	win, err := readWindow(n, kernel)
	if err != nil {
		return err
	}
	out := ir.Shape{t.Shape[0]}
	for i := 0; i < 2; i++ {
		d, err := x.windowDim(win, i, t.Shape[1+i])
		if err != nil {
			return err
		}
		out = append(out, d)
	}
	x.setOut(n, 0, t.DType, append(out, m))
	return nil
}

// inferSameAsInput gives output 0 input 0's type.
func inferSameAsInput(x *inferer, n *ir.Node) error {
	t, err := x.in(n, 0)
	if err != nil {
		return err
	}
	x.setOut(n, 0, t.DType, cloneShape(t.Shape))
	return nil
}

// inferThroughNCHW runs rule f (of ai.onnx op) on n; with nhwc, on a
// shadow of n whose input 0 (rank 4) is permuted to NCHW, and sets n's
// output 0 to the shadow's output permuted to NHWC.
func inferThroughNCHW(x *inferer, n *ir.Node, op string, f inferFunc, nhwc bool) error {
	if !nhwc {
		return f(x, n)
	}
	t, err := x.inRank(n, 0, 4, 5)
	if err != nil {
		return err
	}
	r := t.Rank() // 5: a 3-D FusedConv, NDHWC
	if r == 5 && op != "Conv" {
		return fmt.Errorf("%s with layout NHWC takes rank-4 input, have %v", op, t.Shape)
	}
	s := *n
	s.Op, s.Domain = op, ""
	s.Inputs = append([]*ir.Value(nil), n.Inputs...)
	s.Inputs[0] = &ir.Value{Name: n.Inputs[0].Name, Type: permuted(t, permToNCHWOf(r))}
	if n.AttrString("in_layout", "NHWC") == "NCHW" {
		// A FusedConv reading its input NCHW (layout.go's folded entry
		// Transpose) writes NHWC.
		s.Inputs[0] = n.Inputs[0]
	}
	out := &ir.Value{Name: n.Outputs[0].Name}
	s.Outputs = []*ir.Value{out}
	if err := f(x, &s); err != nil {
		return err
	}
	if out.Type.Kind == ir.TensorKind && !out.Type.Unranked && out.Type.Rank() == r {
		x.set(n.Outputs[0], permuted(out.Type, permToNHWCOf(r)))
	}
	return nil
}

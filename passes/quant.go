package passes

import (
	"fmt"
	"slices"

	"github.com/cuvil/cuvil/ir"
)

// Shape rules of the integer ops fuse-quant makes.
func init() {
	reg(inferQGemm, "cuvil::QGemm")
	reg(inferQConv, "cuvil::QConv")
}

// qOutDType is a QGemm/QConv's output dtype: Y_zero's, u8 with Y_scale
// alone, f32 without Y_scale (dequantised).
func qOutDType(x *inferer, n *ir.Node) (ir.DType, error) {
	if n.Input(8) != nil {
		t, err := x.in(n, 8)
		return t.DType, err
	}
	if n.Input(7) != nil {
		return ir.U8, nil
	}
	return ir.F32, nil
}

// inferQGemm: A [..., K] x B [K, N] -> [..., N].
func inferQGemm(x *inferer, n *ir.Node) error {
	a, err := x.inRank(n, 0, 1, -1)
	if err != nil {
		return err
	}
	b, err := x.inRank(n, 3, 2, 2)
	if err != nil {
		return err
	}
	if _, err := sameDim(a.Shape[len(a.Shape)-1], b.Shape[0]); err != nil {
		return fmt.Errorf("A's K and B's: %w", err)
	}
	dt, err := qOutDType(x, n)
	if err != nil {
		return err
	}
	s := append(cloneShape(a.Shape[:len(a.Shape)-1]), b.Shape[1])
	x.setOut(n, 0, dt, s)
	return nil
}

// inferQConv is Conv's rule on (X, W), in QConv's output dtype.
func inferQConv(x *inferer, n *ir.Node) error {
	s := *n
	s.Op, s.Domain = "ConvInteger", ""
	s.Inputs = []*ir.Value{n.Input(0), n.Input(3)}
	out := &ir.Value{Name: n.Outputs[0].Name}
	s.Outputs = []*ir.Value{out}
	if err := inferConv(x, &s); err != nil {
		return err
	}
	dt, err := qOutDType(x, n)
	if err != nil {
		return err
	}
	if out.Type.Kind == ir.TensorKind && !out.Type.Unranked {
		x.setOut(n, 0, dt, out.Type.Shape)
	}
	return nil
}

// FuseQuant rewrites the quantized ONNX ops into the integer GEMM and
// convolution (cuvil::QGemm, cuvil::QConv; templates/k_quant_gemm.go),
// which keep their zero points, bias and requantisation in the epilogue:
//
//   - QLinearMatMul with a 2-D B, float32 scales and a per-tensor A scale
//     and zero point becomes QGemm with f32_multiplier (the multiplier
//     rounded to float32 as QLinearMatMul's reference arithmetic does, so
//     the bytes are the same);
//   - QLinearConv, 2-D and group 1, with float32 scales and a per-tensor X
//     scale and zero point becomes QConv (its bias moves to input 6).
//
// Others (N-D or grouped convolutions, per-row A scales, f16 scales)
// stay on the reference kernels.
var FuseQuant = &Pass{
	Name: "fuse-quant",
	Doc:  "rewrite QLinearMatMul and QLinearConv into the integer GEMM/conv ops (cuvil::QGemm, cuvil::QConv) with the requantisation in their epilogue",
	Run: func(m *ir.Model) error {
		return forGraphs(m, func(g *ir.Graph) error {
			r := newRewriter(m, g)
			for _, n := range slices.Clone(g.Nodes) {
				at(m, n)
				if n.Domain != "" && n.Domain != "ai.onnx" || len(n.Outputs) != 1 || n.Outputs[0] == nil {
					continue
				}
				var fn *ir.Node
				switch n.Op {
				case "QLinearMatMul":
					fn = quantMatMul(n)
				case "QLinearConv":
					fn = quantConv(n)
				}
				if fn == nil {
					continue
				}
				n.Outputs[0].Def = fn
				useCuvil(m)
				r.fuse(fn, n, n)
			}
			r.sweep()
			return nil
		})
	},
}

// qScalar reports whether v is present, known and holds one element.
func qScalar(v *ir.Value) bool {
	if v == nil || !v.Type.Known() {
		return false
	}
	c, ok := v.Type.Shape.NumElements()
	return ok && c == 1
}

// qVector reports whether v is a known scalar or 1-D of length l.
func qVector(v *ir.Value, l ir.Dim) bool {
	if qScalar(v) {
		return true
	}
	return v != nil && v.Type.Known() && v.Type.Rank() == 1 && v.Type.Shape[0] == l && l.IsConst()
}

// qF32 reports whether every value is present with dtype f32.
func qF32(vs ...*ir.Value) bool {
	for _, v := range vs {
		if v == nil || !v.Type.Known() || v.Type.DType != ir.F32 {
			return false
		}
	}
	return true
}

func quantMatMul(n *ir.Node) *ir.Node {
	in := n.Inputs
	if len(in) != 8 || slices.Contains(in, nil) {
		return nil
	}
	a, as, azp, b, bs, bzp, ys, yzp := in[0], in[1], in[2], in[3], in[4], in[5], in[6], in[7]
	if !a.Type.Known() || !b.Type.Known() || b.Type.Rank() != 2 || a.Type.Rank() < 1 || !qF32(as, bs, ys) {
		return nil
	}
	col := b.Type.Shape[1]
	if !qScalar(as) || !qScalar(azp) || !qScalar(ys) || !qScalar(yzp) || !qVector(bs, col) || !qVector(bzp, col) {
		return nil
	}
	fn := &ir.Node{Name: n.Name, Op: "QGemm", Domain: ir.CuvilDomain, Version: ir.CuvilOpset,
		Inputs: []*ir.Value{a, as, azp, b, bs, bzp, nil, ys, yzp}, Outputs: n.Outputs}
	fn.SetAttr(&ir.Attr{Name: "f32_multiplier", Kind: ir.AttrInt, I: 1})
	return fn
}

func quantConv(n *ir.Node) *ir.Node {
	in := n.Inputs
	if len(in) < 8 || slices.Contains(in[:8], nil) {
		return nil
	}
	x, xs, xzp, w, ws, wzp, ys, yzp := in[0], in[1], in[2], in[3], in[4], in[5], in[6], in[7]
	var bias *ir.Value
	if len(in) > 8 {
		bias = in[8]
	}
	if !x.Type.Known() || !w.Type.Known() || x.Type.Rank() != 4 || w.Type.Rank() != 4 || !qF32(xs, ws, ys) {
		return nil
	}
	if n.AttrInt("group", 1) != 1 {
		return nil
	}
	mo := w.Type.Shape[0]
	if !qScalar(xs) || !qScalar(xzp) || !qScalar(ys) || !qScalar(yzp) || !qVector(ws, mo) || !qVector(wzp, mo) {
		return nil
	}
	if bias != nil && !(bias.Type.Known() && bias.Type.Rank() == 1 && bias.Type.Shape[0] == mo && mo.IsConst()) {
		return nil
	}
	fn := &ir.Node{Name: n.Name, Op: "QConv", Domain: ir.CuvilDomain, Version: ir.CuvilOpset,
		Inputs: []*ir.Value{x, xs, xzp, w, ws, wzp, bias, ys, yzp}, Outputs: n.Outputs}
	for _, a := range n.Attrs {
		fn.SetAttr(a)
	}
	return fn
}

package passes

import (
	"math"

	"github.com/cuvil/cuvil/ir"
)

// FoldPad folds a constant Pad of the spatial axes into the Conv or pool
// that reads it: Pad(x) -> Conv becomes Conv(x) with the Pad's amounts
// added to its pads, so the padded copy of the map is never written.
// Exporters write such Pads where the consumer's padding cannot say it:
// tf2onnx before Conv (TensorFlow's SAME padding of strided convs is
// asymmetric), torchvision's inception_v3 before AveragePool
// (avg_pool2d(padding=1, count_include_pad=True) at opset 17 is Pad +
// AveragePool), ZeroPad2d layers.
//
// A Pad qualifies when its mode is constant, its pads are constants that
// pad only the spatial axes (axes 0 and 1 by 0) by non-negative amounts,
// and its only reader reads it as input X (it is not a graph output):
//   - a Conv (explicit or VALID padding) with pad value 0;
//   - an AveragePool (explicit or VALID padding, ceil_mode 0) with pad
//     value 0 that counts the padding (count_include_pad 1) or has no
//     pads of its own: it then counts the Pad's zeros, count_include_pad 1;
//   - a MaxPool (explicit or VALID padding, ceil_mode 0, one output) with
//     pad value -Inf, which its own padding acts as.
//
// SAME_* auto_pad consumers, other modes (reflect, edge, wrap) and pads
// that crop (negative) stay as they are.
var FoldPad = &Pass{
	Name: "fold-pad",
	Doc:  "fold a constant spatial Pad into the Conv/AveragePool/MaxPool reading it (its pads grow)",
	Run: func(m *ir.Model) error {
		return forGraphs(m, func(g *ir.Graph) error {
			r := newRewriter(m, g)
			for _, n := range g.Nodes {
				if r.dead[n] {
					continue
				}
				at(m, n)
				foldPad(r, n)
			}
			r.sweep()
			return nil
		})
	},
}

func foldPad(r *rewriter, p *ir.Node) {
	if !isOp(p, "Pad") || len(p.Inputs) < 1 || len(p.Outputs) != 1 || p.Inputs[0] == nil || r.outs[p.Outputs[0]] {
		return
	}
	if p.AttrString("mode", "constant") != "constant" {
		return
	}
	x, y := p.Inputs[0], p.Outputs[0]
	rank := x.Type.Rank()
	if rank < 3 {
		return
	}
	pads, value, ok := padAmounts(p, rank)
	if !ok {
		return
	}
	for i, v := range pads {
		if v < 0 || (i%rank < 2 && v != 0) {
			return
		}
	}
	u := r.only(y)
	if u == nil || len(u.Inputs) == 0 || u.Inputs[0] != y {
		return
	}
	for _, v := range u.Inputs[1:] {
		if v == y {
			return
		}
	}
	own := consumerPads(u, rank-2)
	if own == nil {
		return
	}
	switch {
	case isOp(u, "Conv"):
		if value != 0 {
			return
		}
	case isOp(u, "AveragePool"):
		if value != 0 || u.AttrInt("ceil_mode", 0) != 0 {
			return
		}
		if u.AttrInt("count_include_pad", 0) == 0 {
			for _, v := range own {
				if v != 0 {
					return
				}
			}
		}
	case isOp(u, "MaxPool"):
		if !math.IsInf(value, -1) || len(u.Outputs) != 1 || u.AttrInt("ceil_mode", 0) != 0 {
			return
		}
	default:
		return
	}
	sp := rank - 2
	merged := make([]int64, 2*sp)
	for i := range sp {
		merged[i] = own[i] + pads[2+i]
		merged[sp+i] = own[sp+i] + pads[rank+2+i]
	}
	u.SetAttr(&ir.Attr{Name: "pads", Kind: ir.AttrInts, Ints: merged})
	u.SetAttr(&ir.Attr{Name: "auto_pad", Kind: ir.AttrString, S: "NOTSET"})
	if isOp(u, "AveragePool") {
		u.SetAttr(&ir.Attr{Name: "count_include_pad", Kind: ir.AttrInt, I: 1})
	}
	u.Inputs[0] = x
	r.absorb(u, p)
}

// padAmounts returns Pad p's amounts for every axis of a rank-r input
// (begins then ends, ONNX's order) and its constant value, when both are
// constants: the pads and value attributes before opset 11, the pads,
// constant_value and (from opset 18) axes inputs after.
func padAmounts(p *ir.Node, rank int) ([]int64, float64, bool) {
	if p.Version < 11 {
		a := p.Attr("pads")
		if a == nil || len(a.Ints) != 2*rank {
			return nil, 0, false
		}
		v := 0.0
		if va := p.Attr("value"); va != nil {
			v = float64(va.F)
		}
		return a.Ints, v, true
	}
	pads, ok := intsConst(p.Input(1))
	if !ok {
		return nil, 0, false
	}
	v := 0.0
	if c := p.Input(2); c != nil {
		if v, ok = scalarConst(c); !ok {
			return nil, 0, false
		}
	}
	axes := make([]int64, rank)
	for i := range axes {
		axes[i] = int64(i)
	}
	if a := p.Input(3); a != nil {
		if axes, ok = intsConst(a); !ok {
			return nil, 0, false
		}
	}
	if len(pads) != 2*len(axes) {
		return nil, 0, false
	}
	full := make([]int64, 2*rank)
	seen := make([]bool, rank)
	for i, ax := range axes {
		if ax < 0 {
			ax += int64(rank)
		}
		if ax < 0 || ax >= int64(rank) || seen[ax] {
			return nil, 0, false
		}
		seen[ax] = true
		full[ax], full[int64(rank)+ax] = pads[i], pads[len(axes)+i]
	}
	return full, v, true
}

// consumerPads returns the explicit pads (begins then ends over sp
// spatial axes) of a Conv or pool u with auto_pad NOTSET (its pads, zeros
// when absent) or VALID (zeros); nil for SAME_* or malformed pads.
func consumerPads(u *ir.Node, sp int) []int64 {
	switch u.AttrString("auto_pad", "NOTSET") {
	case "NOTSET":
	case "VALID":
		return make([]int64, 2*sp)
	default:
		return nil
	}
	a := u.Attr("pads")
	if a == nil {
		return make([]int64, 2*sp)
	}
	if len(a.Ints) != 2*sp {
		return nil
	}
	return a.Ints
}

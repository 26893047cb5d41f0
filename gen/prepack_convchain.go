package gen

import (
	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/templates"
)

// prepackConvChain returns the inputs of cuvil::FusedConvChain n with its
// weights (We, Wd, Wp: inputs 1, 3 and 5, those present) replaced by
// templates.PrepackConvWeightsNHWC's results, and the value of
// templates.ConvChainPackedAttr (their ONNX shapes in order), or false
// when one of them is not a float32 constant only n reads: then all stay
// as they are (the kernel packs them at run time).
func prepackConvChain(n *ir.Node, uses map[*ir.Value][]*ir.Node, isOutput map[*ir.Value]bool) ([]*ir.Value, []int64, bool) {
	if n.Attr(templates.ConvChainPackedAttr) != nil || n.Input(3) == nil {
		return nil, nil, false
	}
	inputs := append([]*ir.Value(nil), n.Inputs...)
	var shapes []int64
	for _, i := range []int{1, 3, 5} {
		w := n.Input(i)
		if w == nil {
			continue
		}
		if !w.IsConst() || w.Const.DType != ir.F32 || len(uses[w]) != 1 || isOutput[w] || w.Const.Check() != nil || len(w.Const.Shape) != 4 {
			return nil, nil, false
		}
		ws := make([]int, 4)
		for j, d := range w.Const.Shape {
			ws[j] = int(d)
		}
		group := 1
		if i == 3 {
			group = ws[0] // depthwise
		}
		packed, ok := templates.PrepackConvWeightsNHWC(constF32(w.Const), ws, group)
		if !ok {
			return nil, nil, false
		}
		inputs[i] = packedValue(w, packed)
		shapes = append(shapes, w.Const.Shape...)
	}
	return inputs, shapes, true
}

package gen

import (
	"encoding/binary"
	"math"

	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/templates"
)

// prepack stores constant operands in the layout their kernels' GEMMs
// read, so a run never repacks them: the float32 W of every Conv and
// cuvil::FusedConv (but depthwise ones) that no other node reads becomes
// templates.PrepackConvWeights's result, a 1-D constant, and the node gets
// templates.ConvPackedAttr with W's ONNX shape. The packed form is the only
// copy in weights.bin; both the assembly and the pure-Go GEMM read it.
//
// It edits m's top-level graph in place and returns the function that
// undoes the edits, so Generate leaves its caller's model as it found it.
// The result depends only on the model (deterministic weights.bin).
func prepack(m *ir.Model, winograd bool) (undo func()) {
	g := m.Graph
	uses := g.Uses()
	isOutput := map[*ir.Value]bool{}
	for _, v := range g.Outputs {
		isOutput[v] = true
	}
	type edit struct {
		n      *ir.Node
		attrs  []*ir.Attr
		inputs []*ir.Value
	}
	var edits []edit
	swapped := map[*ir.Value]*ir.Value{}
	for _, n := range g.Nodes {
		isConv := n.Op == "Conv" && (n.Domain == "" || n.Domain == "ai.onnx") || n.Op == "FusedConv" && n.Domain == ir.CuvilDomain
		if !isConv || len(n.Inputs) < 2 || n.Attr(templates.ConvPackedAttr) != nil {
			continue
		}
		w := n.Inputs[1]
		if !w.IsConst() || w.Const.DType != ir.F32 || len(uses[w]) != 1 || isOutput[w] || w.Const.Check() != nil {
			continue
		}
		ws := make([]int, len(w.Const.Shape))
		for i, d := range w.Const.Shape {
			ws[i] = int(d)
		}
		data := make([]float32, len(w.Const.Raw)/4)
		for i := range data {
			data[i] = math.Float32frombits(binary.LittleEndian.Uint32(w.Const.Raw[4*i:]))
		}
		packed, ok := templates.PrepackConvWeights(data, ws, int(n.AttrInt("group", 1)))
		attr := templates.ConvPackedAttr
		if u, wattr, wok := prepackWinograd(n, data, ws); winograd && wok { // prepack_winograd.go
			packed, ok, attr = u, true, wattr
		}
		if !ok {
			continue
		}
		t := ir.NewTensorF32([]int64{int64(len(packed))}, packed)
		t.Name = w.Const.Name
		pv := &ir.Value{Name: w.Name, Type: t.Type(), Const: t}
		edits = append(edits, edit{n: n, attrs: n.Attrs, inputs: n.Inputs})
		n.Attrs = append([]*ir.Attr(nil), n.Attrs...)
		n.SetAttr(&ir.Attr{Name: attr, Kind: ir.AttrInts, Ints: append([]int64(nil), w.Const.Shape...)})
		n.Inputs = append([]*ir.Value(nil), n.Inputs...)
		n.Inputs[1] = pv
		swapped[w] = pv
	}
	consts := g.Consts
	if len(swapped) > 0 {
		g.Consts = append([]*ir.Value(nil), g.Consts...)
		for i, v := range g.Consts {
			if pv, ok := swapped[v]; ok {
				g.Consts[i] = pv
			}
		}
	}
	return func() {
		for _, e := range edits {
			e.n.Attrs, e.n.Inputs = e.attrs, e.inputs
		}
		g.Consts = consts
	}
}

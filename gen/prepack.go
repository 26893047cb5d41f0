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
// templates.PrepackConvWeights's result (templates.PrepackConvWeightsNHWC's,
// depthwise ones included, for a FusedConv with layout=NHWC), a 1-D constant, and the node gets
// templates.ConvPackedAttr with W's ONNX shape; a 3x3 stride-1 one that
// prepackWinograd picks gets its Winograd form (NCHW or NHWC) and
// templates.ConvWinogradAttr instead. The packed form is the only
// copy in weights.bin; both the assembly and the pure-Go GEMM read it.
// Likewise the constant float32 2-D B of every Gemm, MatMul,
// cuvil::FusedGemm and cuvil::FusedMatMul becomes templates.PrepackGemmB's
// result and the node gets templates.GemmPackedAttr with B's ONNX shape
// (see prepackGemmB for the ones left alone). The weights of a
// cuvil::FusedConvChain are packed like an NHWC FusedConv's
// (prepackConvChain, templates.ConvChainPackedAttr).
//
// It edits m's top-level graph in place and returns the function that
// undoes the edits, so Generate leaves its caller's model as it found it.
// The result depends only on the model (deterministic weights.bin).
func prepack(m *ir.Model, winograd WinogradMode) (undo func()) {
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
		if prepackGemmB(n) {
			w := n.Inputs[1]
			if !w.IsConst() || w.Const.DType != ir.F32 || len(uses[w]) != 1 || isOutput[w] || w.Const.Check() != nil {
				continue
			}
			bs := []int{int(w.Const.Shape[0]), int(w.Const.Shape[1])}
			packed, ok := templates.PrepackGemmB(constF32(w.Const), bs, n.AttrInt("transB", 0) != 0)
			if !ok {
				continue
			}
			pv := packedValue(w, packed)
			edits = append(edits, edit{n: n, attrs: n.Attrs, inputs: n.Inputs})
			n.Attrs = append([]*ir.Attr(nil), n.Attrs...)
			n.SetAttr(&ir.Attr{Name: templates.GemmPackedAttr, Kind: ir.AttrInts, Ints: append([]int64(nil), w.Const.Shape...)})
			n.Inputs = append([]*ir.Value(nil), n.Inputs...)
			n.Inputs[1] = pv
			swapped[w] = pv
			continue
		}
		if n.Op == "FusedConvChain" && n.Domain == ir.CuvilDomain {
			if inputs, shapes, ok := prepackConvChain(n, uses, isOutput); ok { // prepack_convchain.go
				edits = append(edits, edit{n: n, attrs: n.Attrs, inputs: n.Inputs})
				n.Attrs = append([]*ir.Attr(nil), n.Attrs...)
				n.SetAttr(&ir.Attr{Name: templates.ConvChainPackedAttr, Kind: ir.AttrInts, Ints: shapes})
				for i, v := range inputs {
					if v != n.Inputs[i] {
						swapped[n.Inputs[i]] = v
					}
				}
				n.Inputs = inputs
			}
			continue
		}
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
		data := constF32(w.Const)
		packed, ok := templates.PrepackConvWeights(data, ws, int(n.AttrInt("group", 1)))
		attr := templates.ConvPackedAttr
		if n.AttrString("layout", "NCHW") == "NHWC" {
			// The layout pass's NHWC convolutions (depthwise ones too).
			packed, ok = templates.PrepackConvWeightsNHWC(data, ws, int(n.AttrInt("group", 1)))
		}
		if u, wattr, wok := prepackWinograd(n, data, ws, winograd); wok { // prepack_winograd.go, NCHW or NHWC
			packed, ok, attr = u, true, wattr
		}
		if !ok {
			continue
		}
		pv := packedValue(w, packed)
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

// prepackGemmB reports whether n is a Gemm, MatMul, cuvil::FusedGemm or
// cuvil::FusedMatMul whose B (input 1) gen may store prepacked: B is 2-D
// (a MatMul's B of another rank broadcasts or is promoted), A is float32,
// and A's row count is not known to be 1 or 2: those take the GEMV path,
// which reads B as it is.
func prepackGemmB(n *ir.Node) bool {
	onnx := n.Domain == "" || n.Domain == "ai.onnx"
	cuvil := n.Domain == ir.CuvilDomain
	var transA bool
	switch {
	case onnx && n.Op == "Gemm", cuvil && n.Op == "FusedGemm":
		transA = n.AttrInt("transA", 0) != 0
	case onnx && n.Op == "MatMul", cuvil && n.Op == "FusedMatMul":
	default:
		return false
	}
	if len(n.Inputs) < 2 || n.Inputs[0] == nil || n.Inputs[1] == nil || n.Attr(templates.GemmPackedAttr) != nil {
		return false
	}
	a, b := n.Inputs[0].Type, n.Inputs[1]
	if a.Kind != ir.TensorKind || a.DType != ir.F32 || a.Unranked || len(a.Shape) == 0 || !b.IsConst() || len(b.Const.Shape) != 2 {
		return false
	}
	// Rows of op(A): all but the last dimension (MatMul), or one of two.
	rows := a.Shape[:len(a.Shape)-1]
	if len(a.Shape) == 2 && transA {
		rows = a.Shape[1:]
	}
	m := int64(1)
	for _, d := range rows {
		if d.Sym != "" || d.Size < 0 {
			return true
		}
		m *= d.Size
	}
	return m > 2
}

// constF32 returns t's float32 values.
func constF32(t *ir.Tensor) []float32 {
	data := make([]float32, len(t.Raw)/4)
	for i := range data {
		data[i] = math.Float32frombits(binary.LittleEndian.Uint32(t.Raw[4*i:]))
	}
	return data
}

// packedValue is the 1-D constant that replaces w: its packed values, same
// names.
func packedValue(w *ir.Value, packed []float32) *ir.Value {
	t := ir.NewTensorF32([]int64{int64(len(packed))}, packed)
	t.Name = w.Const.Name
	return &ir.Value{Name: w.Name, Type: t.Type(), Const: t}
}

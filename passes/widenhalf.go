package passes

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/cuvil/cuvil/ir"
)

// WidenHalf lowers the compute of a model that arrives in fp16 (f16
// weights feeding its convolutions and GEMMs, f16 activations, Casts at
// the edges) to float32, so every later pass and kernel sees the float32
// model it is tuned for instead of a conversion per element per op:
//
//   - each f16 constant such a node reads becomes the same values as an
//     f32 constant marked store=f16: weights.bin keeps it half (gen), New
//     widens it (templates.WidenF16, F16C); prepack and fold-batchnorm
//     carry the mark to the panels and folded weights they make;
//   - each f16 value an op in widenOps writes becomes f32 (the op then
//     computes in f32, as ONNX Runtime's CPU provider does for most fp16
//     ops: more precise than rounding every intermediate to f16);
//   - where the model's semantics shows a half value (a graph input or
//     output, or a value an explicit Cast or an op outside widenOps
//     reads), the value stays f16: a Cast to f16 after the widened
//     producer rounds it, a Cast to f32 widens it for widened readers;
//   - a Cast that became a conversion to its own input's dtype is removed.
//
// It runs only where the model has an f16 constant as a Conv,
// ConvTranspose, Gemm or MatMul operand (an fp16 model's weights); other
// models, fp32 ones and the conformance suites' small f16 tests among
// them, are left alone. Only the main graph is rewritten, and not at all
// when a node has subgraphs.
var WidenHalf = &Pass{
	Name: "widen-half",
	Doc:  "fp16 models (f16 weights in convs/GEMMs): compute in f32, weights stored f16 in weights.bin and widened at New, f16 kept where the model shows it",
	Run:  widenHalf,
}

// widenOps are the ops whose float outputs have their float inputs' dtype
// (one type parameter T), so that computing them in f32 is only more
// precise. Outputs of other dtypes (MaxPool's indices, Shape) are left.
var widenOps = map[string]bool{
	"Abs": true, "Add": true, "AveragePool": true, "BatchNormalization": true, "Ceil": true, "Clip": true,
	"Concat": true, "Conv": true, "ConvTranspose": true, "DepthToSpace": true, "Div": true, "Dropout": true,
	"Elu": true, "Erf": true, "Exp": true, "Expand": true, "Flatten": true, "Floor": true, "Gather": true,
	"Gelu": true, "Gemm": true, "GlobalAveragePool": true, "GlobalMaxPool": true, "HardSigmoid": true,
	"HardSwish": true, "Identity": true, "InstanceNormalization": true, "LRN": true, "LayerNormalization": true,
	"LeakyRelu": true, "Log": true, "LogSoftmax": true, "MatMul": true, "Max": true, "MaxPool": true,
	"Mean": true, "Min": true, "Mish": true, "Mul": true, "Neg": true, "PRelu": true, "Pad": true, "Pow": true,
	"Reciprocal": true, "ReduceL2": true, "ReduceMax": true, "ReduceMean": true, "ReduceMin": true, "ReduceSum": true,
	"Relu": true, "Reshape": true, "Resize": true, "Selu": true, "Sigmoid": true, "Sign": true, "Slice": true,
	"Softmax": true, "Softplus": true, "Softsign": true, "SpaceToDepth": true, "Split": true, "Sqrt": true,
	"Squeeze": true, "Sub": true, "Sum": true, "Tanh": true, "Tile": true, "Transpose": true, "Unsqueeze": true,
	"Upsample": true, "Where": true,
}

// isHalfModel reports whether g has an f16 constant as an operand of a
// Conv, ConvTranspose, Gemm or MatMul.
func isHalfModel(g *ir.Graph) bool {
	for _, n := range g.Nodes {
		if !isONNX(n) {
			continue
		}
		switch n.Op {
		case "Conv", "ConvTranspose", "Gemm", "MatMul":
			for _, v := range n.Inputs {
				if v.IsConst() && v.Const.DType == ir.F16 {
					return true
				}
			}
		}
	}
	return false
}

func isF16(v *ir.Value) bool {
	return v != nil && v.Type.Kind == ir.TensorKind && !v.Type.Unranked && v.Type.DType == ir.F16
}

func widenHalf(m *ir.Model) error {
	g := m.Graph
	for _, n := range g.Nodes {
		for _, a := range n.Attrs {
			if a.Kind == ir.AttrGraph || a.Kind == ir.AttrGraphs {
				return nil
			}
		}
	}
	if !isHalfModel(g) {
		return nil
	}
	castV, ok := onnxVersion(m, "Cast")
	if !ok {
		return nil
	}
	names := modelNames(m)
	fresh := func(base string) string {
		name := base
		for i := 1; names[name]; i++ {
			name = fmt.Sprintf("%s_%d", base, i)
		}
		names[name] = true
		return name
	}
	widened := func(n *ir.Node) bool { return isONNX(n) && widenOps[n.Op] }
	// shown: half values the model's semantics shows (graph outputs,
	// values read by a node that is not widened).
	shown := map[*ir.Value]bool{}
	for _, v := range g.Outputs {
		shown[v] = true
	}
	for _, n := range g.Nodes {
		if !widened(n) {
			for _, v := range n.Inputs {
				shown[v] = true
			}
		}
	}
	// wide maps a half value to the f32 value widened readers read.
	wide := map[*ir.Value]*ir.Value{}
	var consts []*ir.Value
	var out []*ir.Node
	for _, n := range g.Nodes {
		at(m, n)
		if !widened(n) {
			out = append(out, n)
			continue
		}
		var ins []*ir.Value
		changed := false
		for _, v := range n.Inputs {
			if !isF16(v) {
				ins = append(ins, v)
				continue
			}
			w, ok := wide[v]
			switch {
			case ok:
			case v.IsConst():
				w = &ir.Value{Name: fresh(v.Name + "_f32"), Type: ir.TensorType(ir.F32, v.Type.Shape), Const: widenConst(v.Const)}
				if !shown[v] {
					w.Name = v.Name // the f16 constant goes dead
				}
				consts = append(consts, w)
			default: // a graph input or an unwidened node's output
				w = &ir.Value{Name: fresh(v.Name + "_f32"), Type: ir.TensorType(ir.F32, v.Type.Shape)}
				w.Def = &ir.Node{Name: fresh(v.Name + "_widen"), Op: "Cast", Version: castV, Inputs: []*ir.Value{v}, Outputs: []*ir.Value{w},
					Attrs: []*ir.Attr{{Name: "to", Kind: ir.AttrInt, I: int64(ir.F32)}}}
				out = append(out, w.Def)
			}
			wide[v] = w
			ins = append(ins, w)
			changed = true
		}
		var narrow []*ir.Node
		outs := append([]*ir.Value(nil), n.Outputs...)
		for i, o := range outs {
			if !isF16(o) {
				continue
			}
			changed = true
			if !shown[o] {
				o.Type = ir.TensorType(ir.F32, o.Type.Shape)
				wide[o] = o
				continue
			}
			w := &ir.Value{Name: fresh(o.Name + "_f32"), Type: ir.TensorType(ir.F32, o.Type.Shape), Def: n}
			outs[i] = w
			wide[o] = w
			o.Def = &ir.Node{Name: fresh(o.Name + "_round"), Op: "Cast", Version: castV, Inputs: []*ir.Value{w}, Outputs: []*ir.Value{o},
				Attrs: []*ir.Attr{{Name: "to", Kind: ir.AttrInt, I: int64(ir.F16)}}}
			narrow = append(narrow, o.Def)
		}
		if changed {
			n.Inputs = ins
			n.Outputs = outs
		}
		out = append(out, n)
		out = append(out, narrow...)
	}
	g.Nodes = out
	// The widened constants replace the f16 ones nothing else reads.
	used := map[*ir.Value]bool{}
	for _, n := range g.Nodes {
		for _, v := range n.Inputs {
			used[v] = true
		}
	}
	for _, v := range g.Outputs {
		used[v] = true
	}
	var keep []*ir.Value
	for _, v := range g.Consts {
		if used[v] {
			keep = append(keep, v)
		}
	}
	g.Consts = append(keep, consts...)
	removeNoopCasts(g)
	fuseRoundHalf(m)
	return nil
}

// fuseRoundHalf replaces each Cast(Cast(x f32, to=FLOAT16), to=FLOAT)
// whose half value nothing else reads by one cuvil::RoundHalf(x): the
// rounding the model asks for at its input edge (and where widen-half
// rounds a widened value the model casts back), in one pass without the
// half tensor in memory.
func fuseRoundHalf(m *ir.Model) {
	g := m.Graph
	uses := g.Uses()
	isOut := map[*ir.Value]bool{}
	for _, v := range g.Outputs {
		isOut[v] = true
	}
	drop := map[*ir.Node]bool{}
	for _, n := range g.Nodes {
		if !isOp(n, "Cast") || n.AttrInt("to", 0) != int64(ir.F32) || len(n.Inputs) != 1 || !isF16(n.Inputs[0]) {
			continue
		}
		h := n.Inputs[0]
		c := h.Def
		if c == nil || !isOp(c, "Cast") || c.AttrInt("to", 0) != int64(ir.F16) || len(c.Inputs) != 1 || len(uses[h]) != 1 || isOut[h] {
			continue
		}
		x := c.Inputs[0]
		if x == nil || x.Type.Kind != ir.TensorKind || x.Type.DType != ir.F32 {
			continue
		}
		drop[c] = true
		n.Op, n.Domain, n.Version = "RoundHalf", ir.CuvilDomain, 1
		n.Attrs = nil
		n.Inputs = []*ir.Value{x}
		n.Fused = append(n.Fused, ir.Origin{Op: "Cast", Name: c.Name}, ir.Origin{Op: "Cast", Name: n.Name})
	}
	if len(drop) == 0 {
		return
	}
	useCuvil(m)
	var out []*ir.Node
	for _, n := range g.Nodes {
		if !drop[n] {
			out = append(out, n)
		}
	}
	g.Nodes = out
}

// widenConst is t (f16) as f32 values marked to be stored f16 again.
func widenConst(t *ir.Tensor) *ir.Tensor {
	n := int(t.NumElements())
	w := &ir.Tensor{Name: t.Name, DType: ir.F32, Shape: append([]int64(nil), t.Shape...), Raw: make([]byte, 4*n), Store: ir.F16}
	for i := 0; i < n; i++ {
		binary.LittleEndian.PutUint32(w.Raw[4*i:], math.Float32bits(ir.F16ToF32(binary.LittleEndian.Uint16(t.Raw[2*i:]))))
	}
	return w
}

// removeNoopCasts drops each Cast whose input already has the dtype it
// converts to (its readers read the input), unless it writes a graph
// output.
func removeNoopCasts(g *ir.Graph) {
	isOut := map[*ir.Value]bool{}
	for _, v := range g.Outputs {
		isOut[v] = true
	}
	alias := map[*ir.Value]*ir.Value{}
	var out []*ir.Node
	for _, n := range g.Nodes {
		for i, v := range n.Inputs {
			if a, ok := alias[v]; ok {
				n.Inputs[i] = a
			}
		}
		if isOp(n, "Cast") && len(n.Inputs) == 1 && len(n.Outputs) == 1 && !isOut[n.Outputs[0]] &&
			n.Inputs[0].Type.Kind == ir.TensorKind && n.Inputs[0].Type.DType.IsFloat() && n.AttrInt("to", 0) == int64(n.Inputs[0].Type.DType) {
			alias[n.Outputs[0]] = n.Inputs[0]
			continue
		}
		out = append(out, n)
	}
	g.Nodes = out
}

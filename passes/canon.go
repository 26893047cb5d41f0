package passes

import (
	"slices"

	"github.com/cuvil/cuvil/ir"
)

// CanonOps rewrites the variadic element-wise ops old-style exports use
// (opset 7-9 model-zoo graphs write residuals as Sum) into the binary
// spelling every fusion pattern matches:
//
//   - Sum of two inputs becomes Add (any broadcast: Add broadcasts the
//     same way), so a residual Sum and its Relu go into the conv epilogue;
//   - Sum, Max and Min of more inputs, all of the output's shape, become a
//     chain of Add/Max/Min. An input a Conv or Gemm writes for this node
//     alone goes last, so the chain's last Add (the one a Relu follows) is
//     that conv's residual epilogue; the chain's other Adds fuse into one
//     element-wise loop. With broadcasting among three or more inputs the
//     node stays (the chain's intermediate shapes would differ, and the
//     variadic kernel reads each input once);
//   - Mean becomes that Add chain (or Add) and a Div by the input count:
//     the kernel's own sum/n, so the result is the same in float32;
//   - Max and Min of two inputs already are the binary ops.
//
// Single-input Sum/Max/Min/Mean and Mean of other than f32/f64 stay.
var CanonOps = &Pass{
	Name: "canon-ops",
	Doc:  "rewrite variadic Sum/Mean (and Max/Min of more than two inputs) into chains of binary Add/Max/Min (Mean: then a Div)",
	Run: func(m *ir.Model) error {
		addV, okAdd := onnxVersion(m, "Add")
		divV, okDiv := onnxVersion(m, "Div")
		return forGraphs(m, func(g *ir.Graph) error {
			r := newRewriter(m, g)
			for _, n := range slices.Clone(g.Nodes) {
				at(m, n)
				if n.Domain != "" && n.Domain != "ai.onnx" || len(n.Outputs) != 1 || n.Outputs[0] == nil {
					continue
				}
				var bin string
				switch n.Op {
				case "Sum", "Mean":
					bin = "Add"
				case "Max", "Min":
					bin = n.Op
				default:
					continue
				}
				y := n.Outputs[0]
				if len(n.Inputs) < 2 || !y.Type.Known() || !okAdd || n.Op == "Mean" && !okDiv {
					continue
				}
				if (n.Op == "Max" || n.Op == "Min") && len(n.Inputs) == 2 {
					continue
				}
				if n.Op == "Mean" && y.Type.DType != ir.F32 && y.Type.DType != ir.F64 {
					continue
				}
				ins := slices.Clone(n.Inputs)
				ok := true
				for _, v := range ins {
					ok = ok && v != nil && v.Type.Known() && v.Type.DType == y.Type.DType
					ok = ok && (len(ins) == 2 && addV >= 7 || v.Type.Shape.Equal(y.Type.Shape)) // Add-6 broadcasts only with broadcast=1
				}
				if !ok {
					continue
				}
				canonResidualLast(r, ins)
				binV := addV
				if bin != "Add" {
					binV, ok = onnxVersion(m, bin)
					if !ok {
						continue
					}
				}
				// The chain: ((in0 op in1) op in2) ... ; the last node writes y
				// unless a Div follows (Mean).
				var nodes []*ir.Node
				acc := ins[0]
				for i, v := range ins[1:] {
					last := i == len(ins)-2
					out := y
					if !last || n.Op == "Mean" {
						out = &ir.Value{Name: r.fresh(y.Name + "_sum"), Type: y.Type.Clone()}
					}
					name := n.Name
					if !last || n.Op == "Mean" {
						name = r.fresh(n.Name + "_" + bin)
					}
					b := &ir.Node{Name: name, Op: bin, Version: binV, Inputs: []*ir.Value{acc, v}, Outputs: []*ir.Value{out}}
					out.Def = b
					nodes = append(nodes, b)
					acc = out
				}
				if n.Op == "Mean" {
					cnt := r.constant(n.Name+"_count", floatTensor(y.Type.DType, nil, []float64{float64(len(ins))}))
					d := &ir.Node{Name: n.Name, Op: "Div", Version: divV, Inputs: []*ir.Value{acc, cnt}, Outputs: []*ir.Value{y}}
					y.Def = d
					nodes = append(nodes, d)
				}
				for _, b := range nodes {
					r.record(b, n)
				}
				r.replaceNode(n, nodes[0])
				prev := nodes[0]
				for _, b := range nodes[1:] {
					insertAfter(g, prev, b)
					prev = b
				}
			}
			r.refresh()
			return nil
		})
	},
}

// canonResidualLast moves the last input of ins that a Conv or Gemm
// writes for this node alone to the end: the chain's last Add is then
// that op's residual epilogue, and the activation after the Sum follows
// it. The others keep their order.
func canonResidualLast(r *rewriter, ins []*ir.Value) {
	for i := len(ins) - 1; i >= 0; i-- {
		v := ins[i]
		p := v.Def
		if p == nil || !(isOp(p, "Conv") || isOp(p, "Gemm") || isOp(p, "MatMul") || p.Domain == ir.CuvilDomain && (p.Op == "FusedConv" || p.Op == "FusedMatMul")) {
			continue
		}
		if len(r.uses[v]) != 1 || r.outs[v] || slices.Index(ins, v) != i || slices.Index(ins[i+1:], v) >= 0 {
			continue
		}
		copy(ins[i:], ins[i+1:])
		ins[len(ins)-1] = v
		return
	}
}

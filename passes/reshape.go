package passes

import "github.com/cuvil/cuvil/ir"

// FoldReshape collapses chains of Reshape, Squeeze, Unsqueeze and Flatten
// into one Reshape to the chain's final, fully known shape, and drops a
// reshape whose output shape equals its input's.
var FoldReshape = &Pass{
	Name: "fold-reshape",
	Doc:  "collapse Reshape/Squeeze/Unsqueeze/Flatten chains with known shapes into one Reshape",
	Run: func(m *ir.Model) error {
		version, ok := onnxVersion(m, "Reshape")
		if !ok || version < 5 {
			return nil // Reshape took its shape as an attribute: leave old models be
		}
		return forGraphs(m, func(g *ir.Graph) error {
			r := newRewriter(m, g)
			for _, n := range g.Nodes {
				at(m, n)
				if !isReshapeLike(n) || r.dead[n] {
					continue
				}
				in, out := n.Inputs[0], n.Outputs[0]
				if in == nil || out == nil || !out.Type.Known() {
					continue
				}
				shape, ok := out.Type.Shape.Consts()
				if !ok || slicesContains(shape, 0) {
					continue // a 0 in Reshape's shape would copy the input dim
				}
				if sameShape(in, out) && r.redirect(out, in) {
					r.kill(n)
					continue
				}
				p := in.Def
				if !isReshapeLike(p) || r.dead[p] || p.Inputs[0] == nil {
					continue
				}
				src := p.Inputs[0]
				if sameShape(src, out) {
					if r.redirect(out, src) {
						r.kill(n)
					}
				} else {
					c := r.constant(n.Name+"_shape", ir.NewTensorInt64([]int64{int64(len(shape))}, shape))
					nn := &ir.Node{Name: n.Name, Op: "Reshape", Version: version, Inputs: []*ir.Value{src, c}, Outputs: []*ir.Value{out}}
					out.Def = nn
					r.replaceNode(n, nn)
				}
				r.refresh()
				if len(r.uses[p.Outputs[0]]) == 0 && !r.outs[p.Outputs[0]] {
					r.kill(p)
				}
			}
			r.sweep()
			return nil
		})
	},
}

// isReshapeLike reports whether n only reinterprets its input's shape.
func isReshapeLike(n *ir.Node) bool {
	if n == nil || len(n.Inputs) == 0 || len(n.Outputs) != 1 {
		return false
	}
	return isOp(n, "Reshape") || isOp(n, "Squeeze") || isOp(n, "Unsqueeze") || isOp(n, "Flatten")
}

func slicesContains(s []int64, x int64) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

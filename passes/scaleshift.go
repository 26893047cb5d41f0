package passes

import "github.com/cuvil/cuvil/ir"

// FuseScaleShift turns what is left of a BatchNormalization that could not
// fold into a Conv (DenseNet's pre-activation BN after a Concat): Mul and
// Add by per-channel constants along axis 1, and the activation after
// them, into one cuvil::ScaleShift, one pass over the tensor instead of
// three.
var FuseScaleShift = &Pass{
	Name: "fuse-scaleshift",
	Doc:  "fuse per-channel Mul, Add and activation into cuvil::ScaleShift",
	Run: func(m *ir.Model) error {
		return forGraphs(m, func(g *ir.Graph) error {
			r := newRewriter(m, g)
			for _, n := range g.Nodes {
				at(m, n)
				if !r.dead[n] {
					fuseScaleShiftAt(r, n)
				}
			}
			r.sweep()
			return nil
		})
	},
}

func fuseScaleShiftAt(r *rewriter, n *ir.Node) {
	x, axis, s, ok := affineOf(n)
	if !ok || !isOp(n, "Mul") {
		return
	}
	y := n.Outputs[0]
	rank := y.Type.Rank()
	if rank < 2 || !y.Type.Shape[1].IsConst() || (axis != 1 && axis != -1) {
		return
	}
	C := int(y.Type.Shape[1].Size)
	add := r.only(y)
	_, aaxis, t, ok := affineOf(add)
	if !ok || !isOp(add, "Add") || (aaxis != 1 && aaxis != -1) {
		return
	}
	expand := func(v []float64) []float64 {
		if len(v) == C {
			return v
		}
		out := make([]float64, C)
		for i := range out {
			out[i] = v[0]
		}
		return out
	}
	eaten := []*ir.Node{n, add}
	cur := add.Outputs[0]
	var act []*ir.Attr
	if u := r.only(cur); u != nil {
		if a, ok := activationAttrs(u); ok && sameShape(u.Outputs[0], cur) {
			act = a
			eaten = append(eaten, u)
			cur = u.Outputs[0]
		}
	}
	dt := y.Type.DType
	sc := r.constant(n.Name+"_scale", floatTensor(dt, []int64{int64(C)}, expand(s)))
	sh := r.constant(add.Name+"_shift", floatTensor(dt, []int64{int64(C)}, expand(t)))
	ss := &ir.Node{Name: n.Name, Op: "ScaleShift", Domain: ir.CuvilDomain, Version: ir.CuvilOpset,
		Inputs: []*ir.Value{x, sc, sh}, Outputs: []*ir.Value{cur}}
	for _, a := range act {
		ss.SetAttr(a)
	}
	cur.Def = ss
	useCuvil(r.m)
	last := eaten[len(eaten)-1]
	r.fuse(ss, last, eaten...)
}

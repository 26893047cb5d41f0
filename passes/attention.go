package passes

import (
	"github.com/cuvil/cuvil/ir"
)

// FuseAttention replaces scaled dot-product attention, as exporters write
// it, by one cuvil::Attention:
//
//	MatMul(Q', Kt') [Div or Mul by a scalar] [Add mask] -> Softmax(last axis) -> MatMul(·, V)
//
// where Q' may itself be Q divided or multiplied by a scalar constant (the
// way PyTorch's MultiheadAttention scales the query) and likewise Kt'. The
// scales multiply into the node's scale attribute. Q, Kt and V must be
// f32 of one rank with the same leading dims (no MatMul broadcasting), and
// every intermediate must have no other reader.
var FuseAttention = &Pass{
	Name: "fuse-attention",
	Doc:  "replace MatMul/scale/mask-Add/Softmax/MatMul attention by cuvil::Attention",
	Run: func(m *ir.Model) error {
		return forGraphs(m, func(g *ir.Graph) error {
			r := newRewriter(m, g)
			for _, n := range g.Nodes {
				at(m, n)
				if !r.dead[n] && isOp(n, "Softmax") {
					fuseAttentionAt(r, n)
				}
			}
			r.sweep()
			return nil
		})
	},
}

// scaleOf returns x and the factor when n is x/c or x*c (c*x) for a
// scalar constant c.
func scaleOf(n *ir.Node) (*ir.Value, float64, bool) {
	switch {
	case isOp(n, "Div") && len(n.Inputs) == 2 && !n.Inputs[0].IsConst():
		if c, ok := scalarConst(n.Inputs[1]); ok && c != 0 {
			return n.Inputs[0], 1 / c, true
		}
	case isOp(n, "Mul"):
		if x, c, ok := constOperand(n); ok {
			return x, c, true
		}
	}
	return nil, 0, false
}

func fuseAttentionAt(r *rewriter, sm *ir.Node) {
	x, p := sm.Inputs[0], sm.Outputs[0]
	t := x.Type
	if !t.Known() || t.DType != ir.F32 || len(t.Shape) < 2 || len(sm.Outputs) != 1 {
		return
	}
	rank := len(t.Shape)
	def := int64(-1)
	if sm.Version < 13 {
		def = 1 // coerced to 2-D at axis: only the last axis is one row
	}
	axis := def
	for _, a := range sm.Attrs {
		if a.Name == "axis" {
			axis = a.I
		}
	}
	if axis < 0 {
		axis += int64(rank)
	}
	if axis != int64(rank-1) {
		return
	}
	mm2 := r.only(p)
	if !isOp(mm2, "MatMul") || mm2.Inputs[0] != p {
		return
	}
	v := mm2.Inputs[1]
	eaten := []*ir.Node{sm}
	scale := 1.0
	var mask *ir.Value
	cur := x
	// Mask Add, then the scale, each optional.
	if n := cur.Def; isOp(n, "Add") && r.only(cur) != nil {
		for i := 0; i < 2; i++ {
			s, mk := n.Inputs[i], n.Inputs[1-i]
			if s.Def != nil && !s.IsConst() && r.only(s) == n && maskBroadcasts(mk, x) && (isOp(s.Def, "MatMul") || isOp(s.Def, "Div") || isOp(s.Def, "Mul")) {
				mask, cur = mk, s
				eaten = append(eaten, n)
				break
			}
		}
		if mask == nil {
			return
		}
	}
	if n := cur.Def; n != nil && !isOp(n, "MatMul") {
		s, c, ok := scaleOf(n)
		if !ok || r.only(cur) == nil {
			return
		}
		scale *= c
		cur = s
		eaten = append(eaten, n)
	}
	mm1 := cur.Def
	if !isOp(mm1, "MatMul") || r.only(cur) == nil {
		return
	}
	eaten = append(eaten, mm1)
	q, kt := mm1.Inputs[0], mm1.Inputs[1]
	// A scalar scale on the query or key side folds in too.
	if n := q.Def; n != nil && r.only(q) == mm1 {
		if s, c, ok := scaleOf(n); ok {
			scale *= c
			q = s
			eaten = append(eaten, n)
		}
	}
	if n := kt.Def; n != nil && r.only(kt) == mm1 {
		if s, c, ok := scaleOf(n); ok {
			scale *= c
			kt = s
			eaten = append(eaten, n)
		}
	}
	for _, w := range []*ir.Value{q, kt, v} {
		if !w.Type.Known() || w.Type.DType != ir.F32 || len(w.Type.Shape) != rank {
			return
		}
	}
	for i := 0; i < rank-2; i++ {
		if q.Type.Shape[i] != kt.Type.Shape[i] || q.Type.Shape[i] != v.Type.Shape[i] {
			return
		}
	}
	y := mm2.Outputs[0]
	ins := []*ir.Value{q, kt, v}
	if mask != nil {
		ins = append(ins, mask)
	}
	att := &ir.Node{Name: sm.Name, Op: "Attention", Domain: ir.CuvilDomain, Version: ir.CuvilOpset, Inputs: ins, Outputs: []*ir.Value{y},
		Attrs: []*ir.Attr{{Name: "scale", Kind: ir.AttrFloat, F: float32(scale)}}}
	y.Def = att
	useCuvil(r.m)
	r.fuse(att, mm2, append(eaten, mm2)...)
}

// maskBroadcasts reports whether m, an f32 of known rank, broadcasts to
// the scores s (trailing alignment, each dim 1 or equal).
func maskBroadcasts(m, s *ir.Value) bool {
	mt, st := m.Type, s.Type
	if !mt.Known() || mt.DType != ir.F32 || len(mt.Shape) > len(st.Shape) {
		return false
	}
	off := len(st.Shape) - len(mt.Shape)
	for i, d := range mt.Shape {
		if d != st.Shape[off+i] && !(d.IsConst() && d.Size == 1) {
			return false
		}
	}
	return true
}

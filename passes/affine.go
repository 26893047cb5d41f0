package passes

import "github.com/cuvil/cuvil/ir"

// FoldAffine folds multiplications and additions by per-channel (or
// scalar) constants: into the weights and bias of the Conv, ConvTranspose
// or Gemm (MatMul: multiplications only) that produces their input, and
// into each other along chains (Mul of Mul, Add of Add, and an Add
// followed by a Mul swapped so the Mul moves towards a foldable producer).
// What is left of a BatchNormalization after fold-batchnorm, or of a
// model's own scale-shift pairs, ends as at most one Mul and one Add.
var FoldAffine = &Pass{
	Name: "fold-affine",
	Doc:  "fold Mul/Add by per-channel constants into the producing Conv/Gemm/MatMul weights, and into each other",
	Run: func(m *ir.Model) error {
		return forGraphs(m, func(g *ir.Graph) error {
			r := newRewriter(m, g)
			for round := 0; round < 8; round++ {
				changed := false
				for _, n := range g.Nodes {
					at(m, n)
					if !r.dead[n] && foldAffineAt(r, n) {
						changed = true
					}
				}
				r.sweep()
				if !changed {
					break
				}
			}
			return nil
		})
	},
}

// affineOf reports whether n is Mul or Add of a non-constant x by a
// constant varying along at most one axis; it returns x, the axis (-1 for
// a scalar) and the constant's values.
func affineOf(n *ir.Node) (x *ir.Value, axis int, vals []float64, ok bool) {
	if !(isOp(n, "Mul") || isOp(n, "Add")) || len(n.Inputs) != 2 || n.Outputs[0] == nil {
		return nil, 0, nil, false
	}
	out := n.Outputs[0]
	if !out.Type.Known() || (out.Type.DType != ir.F32 && out.Type.DType != ir.F64) {
		return nil, 0, nil, false
	}
	a, c := n.Inputs[0], n.Inputs[1]
	if a.IsConst() {
		a, c = c, a
	}
	if a.IsConst() || !c.IsConst() || !sameShape(a, out) {
		return nil, 0, nil, false // the constant must not broadcast x up
	}
	axis, vals, ok = axisVector(c, out.Type.Rank())
	return a, axis, vals, ok
}

func foldAffineAt(r *rewriter, n *ir.Node) bool {
	x, axis, vals, ok := affineOf(n)
	if !ok || r.only(x) != n {
		return false
	}
	y := n.Outputs[0]
	rank := y.Type.Rank()
	p := x.Def
	if p == nil || r.dead[p] {
		return false
	}
	mul := isOp(n, "Mul")
	// Into the producer's weights.
	chAxis := 1
	if isOp(p, "Gemm") || isOp(p, "MatMul") {
		chAxis = rank - 1
	}
	if axis == -1 || axis == chAxis {
		var s, t []float64
		if mul {
			s = vals
		} else {
			t = vals
		}
		if foldChannelAffine(r, p, s, t, chAxis) {
			p.Outputs[0] = y
			y.Def = p
			r.absorb(p, n)
			return true
		}
	}
	// Into the previous Mul/Add of the chain.
	px, paxis, pvals, ok := affineOf(p)
	if !ok || (axis != paxis && axis != -1 && paxis != -1) {
		return false
	}
	ax := axis
	if ax == -1 {
		ax = paxis
	}
	combine := func(f func(a, b float64) float64) []float64 {
		l := max(len(vals), len(pvals))
		out := make([]float64, l)
		for i := range out {
			out[i] = f(pvals[min(i, len(pvals)-1)], vals[min(i, len(vals)-1)])
		}
		return out
	}
	cshape := func(l int) []int64 {
		if ax < 0 {
			return nil
		}
		return channelShape(l, rank, ax)
	}
	dt := y.Type.DType
	pmul := isOp(p, "Mul")
	switch {
	case mul == pmul:
		// (x op a) op b = x op (a op b)
		f := func(a, b float64) float64 { return a + b }
		if mul {
			f = func(a, b float64) float64 { return a * b }
		}
		v := combine(f)
		p.Inputs = []*ir.Value{px, r.constant(p.Name+"_const", floatTensor(dt, cshape(len(v)), v))}
		p.Outputs[0] = y
		y.Def = p
		r.absorb(p, n)
		return true
	case mul && !pmul:
		// (x + a) * b = (x * b) + a*b: the Mul moves up the chain.
		ab := combine(func(a, b float64) float64 { return a * b })
		bs := n.Inputs[0]
		if !bs.IsConst() {
			bs = n.Inputs[1]
		}
		mid := x          // reuse the value between the two nodes
		r.record(p, p, n) // both now do part of each one's work
		n.Fused = p.Fused
		p.Op, n.Op = "Mul", "Add"
		p.Version, n.Version = n.Version, p.Version
		p.Inputs = []*ir.Value{px, bs}
		n.Inputs = []*ir.Value{mid, r.constant(n.Name+"_const", floatTensor(dt, cshape(len(ab)), ab))}
		return true
	}
	return false
}

package passes

import (
	"slices"

	"github.com/cuvil/cuvil/ir"
)

// FoldTranspose sinks a Transpose below the element-wise op that alone
// reads it (Transpose then Relu becomes Relu then Transpose), so that
// Transposes on both sides of element-wise ops meet; then it composes a
// Transpose of a Transpose into one (also through a Reshape that splits
// or merges dims: composeThroughReshape), and removes a Transpose
// (composed or not) whose permutation is the identity.
var FoldTranspose = &Pass{
	Name: "fold-transpose",
	Doc:  "sink Transposes through element-wise ops, compose Transpose pairs (also through a split/merge Reshape) into one Transpose; drop identity permutations; make unit-dim moves Reshapes",
	Run: func(m *ir.Model) error {
		return forGraphs(m, func(g *ir.Graph) error {
			r := newRewriter(m, g)
			for sinkTransposes(r) {
			}
			composeTransposes(m, r)
			r.sweep()
			return nil
		})
	},
}

// composeTransposes composes each Transpose of a Transpose into one,
// removes a Transpose whose permutation is the identity and makes one that
// only moves dims of 1 a Reshape (fold-transpose's
// last step; layout runs it too, where its exit Transposes meet a model's
// own NHWC permutes). The caller sweeps.
func composeTransposes(m *ir.Model, r *rewriter) {
	for _, n := range r.g.Nodes {
		at(m, n)
		if !isOp(n, "Transpose") || n.Inputs[0] == nil {
			continue
		}
		perm, ok := transposePerm(n)
		if !ok {
			continue
		}
		// Transpose(Transpose(x, p1), p2) = Transpose(x, p1[p2[i]]).
		if p := n.Inputs[0].Def; isOp(p, "Transpose") && !r.dead[p] {
			p1, ok := transposePerm(p)
			if ok && len(p1) == len(perm) {
				comp := make([]int64, len(perm))
				for i, j := range perm {
					comp[i] = p1[j]
				}
				n.Inputs[0] = p.Inputs[0]
				n.SetAttr(&ir.Attr{Name: "perm", Kind: ir.AttrInts, Ints: comp})
				perm = comp
				r.refresh()
				if len(r.uses[p.Outputs[0]]) == 0 && !r.outs[p.Outputs[0]] {
					r.kill(p)
				}
			}
		}
		if p := n.Inputs[0].Def; isOp(p, "Reshape") && !r.dead[p] && composeThroughReshape(m, r, n, p, perm) {
			continue
		}
		identity := true
		for i, j := range perm {
			identity = identity && int64(i) == j
		}
		if identity && r.redirect(n.Outputs[0], n.Inputs[0]) {
			r.kill(n)
			continue
		}
		if !identity {
			unitMovesToReshape(m, r, n, perm)
		}
	}
}

// unitMovesToReshape makes Transpose n a Reshape when it only moves dims
// of size 1 (the others keep their order: [1, S, 256] -> [S, 1, 256]), so
// the memory plan makes it a view instead of a copy. The Reshape's target
// is the output shape with -1 for its one symbolic dim; with more than one
// the Transpose stays.
func unitMovesToReshape(m *ir.Model, r *rewriter, n *ir.Node, perm []int64) {
	version, ok := onnxVersion(m, "Reshape")
	x, y := n.Inputs[0], n.Outputs[0]
	if !ok || version < 5 || !x.Type.Known() || !y.Type.Known() || len(x.Type.Shape) != len(perm) {
		return
	}
	last := int64(-1)
	for _, p := range perm {
		if d := x.Type.Shape[p]; d.IsConst() && d.Size == 1 {
			continue
		}
		if p < last {
			return
		}
		last = p
	}
	target := make([]int64, len(y.Type.Shape))
	sym := 0
	for i, d := range y.Type.Shape {
		switch {
		case !d.IsConst():
			target[i], sym = -1, sym+1
		case d.Size == 0:
			return // a 0 in the target would copy the input's dim
		default:
			target[i] = d.Size
		}
	}
	if sym > 1 {
		return
	}
	c := r.constant(n.Name+"_shape", ir.NewTensorInt64([]int64{int64(len(target))}, target))
	n.Op, n.Version, n.Attrs = "Reshape", version, nil
	n.Inputs = []*ir.Value{x, c}
	r.refresh()
}

// composeThroughReshape rewrites t2 = Transpose(Reshape(Transpose(x, p1)),
// p2), where each intermediate has one reader, as Reshape(Transpose(
// Reshape(x), p)): one data movement instead of two (the Reshapes are
// views). It works on the refinement of the Reshape's two shapes (their
// dims split into common factors: [255, 80, 80] and [3, 85, 80, 80] have
// [3, 85, 80, 80]): p1 and p2 become permutations of those factors, and x
// is reshaped to its own refined shape. A YOLO head's exit to NCHW and its
// permute to [1, 3, 80, 80, 85] become one Transpose with runs of 85; a
// ViT's patch embedding's NCHW exit and its [1, 768, 196] -> [1, 196,
// 768] permute cancel into Reshapes. Shapes must be static; a Reshape that
// is not a split/merge of dims (its shapes have no common refinement)
// stays. It reports whether it rewrote.
func composeThroughReshape(m *ir.Model, r *rewriter, t2, rs *ir.Node, p2 []int64) bool {
	version, ok := onnxVersion(m, "Reshape")
	// A Reshape of a Reshape is one Reshape to the last's (static) shape.
	if bs, okb := rs.Outputs[0].Type.Shape.Consts(); ok && version >= 5 && okb && !slicesContains(bs, 0) {
		for a := rs.Inputs[0]; isOp(a.Def, "Reshape") && !r.dead[a.Def] && r.only(a) == rs && !r.outs[a]; a = rs.Inputs[0] {
			inner := a.Def
			rs.Inputs = []*ir.Value{inner.Inputs[0], r.constant(rs.Name+"_shape", ir.NewTensorInt64([]int64{int64(len(bs))}, bs))}
			r.kill(inner)
			inner.Inputs = nil
			r.refresh()
		}
	}
	a := rs.Inputs[0]
	t1 := a.Def
	if !ok || version < 5 || !isOp(t1, "Transpose") || r.dead[t1] || t1.Inputs[0] == nil ||
		r.only(a) != rs || r.only(rs.Outputs[0]) != t2 || r.outs[a] || r.outs[rs.Outputs[0]] {
		return false
	}
	x, b, y := t1.Inputs[0], rs.Outputs[0], t2.Outputs[0]
	xs, ok1 := x.Type.Shape.Consts()
	s1, ok2 := a.Type.Shape.Consts()
	s2, ok3 := b.Type.Shape.Consts()
	ys, ok4 := y.Type.Shape.Consts()
	p1, ok5 := transposePerm(t1)
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !x.Type.Known() || len(p1) != len(xs) || len(p2) != len(s2) ||
		slicesContains(s1, 0) || slicesContains(s2, 0) {
		return false
	}
	f, g1, g2, ok := refineShapes(s1, s2)
	if !ok {
		return false
	}
	// x's refined dims, in x's order: dim d of x is dim i of a with
	// p1[i] = d, so it splits into a's group i.
	var xorder []int
	for d := range xs {
		for i, q := range p1 {
			if int(q) == d {
				xorder = append(xorder, g1[i]...)
			}
		}
	}
	// y's refined dims, in y's order: dim k of y is dim p2[k] of b.
	var yorder []int
	for _, q := range p2 {
		yorder = append(yorder, g2[q]...)
	}
	if len(xorder) != len(f) || len(yorder) != len(f) {
		return false
	}
	posInX := make([]int, len(f))
	for pos, fi := range xorder {
		posInX[fi] = pos
	}
	perm := make([]int64, len(f))
	xref := make([]int64, len(f))
	identity := true
	for q, fi := range yorder {
		perm[q] = int64(posInX[fi])
		identity = identity && perm[q] == int64(q)
	}
	for pos, fi := range xorder {
		xref[pos] = f[fi]
	}
	shapeConst := func(name string, s []int64) *ir.Value {
		return r.constant(name+"_shape", ir.NewTensorInt64([]int64{int64(len(s))}, s))
	}
	dt, tv := y.Type.DType, t1.Version
	// t2 becomes the final Reshape to y's shape.
	t2.Op, t2.Version, t2.Attrs = "Reshape", version, nil
	if identity {
		// The permutations cancel: x's data is y's.
		t2.Inputs = []*ir.Value{x, shapeConst(t2.Name, ys)}
		r.kill(rs, t1)
		r.refresh()
		return true
	}
	// t1 reshapes x to its refinement, rs permutes the factors.
	a.Type = ir.TensorType(dt, ir.ShapeOf(xref...))
	t1.Op, t1.Version, t1.Attrs = "Reshape", version, nil
	t1.Inputs = []*ir.Value{x, shapeConst(t1.Name, xref)}
	yref := make([]int64, len(f))
	for q, fi := range yorder {
		yref[q] = f[fi]
	}
	b.Type = ir.TensorType(dt, ir.ShapeOf(yref...))
	rs.Op, rs.Version = "Transpose", tv
	rs.Attrs = []*ir.Attr{{Name: "perm", Kind: ir.AttrInts, Ints: perm}}
	rs.Inputs = []*ir.Value{a}
	t2.Inputs = []*ir.Value{b, shapeConst(t2.Name, ys)}
	r.refresh()
	return true
}

// transposePerm returns n's permutation (the reversal when it has none).
func transposePerm(n *ir.Node) ([]int64, bool) {
	if p := n.AttrInts("perm", nil); p != nil {
		return p, true
	}
	rank := n.Inputs[0].Type.Rank()
	if rank < 0 || n.Inputs[0].Type.Unranked {
		return nil, false
	}
	p := make([]int64, rank)
	for i := range p {
		p[i] = int64(rank - 1 - i)
	}
	return p, true
}

// sinkTransposes moves each Transpose t whose output only an element-wise
// op n reads (n's other inputs, if any, one-element values) below n: n
// reads t's input and t permutes n's result, which keeps its value (and
// name). Transposing commutes with element-wise ops, but t moves only
// when the chain of such ops below it ends in another Transpose, which it
// then meets; elsewhere a Transpose stays put, next to what other
// patterns look for (fuse-attention takes a scalar Div after the
// Transpose of K). It reports whether it moved any.
func sinkTransposes(r *rewriter) bool {
	moved := false
	for _, n := range slices.Clone(r.g.Nodes) {
		if r.dead[n] || len(n.Inputs) == 0 || n.Inputs[0] == nil {
			continue
		}
		t := n.Inputs[0].Def
		if !isOp(t, "Transpose") || r.only(t.Outputs[0]) != n || t.Inputs[0] == nil || !t.Inputs[0].Type.Known() || !sinksThrough(n) {
			continue
		}
		meets := false
		for u, i := n, 0; u != nil && i < 64; i++ {
			next := r.only(u.Outputs[0])
			if isOp(next, "Transpose") {
				meets = true
				break
			}
			if next == nil || next.Inputs[0] != u.Outputs[0] || !sinksThrough(next) {
				break
			}
			u = next
		}
		if !meets {
			continue
		}
		x, y := t.Inputs[0], n.Outputs[0]
		mid := &ir.Value{Name: r.fresh(y.Name + "_untransposed"), Type: ir.Type{Kind: ir.TensorKind, DType: y.Type.DType, Shape: slices.Clone(x.Type.Shape)}}
		n.Inputs[0], n.Outputs[0], mid.Def = x, mid, n
		t.Inputs[0], t.Outputs[0], y.Def = mid, y, t
		// t now follows n.
		r.g.Nodes = slices.DeleteFunc(r.g.Nodes, func(z *ir.Node) bool { return z == t })
		insertAfter(r.g, n, t)
		r.refresh()
		moved = true
	}
	return moved
}

// sinksThrough reports whether a Transpose of n's input 0 can move below
// n: n is element-wise with one output of its input 0's shape, and its
// other inputs have one element.
func sinksThrough(n *ir.Node) bool {
	if s := ir.LookupOp(n.Domain, n.Op); s == nil || !s.Elementwise || isOp(n, "Identity") {
		return false
	}
	if len(n.Outputs) != 1 || n.Outputs[0] == nil || n.Inputs[0] == nil {
		return false
	}
	y := n.Outputs[0]
	if !y.Type.Known() || !n.Inputs[0].Type.Known() || !y.Type.Shape.Equal(n.Inputs[0].Type.Shape) {
		return false // n broadcasts its input up
	}
	for _, v := range n.Inputs[1:] {
		if v == nil {
			continue
		}
		if c, ok := v.Type.Shape.NumElements(); !v.Type.Known() || !ok || c != 1 || v.Type.Rank() > y.Type.Rank() {
			return false
		}
	}
	return true
}

// refineShapes splits the dims of a and b (shapes of one element count)
// into their common factors f, in order, and says which factors make up
// each dim of a (ga) and of b (gb); dims of 1 take none. It fails when a
// dim boundary of one falls inside a factor of the other that it does
// not divide ([6, 4] and [4, 6]).
func refineShapes(a, b []int64) (f []int64, ga, gb [][]int, ok bool) {
	ga, gb = make([][]int, len(a)), make([][]int, len(b))
	i, j := 0, 0
	var ra, rb int64 // what is left of a[i] and b[j] (0: move on)
	for {
		for ra == 0 && i < len(a) {
			if a[i] == 1 {
				i++
			} else {
				ra = a[i]
			}
		}
		for rb == 0 && j < len(b) {
			if b[j] == 1 {
				j++
			} else {
				rb = b[j]
			}
		}
		if ra == 0 || rb == 0 {
			return f, ga, gb, ra == 0 && rb == 0
		}
		k := min(ra, rb)
		if ra%k != 0 || rb%k != 0 {
			return nil, nil, nil, false
		}
		ga[i], gb[j] = append(ga[i], len(f)), append(gb[j], len(f))
		f = append(f, k)
		if ra /= k; ra == 1 {
			ra, i = 0, i+1
		}
		if rb /= k; rb == 1 {
			rb, j = 0, j+1
		}
	}
}

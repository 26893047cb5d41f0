package passes

import (
	"slices"

	"github.com/cuvil/cuvil/ir"
)

// FoldTranspose sinks a Transpose below the element-wise op that alone
// reads it (Transpose then Relu becomes Relu then Transpose), so that
// Transposes on both sides of element-wise ops meet; then it composes a
// Transpose of a Transpose into one, and removes a Transpose (composed or
// not) whose permutation is the identity.
var FoldTranspose = &Pass{
	Name: "fold-transpose",
	Doc:  "sink Transposes through element-wise ops, compose Transpose pairs into one Transpose; drop identity permutations",
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

// composeTransposes composes each Transpose of a Transpose into one and
// removes a Transpose whose permutation is the identity (fold-transpose's
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
		identity := true
		for i, j := range perm {
			identity = identity && int64(i) == j
		}
		if identity && r.redirect(n.Outputs[0], n.Inputs[0]) {
			r.kill(n)
		}
	}
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

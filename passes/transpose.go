package passes

import "github.com/cuvil/cuvil/ir"

// FoldTranspose composes a Transpose of a Transpose into one, and removes
// a Transpose (composed or not) whose permutation is the identity.
var FoldTranspose = &Pass{
	Name: "fold-transpose",
	Doc:  "compose Transpose pairs into one Transpose; drop identity permutations",
	Run: func(m *ir.Model) error {
		return forGraphs(m, func(g *ir.Graph) error {
			r := newRewriter(m, g)
			for _, n := range g.Nodes {
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
			r.sweep()
			return nil
		})
	},
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

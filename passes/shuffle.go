package passes

import (
	"slices"

	"github.com/cuvil/cuvil/ir"
)

// FuseChannelShuffle rewrites ShuffleNet's channel shuffle,
// Reshape [N,C,H,W] -> [N,g,C/g,H,W], Transpose perm [0,2,1,3,4], Reshape
// back to [N,C,H,W], into one cuvil::ChannelShuffle {axis=1, groups=g}
// (templates/k_channel_shuffle.go); a Concat along the channels that only
// the first Reshape reads goes in too (the shuffle reads its inputs). One
// copy instead of three or four ops, and one
// node the layout pass can run channels-last (axis 3) inside a chain,
// where the 5-D Transpose would cut it. Only exactly that form: constant
// shapes, a 4-D input, the intermediate values read by the next op alone
// (not graph outputs).
var FuseChannelShuffle = &Pass{
	Name: "fuse-channel-shuffle",
	Doc:  "Reshape [N,g,C/g,H,W] -> Transpose [0,2,1,3,4] -> Reshape [N,C,H,W] becomes cuvil::ChannelShuffle",
	Run: func(m *ir.Model) error {
		return forGraphs(m, func(g *ir.Graph) error {
			r := newRewriter(m, g)
			for _, n := range slices.Clone(g.Nodes) {
				at(m, n)
				r1, t, groups := shuffleTriple(r, n)
				if r1 == nil {
					continue
				}
				useCuvil(m)
				ins, from := []*ir.Value{r1.Inputs[0]}, []*ir.Node{r1, t, n}
				if c := r1.Inputs[0].Def; shuffleConcat(r, c, r1) {
					ins, from = slices.Clone(c.Inputs), append(from, c)
				}
				s := &ir.Node{Name: t.Name, Op: "ChannelShuffle", Domain: ir.CuvilDomain, Version: ir.CuvilOpset,
					Inputs: ins, Outputs: []*ir.Value{n.Outputs[0]}}
				s.SetAttr(&ir.Attr{Name: "axis", Kind: ir.AttrInt, I: 1})
				s.SetAttr(&ir.Attr{Name: "groups", Kind: ir.AttrInt, I: groups})
				n.Outputs[0].Def = s
				r.fuse(s, n, from...)
			}
			r.sweep()
			return nil
		})
	},
}

// shuffleConcat reports whether c is a Concat along the channels (axis 1
// of its 4-D output) that only r1 reads, with no missing input: the
// shuffle then reads its inputs itself (two NHWC halves interleave
// without the concatenation, templates/k_channel_shuffle.go).
func shuffleConcat(r *rewriter, c, r1 *ir.Node) bool {
	if !isOp(c, "Concat") || r.dead[c] || r.only(c.Outputs[0]) != r1 || len(c.Inputs) == 0 {
		return false
	}
	if ax := c.AttrInt("axis", 1); ax != 1 && ax != -3 || c.Outputs[0].Type.Rank() != 4 {
		return false
	}
	for _, v := range c.Inputs {
		if v == nil || !v.Type.Known() || v.Type.DType != c.Outputs[0].Type.DType {
			return false
		}
	}
	return true
}

// shuffleTriple matches n as the last Reshape of a channel shuffle and
// returns the first Reshape, the Transpose and the group count; nil when
// n is not one.
func shuffleTriple(r *rewriter, n *ir.Node) (*ir.Node, *ir.Node, int64) {
	if !isOp(n, "Reshape") || r.dead[n] || len(n.Outputs) != 1 {
		return nil, nil, 0
	}
	t := n.Inputs[0].Def
	if !isOp(t, "Transpose") || r.dead[t] || r.only(t.Outputs[0]) != n || !slices.Equal(t.AttrInts("perm", nil), []int64{0, 2, 1, 3, 4}) {
		return nil, nil, 0
	}
	r1 := t.Inputs[0].Def
	if !isOp(r1, "Reshape") || r.dead[r1] || r.only(r1.Outputs[0]) != t || r1.Inputs[0] == nil {
		return nil, nil, 0
	}
	x, mid, y := r1.Inputs[0], r1.Outputs[0], n.Outputs[0]
	if !x.Type.Known() || !mid.Type.Known() || !y.Type.Known() || x.Type.Rank() != 4 || mid.Type.Rank() != 5 {
		return nil, nil, 0
	}
	if !slices.Contains(ir.LookupOp(ir.CuvilDomain, "ChannelShuffle").Types["T"], x.Type.DType) {
		return nil, nil, 0
	}
	xs, ok1 := x.Type.Shape.Consts()
	ms, ok2 := mid.Type.Shape.Consts()
	ys, ok3 := y.Type.Shape.Consts()
	if !ok1 || !ok2 || !ok3 || !slices.Equal(xs, ys) {
		return nil, nil, 0
	}
	// The shapes the Reshapes were given must be constants (the types
	// say what they make; a computed shape could differ at run time).
	for _, rs := range []*ir.Node{r1, n} {
		if len(rs.Inputs) < 2 || rs.Inputs[1] == nil || !rs.Inputs[1].IsConst() {
			return nil, nil, 0
		}
	}
	g := ms[1]
	if g < 1 || ms[0] != xs[0] || g*ms[2] != xs[1] || ms[3] != xs[2] || ms[4] != xs[3] {
		return nil, nil, 0
	}
	return r1, t, g
}

package passes

import (
	"slices"

	"github.com/cuvil/cuvil/ir"
)

// ConcatInto removes a Concat along the channels of NHWC data (axis 3,
// after the layout pass) whose inputs are all written by NHWC
// convolutions that could write straight into the Concat's output: each
// FusedConv gets out_channels (the Concat's channels) and out_offset (its
// input's first channel there), so its kernel writes its M channels with
// a row stride of out_channels (templates nhwcOutput). The values stay
// SSA by destination passing: in graph order the first producer defines
// the full-width value (the other channels undefined), each next one
// reads the previous one as its Into input (FusedConv input 4) and
// defines it again with its own channels written, and the last one
// defines the Concat's output. The memory plan puts each producer's
// output over its Into (they die there), so the channels land in one
// buffer and nothing is copied; where it cannot, the kernel copies Into
// first.
//
// A producer qualifies when it is a float32 FusedConv with layout NHWC,
// group 1 (depthwise convolutions write with a fixed stride), no residual
// Z (its kernel reads Z with Y's strides) and no out_channels yet, and
// the Concat is the only reader of its output, which is not a graph
// output. Squeezenet's fire modules (expand1x1 and expand3x3) and the
// light_inception_v2 blocks whose branches all end in convolutions
// qualify; light_densenet121's Concats do not (each input is read again
// by later layers), nor a Concat with a pooling branch.
var ConcatInto = &Pass{
	Name: "concat-into",
	Doc:  "let NHWC convolutions write their channel slice of a Concat's output; drop the Concat",
	Run: func(m *ir.Model) error {
		return forGraphs(m, func(g *ir.Graph) error {
			r := newRewriter(m, g)
			pos := map[*ir.Node]int{}
			for i, n := range g.Nodes {
				pos[n] = i
			}
			for _, c := range g.Nodes {
				ps := concatIntoProducers(r, c, pos)
				if ps == nil {
					continue
				}
				at(m, c)
				y := c.Outputs[0]
				offs := map[*ir.Node]int64{}
				var off int64
				for _, v := range c.Inputs {
					offs[v.Def] = off
					off += v.Type.Shape[3].Size
				}
				// Graph order: each producer reads the one before it.
				slices.SortFunc(ps, func(a, b *ir.Node) int { return pos[a] - pos[b] })
				for i, p := range ps {
					p.SetAttr(&ir.Attr{Name: "out_channels", Kind: ir.AttrInt, I: off})
					p.SetAttr(&ir.Attr{Name: "out_offset", Kind: ir.AttrInt, I: offs[p]})
					p.Outputs[0].Type = y.Type
					if i > 0 {
						for len(p.Inputs) < 4 {
							p.Inputs = append(p.Inputs, nil)
						}
						p.Inputs = append(p.Inputs, ps[i-1].Outputs[0])
					}
				}
				last := ps[len(ps)-1]
				last.Outputs[0] = y
				y.Def = last
				r.absorb(last, c)
				r.kill(c)
			}
			r.sweep()
			return nil
		})
	},
}

// concatIntoProducers returns the nodes defining c's inputs when c is a
// Concat that ConcatInto can remove (see there), else nil. pos holds the
// nodes of c's graph (a value captured from an enclosing graph may have
// readers there).
func concatIntoProducers(r *rewriter, c *ir.Node, pos map[*ir.Node]int) []*ir.Node {
	if !isOp(c, "Concat") || len(c.Inputs) < 2 || len(c.Outputs) != 1 || !is4DF32(c.Outputs[0]) {
		return nil
	}
	if ax := c.AttrInt("axis", 0); ax != 3 && ax != -1 {
		return nil
	}
	if _, ok := c.Outputs[0].Type.Shape.Consts(); !ok {
		return nil
	}
	var ps []*ir.Node
	for _, v := range c.Inputs {
		if v == nil {
			return nil
		}
		p := v.Def
		if _, here := pos[p]; !here || slices.Contains(ps, p) || r.only(v) != c || !is4DF32(v) || !v.Type.Shape[3].IsConst() {
			return nil
		}
		if p.Op != "FusedConv" || p.Domain != ir.CuvilDomain || len(p.Outputs) != 1 ||
			p.AttrString("layout", "NCHW") != "NHWC" || p.AttrInt("group", 1) != 1 ||
			p.Input(3) != nil || p.Input(4) != nil || p.Attr("out_channels") != nil {
			return nil
		}
		ps = append(ps, p)
	}
	return ps
}

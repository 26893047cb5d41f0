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
// qualify, not a Concat with a pooling branch. A second rule
// (concatIntoDense) takes two-input Concats whose first input is
// anything: light_densenet121's dense blocks.
var ConcatInto = &Pass{
	Name: "concat-into",
	Doc:  "let NHWC convolutions write their channel slice of a Concat's output; drop the Concat",
	Run: func(m *ir.Model) error {
		return forGraphs(m, func(g *ir.Graph) error {
			concatFactorPrefixes(m, g)
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
			concatIntoDense(m, r, g)
			return nil
		})
	},
}

// concatFactorPrefixes rewrites a Concat B whose inputs begin with all
// the inputs of an earlier Concat A on the same axis to read A's output
// in their place (the longest such A): B = Concat(x0, f1, ..., fk) after
// A = Concat(x0, f1, ..., f(k-1)) becomes Concat(A, fk). Torchvision's
// DenseNet concatenates every earlier feature map afresh in each layer
// (a dense block copies O(layers^2) channels); factored, its blocks are
// the chains concatIntoDense makes copy-free. B copies the same bytes
// either way; A's output lives until B.
func concatFactorPrefixes(m *ir.Model, g *ir.Graph) {
	type concat struct {
		n   *ir.Node
		ins []*ir.Value // as written, before factoring
	}
	var earlier []concat
	for _, b := range g.Nodes {
		if !isOp(b, "Concat") || len(b.Outputs) != 1 || slices.Contains(b.Inputs, nil) {
			continue
		}
		var best concat
		for _, a := range earlier {
			k := len(a.ins)
			if k < len(b.Inputs) && k > len(best.ins) && a.n.AttrInt("axis", 0) == b.AttrInt("axis", 0) &&
				slices.Equal(a.ins, b.Inputs[:k]) {
				best = a
			}
		}
		earlier = append(earlier, concat{b, slices.Clone(b.Inputs)})
		if best.n == nil {
			continue
		}
		at(m, b)
		b.Inputs = append([]*ir.Value{best.n.Outputs[0]}, b.Inputs[len(best.ins):]...)
	}
}

// concatIntoDense handles the Concats the rule above leaves whose second
// of two inputs is a qualifying convolution's output f and whose first x
// is anything: a DenseNet layer's x_k = Concat(x_{k-1}, f_k), where
// x_{k-1} is also read by the layer's pre-activation ScaleShift. f's
// convolution writes its channels into the Concat's output with x as
// Into (fewer channels: the kernel copies them into Y's first ones, the
// copy the Concat made, f's channels are not copied). Links chain: when
// x_k's other readers are NHWC ScaleShifts and one reader is the next
// such Concat (as its x), every x_k of the chain takes the last one's
// width (a dense block's output) and the ScaleShifts read their first
// channels (attribute channels), so each convolution writes over the one
// before it in place (memory plan) and a dense block copies only its
// input once.
func concatIntoDense(m *ir.Model, r *rewriter, g *ir.Graph) {
	pos := map[*ir.Node]int{}
	for i, n := range g.Nodes {
		pos[n] = i
	}
	done := map[*ir.Node]bool{}
	for _, c := range g.Nodes {
		if done[c] || concatIntoDenseProducer(r, c, pos) == nil {
			continue
		}
		at(m, c)
		chain := []*ir.Node{c}
		for {
			next := concatIntoDenseNext(r, chain[len(chain)-1], pos)
			if next == nil {
				break
			}
			chain = append(chain, next)
		}
		wide := chain[len(chain)-1].Outputs[0].Type
		var offs, widths []int64
		for _, l := range chain {
			offs = append(offs, l.Inputs[0].Type.Shape[3].Size)
			widths = append(widths, l.Outputs[0].Type.Shape[3].Size)
		}
		for k, l := range chain {
			done[l] = true
			p, y := l.Inputs[1].Def, l.Outputs[0]
			p.SetAttr(&ir.Attr{Name: "out_channels", Kind: ir.AttrInt, I: wide.Shape[3].Size})
			p.SetAttr(&ir.Attr{Name: "out_offset", Kind: ir.AttrInt, I: offs[k]})
			for len(p.Inputs) < 4 {
				p.Inputs = append(p.Inputs, nil)
			}
			p.Inputs = append(p.Inputs, l.Inputs[0])
			p.Outputs[0] = y
			y.Def = p
			if k < len(chain)-1 {
				y.Type = wide
				for _, u := range r.uses[y] {
					if u != chain[k+1] {
						u.SetAttr(&ir.Attr{Name: "channels", Kind: ir.AttrInt, I: widths[k]})
					}
				}
			}
			r.absorb(p, l)
			r.kill(l)
		}
	}
	r.sweep()
}

// concatIntoDenseProducer returns the convolution defining c's second
// input when concatIntoDense can take c, else nil.
func concatIntoDenseProducer(r *rewriter, c *ir.Node, pos map[*ir.Node]int) *ir.Node {
	if !concatIntoChannels(c) || len(c.Inputs) != 2 {
		return nil
	}
	x, f := c.Inputs[0], c.Inputs[1]
	if x == nil || f == nil || x == f || !is4DF32(x) || !x.Type.Shape[3].IsConst() {
		return nil
	}
	p := concatIntoConv(r, c, f, pos)
	// p will read x: x must be defined before it.
	if p == nil || x.Def != nil && pos[x.Def] >= pos[p] {
		return nil
	}
	return p
}

// concatIntoDenseNext returns the Concat that continues a dense chain after
// link c: the only non-ScaleShift reader of c's output y, taking y as its
// first input; every other reader an NHWC ScaleShift reading y as X only
// (it can read the first channels of wider rows).
func concatIntoDenseNext(r *rewriter, c *ir.Node, pos map[*ir.Node]int) *ir.Node {
	y := c.Outputs[0]
	if r.outs[y] {
		return nil
	}
	var next *ir.Node
	for _, u := range r.uses[y] {
		switch {
		case u.Op == "ScaleShift" && u.Domain == ir.CuvilDomain && u.AttrString("layout", "NCHW") == "NHWC" &&
			u.Attr("channels") == nil && u.Inputs[0] == y && u.Inputs[1] != y && u.Inputs[2] != y:
		case next == nil && isOp(u, "Concat") && len(u.Inputs) == 2 && u.Inputs[0] == y && u.Inputs[1] != y &&
			concatIntoDenseProducer(r, u, pos) != nil:
			next = u
		default:
			return nil
		}
	}
	return next
}

// concatIntoProducers returns the nodes defining c's inputs when c is a
// Concat that ConcatInto can remove (see there), else nil. pos holds the
// nodes of c's graph (a value captured from an enclosing graph may have
// readers there).
func concatIntoProducers(r *rewriter, c *ir.Node, pos map[*ir.Node]int) []*ir.Node {
	if !concatIntoChannels(c) || len(c.Inputs) < 2 {
		return nil
	}
	var ps []*ir.Node
	for _, v := range c.Inputs {
		p := concatIntoConv(r, c, v, pos)
		if p == nil || slices.Contains(ps, p) {
			return nil
		}
		ps = append(ps, p)
	}
	return ps
}

// concatIntoChannels reports whether c is a Concat of static float32 NHWC
// data along the channels.
func concatIntoChannels(c *ir.Node) bool {
	if !isOp(c, "Concat") || len(c.Outputs) != 1 || !is4DF32(c.Outputs[0]) {
		return false
	}
	if ax := c.AttrInt("axis", 0); ax != 3 && ax != -1 {
		return false
	}
	_, ok := c.Outputs[0].Type.Shape.Consts()
	return ok
}

// concatIntoConv returns the node defining v, input of Concat c, when it
// is a convolution that can write into c's output: a FusedConv of c's
// graph (pos) with layout NHWC, group 1, no residual Z, no out_channels
// yet, c the only reader of v.
func concatIntoConv(r *rewriter, c *ir.Node, v *ir.Value, pos map[*ir.Node]int) *ir.Node {
	if v == nil || r.only(v) != c || !is4DF32(v) || !v.Type.Shape[3].IsConst() {
		return nil
	}
	p := v.Def
	if _, here := pos[p]; !here || p.Op != "FusedConv" || p.Domain != ir.CuvilDomain || len(p.Outputs) != 1 ||
		p.AttrString("layout", "NCHW") != "NHWC" || p.AttrInt("group", 1) != 1 ||
		p.Input(3) != nil || p.Input(4) != nil || p.Attr("out_channels") != nil {
		return nil
	}
	return p
}

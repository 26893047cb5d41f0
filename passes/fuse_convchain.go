package passes

import "github.com/cuvil/cuvil/ir"

// FuseConvChain fuses the NHWC inverted bottlenecks the layout pass left
// (mobilenet_v2's blocks): a depthwise cuvil::FusedConv {layout=NHWC}
// with the pointwise (1x1, stride 1, no padding, group 1) FusedConv that
// defines its input (the expand) and the one that reads its output (the
// project), each taken only when the value between them has no other
// reader, becomes one cuvil::FusedConvChain when it has at least two of
// the three. Its kernel (templates/k_conv_chain.go) streams over output row
// bands, so the expanded tensors (6x the channels) never go to memory and
// the memory planner never allocates them. A stage before another one
// must have no residual (its activation runs in the stage's kernel when it
// is a clamp, else as a row pass over the band); the last stage keeps its
// whole epilogue (activation, residual Z). Only the
// main graph is considered (the layout pass leaves subgraphs NCHW).
var FuseConvChain = &Pass{
	Name: "fuse-conv-chain",
	Doc:  "fuse NHWC expand 1x1 -> depthwise -> project 1x1 FusedConvs into cuvil::FusedConvChain, whose expanded tensors stay in cache",
	Run:  fuseConvChain,
}

func fuseConvChain(m *ir.Model) error {
	r := newRewriter(m, m.Graph)
	for _, d := range m.Graph.Nodes {
		at(m, d)
		if r.dead[d] || !chainDepthwise(d) {
			continue
		}
		var e, p *ir.Node
		if x := d.Inputs[0]; x.Def != nil && !r.dead[x.Def] && r.only(x) == d && chainPointwise(x.Def) && chainClamp(x.Def) {
			e = x.Def
		}
		if u := r.only(d.Outputs[0]); u != nil && chainPointwise(u) && u.Inputs[0] == d.Outputs[0] && chainClamp(d) {
			p = u
		}
		if e == nil && p == nil {
			continue
		}
		last := d
		if p != nil {
			last = p
		}
		fn := &ir.Node{Name: d.Name, Op: "FusedConvChain", Domain: ir.CuvilDomain, Version: ir.CuvilOpset,
			Inputs: make([]*ir.Value, 8), Outputs: []*ir.Value{last.Outputs[0]}}
		fn.Inputs[0] = d.Inputs[0]
		fn.Inputs[3], fn.Inputs[4] = d.Inputs[1], d.Input(2)
		from := []*ir.Node{d}
		if e != nil {
			fn.Inputs[0], fn.Inputs[1], fn.Inputs[2] = e.Inputs[0], e.Inputs[1], e.Input(2)
			chainAct(fn, e, "expand_activation")
			from = []*ir.Node{e, d}
		}
		if p != nil {
			fn.Inputs[5], fn.Inputs[6] = p.Inputs[1], p.Input(2)
			chainAct(fn, d, "dw_activation")
			from = append(from, p)
		}
		fn.Inputs[7] = last.Input(3)
		for len(fn.Inputs) > 0 && fn.Inputs[len(fn.Inputs)-1] == nil {
			fn.Inputs = fn.Inputs[:len(fn.Inputs)-1]
		}
		for _, name := range []string{"auto_pad", "dilations", "kernel_shape", "pads", "strides"} {
			if a := d.Attr(name); a != nil {
				fn.SetAttr(a)
			}
		}
		chainAct(fn, last, "activation")
		if a := last.Attr("residual_after_activation"); a != nil {
			fn.SetAttr(a)
		}
		fn.Outputs[0].Def = fn
		r.fuse(fn, last, from...)
	}
	r.sweep()
	return nil
}

// chainAct sets n's attribute name (and name_params) to from's activation.
func chainAct(n, from *ir.Node, name string) {
	if a := from.Attr("activation"); a != nil && a.S != "" {
		n.SetAttr(&ir.Attr{Name: name, Kind: ir.AttrString, S: a.S})
	}
	if a := from.Attr("activation_params"); a != nil {
		n.SetAttr(&ir.Attr{Name: name + "_params", Kind: ir.AttrFloats, Floats: a.Floats})
	}
}

// chainClamp reports whether n, a FusedConv, may feed another stage: no
// residual (any activation: a clamp runs inside the stage's kernel, the
// others as a row pass over the stage's band while it is in cache).
func chainClamp(n *ir.Node) bool {
	return n.Input(3) == nil
}

// chainConv returns n's data input and weight types when n is a float32
// FusedConv with layout NHWC reading NHWC, of known rank-4 shapes.
func chainConv(n *ir.Node) (x, w ir.Type, ok bool) {
	if n.Op != "FusedConv" || n.Domain != ir.CuvilDomain || len(n.Outputs) != 1 || len(n.Inputs) < 2 || n.Inputs[0] == nil || n.Inputs[1] == nil ||
		n.AttrString("layout", "NCHW") != "NHWC" || n.AttrString("in_layout", "NHWC") != "NHWC" {
		return x, w, false
	}
	x, w = n.Inputs[0].Type, n.Inputs[1].Type
	ok = x.Known() && x.DType == ir.F32 && x.Rank() == 4 && w.Known() && w.Rank() == 4 && n.Outputs[0].Type.Known()
	if ok {
		_, ok = w.Shape.Consts()
	}
	return x, w, ok && x.Shape[3].IsConst()
}

// chainDepthwise reports whether n is an NHWC depthwise FusedConv.
func chainDepthwise(n *ir.Node) bool {
	x, w, ok := chainConv(n)
	if !ok {
		return false
	}
	c := x.Shape[3].Size
	return n.AttrInt("group", 1) == c && c > 1 && w.Shape[0].Size == c && w.Shape[1].Size == 1
}

// chainPointwise reports whether n is an NHWC 1x1 FusedConv of group 1
// with stride 1 and no padding.
func chainPointwise(n *ir.Node) bool {
	x, w, ok := chainConv(n)
	if !ok || n.AttrInt("group", 1) != 1 || w.Shape[1] != x.Shape[3] || w.Shape[2].Size != 1 || w.Shape[3].Size != 1 {
		return false
	}
	for _, s := range n.AttrInts("strides", nil) {
		ok = ok && s == 1
	}
	for _, p := range n.AttrInts("pads", nil) {
		ok = ok && p == 0
	}
	return ok
}

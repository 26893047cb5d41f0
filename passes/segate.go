package passes

import "github.com/cuvil/cuvil/ir"

// FuseSEGate folds a squeeze-excitation gate into the convolution that
// reads it: Mul(x, g) with x [N,H,W,C] and g [N,1,1,C] (the gate the SE
// block's pool, 1x1 convs and Sigmoid/HardSigmoid computed), whose only
// reader is a pointwise group-1 NHWC cuvil::FusedConv reading it as X,
// becomes that conv's input Scale (input 5): the conv reads x and scales
// it per image and input channel itself (the packed weights' rows when the
// map is the bigger operand, else a copy of the map;
// templates/k_conv_nhwc.go), so the gated map x*g is never written and
// read back. The pool reads x as before.
var FuseSEGate = &Pass{
	Name: "fuse-se-gate",
	Doc:  "fold a squeeze-excitation gate Mul(x [N,H,W,C], g [N,1,1,C]) into the pointwise NHWC FusedConv reading it (input Scale)",
	Run: func(m *ir.Model) error {
		g := m.Graph
		r := newRewriter(m, g)
		for _, n := range g.Nodes {
			at(m, n)
			if !isOp(n, "Mul") || len(n.Inputs) != 2 || len(n.Outputs) != 1 || n.Attr("broadcast") != nil || r.dead[n] {
				continue
			}
			y := n.Outputs[0]
			u := r.only(y)
			if u == nil || !seGateConv(u, y) {
				continue
			}
			x, gate := n.Inputs[0], n.Inputs[1]
			if !seGateScale(gate, y) {
				x, gate = gate, x
			}
			if !seGateScale(gate, y) || !is4DF32(x) || !x.Type.Shape.Equal(y.Type.Shape) {
				continue
			}
			ins := append([]*ir.Value(nil), u.Inputs...)
			for len(ins) < 5 {
				ins = append(ins, nil)
			}
			ins[0] = x
			u.Inputs = append(ins, gate)
			r.absorb(u, n)
		}
		r.sweep()
		return nil
	},
}

// seGateConv reports whether u is a float32 FusedConv with layout NHWC
// (reading NHWC), group 1, a 1x1 kernel, stride 1 and no padding and no
// Scale yet, that reads y as its X and nowhere else.
func seGateConv(u *ir.Node, y *ir.Value) bool {
	if u.Op != "FusedConv" || u.Domain != ir.CuvilDomain || len(u.Inputs) < 2 || len(u.Inputs) > 5 || u.Inputs[0] != y ||
		u.AttrString("layout", "NCHW") != "NHWC" || u.AttrString("in_layout", "NHWC") != "NHWC" || u.AttrInt("group", 1) != 1 {
		return false
	}
	for _, v := range u.Inputs[1:] {
		if v == y {
			return false
		}
	}
	for _, a := range u.Attrs {
		if a.Name == "auto_pad" && a.S != "NOTSET" && a.S != "VALID" {
			return false
		}
	}
	w := u.Inputs[1]
	if !is4DF32(w) || !is4DF32(y) {
		return false
	}
	ws, _ := w.Type.Shape.Consts()
	if ws[2] != 1 || ws[3] != 1 || ws[1] != y.Type.Shape[3].Size {
		return false
	}
	for _, s := range u.AttrInts("strides", nil) {
		if s != 1 {
			return false
		}
	}
	for _, p := range u.AttrInts("pads", nil) {
		if p != 0 {
			return false
		}
	}
	return true
}

// seGateScale reports whether g is a float32 [N,1,1,C] value for the map
// y [N,H,W,C] of more than one pixel (on a pooled [N,1,1,C] value, such as
// the SiLU between the SE block's own convs, nothing is saved).
func seGateScale(g, y *ir.Value) bool {
	if !is4DF32(g) {
		return false
	}
	gs, _ := g.Type.Shape.Consts()
	ys, _ := y.Type.Shape.Consts()
	return gs[0] == ys[0] && gs[1] == 1 && gs[2] == 1 && gs[3] == ys[3] && ys[1]*ys[2] > 1
}

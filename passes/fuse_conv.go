package passes

import "github.com/cuvil/cuvil/ir"

// FuseConv turns Conv followed by its activation and residual Add into one
// cuvil::FusedConv, whose kernel applies them in the GEMM epilogue: Conv
// [-> Add(residual)] [-> activation] [-> Add(residual)], each step taken
// only when the previous value has no other reader. The residual is the
// Add's other input and must have the Conv output's shape; it is added
// before or after the activation as the graph says (ResNet adds, then
// Relus).
var FuseConv = &Pass{
	Name: "fuse-conv",
	Doc:  "fuse Conv with its residual Add and activation into cuvil::FusedConv",
	Run: func(m *ir.Model) error {
		return fuseEpilogues(m, func(n *ir.Node) bool { return isOp(n, "Conv") }, "FusedConv")
	},
}

// FuseGemm does for Gemm and MatMul what FuseConv does for Conv, making
// cuvil::FusedGemm and cuvil::FusedMatMul. A MatMul fuses only with a
// constant 2-D B (a weight matrix), and also takes the Add of a bias
// constant along its last axis.
var FuseGemm = &Pass{
	Name: "fuse-gemm",
	Doc:  "fuse Gemm/MatMul with bias Add, residual Add and activation into cuvil::FusedGemm/FusedMatMul",
	Run: func(m *ir.Model) error {
		err := fuseEpilogues(m, func(n *ir.Node) bool {
			return isOp(n, "Gemm") && n.Outputs[0] != nil && n.Outputs[0].Type.Known() &&
				(n.Outputs[0].Type.DType == ir.F32 || n.Outputs[0].Type.DType == ir.F64)
		}, "FusedGemm")
		if err != nil {
			return err
		}
		return fuseEpilogues(m, func(n *ir.Node) bool {
			if !isOp(n, "MatMul") || len(n.Inputs) != 2 || n.Outputs[0] == nil {
				return false
			}
			a, b := n.Inputs[0], n.Inputs[1]
			return b.IsConst() && len(b.Const.Shape) == 2 && a.Type.Known() && a.Type.Rank() >= 1 &&
				(b.Const.DType == ir.F32 || b.Const.DType == ir.F64)
		}, "FusedMatMul")
	},
}

// fuseEpilogues rewrites every base node match accepts, with what follows
// it, into the cuvil op fused.
func fuseEpilogues(m *ir.Model, match func(*ir.Node) bool, fused string) error {
	return forGraphs(m, func(g *ir.Graph) error {
		r := newRewriter(m, g)
		for _, n := range g.Nodes {
			at(m, n)
			if r.dead[n] || !match(n) || len(n.Outputs) != 1 || n.Outputs[0] == nil {
				continue
			}
			fuseEpilogue(r, n, fused)
		}
		r.sweep()
		return nil
	})
}

func fuseEpilogue(r *rewriter, base *ir.Node, fused string) {
	cur := base.Outputs[0]
	if !cur.Type.Known() {
		return
	}
	var (
		eaten    []*ir.Node
		bias     *ir.Value
		residual *ir.Value
		after    bool
		act      []*ir.Attr
	)
	// MatMul: a bias along the last axis.
	if fused == "FusedMatMul" {
		if u := r.only(cur); isOp(u, "Add") {
			c := otherInput(u, cur)
			n := base.Inputs[1].Const.Shape[1]
			if c != nil && c.IsConst() && c.Const.DType == cur.Type.DType && c.Const.NumElements() == n && sameShape(u.Outputs[0], cur) {
				if axis, _, ok := axisVector(c, cur.Type.Rank()); ok && (axis == cur.Type.Rank()-1 || n == 1) {
					if len(c.Const.Shape) != 1 {
						c = r.constant(c.Name+"_vec", &ir.Tensor{DType: c.Const.DType, Shape: []int64{n}, Raw: c.Const.Raw})
					}
					bias = c
					eaten = append(eaten, u)
					cur = u.Outputs[0]
				}
			}
		}
	}
	residualAt := func() bool {
		u := r.only(cur)
		if !isOp(u, "Add") {
			return false
		}
		z := otherInput(u, cur)
		if z == nil || z == cur || z.IsConst() || !sameShape(z, cur) || !sameShape(u.Outputs[0], cur) {
			return false
		}
		residual = z
		eaten = append(eaten, u)
		cur = u.Outputs[0]
		return true
	}
	residualAt()
	if u := r.only(cur); u != nil {
		if a, ok := activationAttrs(u); ok && sameShape(u.Outputs[0], cur) {
			act = a
			eaten = append(eaten, u)
			cur = u.Outputs[0]
			if residual == nil && residualAt() {
				after = true
			}
		}
	}
	if len(eaten) == 0 {
		return
	}
	inputs := append([]*ir.Value(nil), base.Inputs...)
	switch fused {
	case "FusedMatMul":
		inputs = append(inputs, bias)
	default:
		for len(inputs) < 3 {
			inputs = append(inputs, nil)
		}
	}
	if residual != nil {
		inputs = append(inputs, residual)
	}
	for len(inputs) > 0 && inputs[len(inputs)-1] == nil {
		inputs = inputs[:len(inputs)-1]
	}
	var attrs []*ir.Attr
	for _, a := range base.Attrs {
		if fused == "FusedGemm" && a.Name == "broadcast" {
			continue
		}
		attrs = append(attrs, a)
	}
	fn := &ir.Node{Name: base.Name, Op: fused, Domain: ir.CuvilDomain, Version: ir.CuvilOpset, Inputs: inputs, Outputs: []*ir.Value{cur}, Attrs: nil}
	for _, a := range append(attrs, act...) {
		fn.SetAttr(a)
	}
	if after {
		fn.SetAttr(&ir.Attr{Name: "residual_after_activation", Kind: ir.AttrInt, I: 1})
	}
	cur.Def = fn
	useCuvil(r.m)
	last := eaten[len(eaten)-1]
	r.fuse(fn, last, append([]*ir.Node{base}, eaten...)...)
}

// activationAttrs returns the fused-op attributes for activation node n.
func activationAttrs(n *ir.Node) ([]*ir.Attr, bool) {
	name := func(s string) *ir.Attr { return &ir.Attr{Name: "activation", Kind: ir.AttrString, S: s} }
	params := func(f ...float32) *ir.Attr {
		return &ir.Attr{Name: "activation_params", Kind: ir.AttrFloats, Floats: f}
	}
	switch {
	case n.Domain == ir.CuvilDomain && n.Op == "Gelu":
		if n.AttrString("approximate", "none") == "tanh" {
			return []*ir.Attr{name("GeluTanh")}, true
		}
		return []*ir.Attr{name("Gelu")}, true
	case isOp(n, "Relu"), isOp(n, "Sigmoid"), isOp(n, "Tanh"), isOp(n, "HardSwish"):
		return []*ir.Attr{name(n.Op)}, true
	case n.Domain == ir.CuvilDomain && (n.Op == "HardSwish" || n.Op == "Mish"):
		return []*ir.Attr{name(n.Op)}, true
	case n.Domain == ir.CuvilDomain && n.Op == "Swish", isOp(n, "Swish"):
		return []*ir.Attr{name("Swish"), params(n.AttrFloat("alpha", 1))}, true
	case isOp(n, "Mish"):
		return []*ir.Attr{name("Mish")}, true
	case isOp(n, "LeakyRelu"):
		return []*ir.Attr{name("LeakyRelu"), params(n.AttrFloat("alpha", 0.01))}, true
	case isOp(n, "PRelu"):
		// A one-element constant slope is a LeakyRelu (a per-channel one
		// is not taken: the epilogues know no channel vector).
		if v := n.Input(1); v != nil && v.IsConst() && v.Const.NumElements() == 1 {
			if f, ok := scalarConst(v); ok {
				return []*ir.Attr{name("LeakyRelu"), params(float32(f))}, true
			}
		}
		return nil, false
	case isOp(n, "HardSigmoid"):
		return []*ir.Attr{name("HardSigmoid"), params(n.AttrFloat("alpha", 0.2), n.AttrFloat("beta", 0.5))}, true
	case isOp(n, "Elu"), isOp(n, "Celu"):
		return []*ir.Attr{name(n.Op), params(n.AttrFloat("alpha", 1))}, true
	case isOp(n, "Selu"):
		return []*ir.Attr{name("Selu"), params(n.AttrFloat("alpha", 1.67326319217681884765625), n.AttrFloat("gamma", 1.05070102214813232421875))}, true
	case isOp(n, "Clip"):
		lo, hi := float32(-3.4028234663852886e38), float32(3.4028234663852886e38)
		if n.Version < 11 {
			lo, hi = n.AttrFloat("min", lo), n.AttrFloat("max", hi)
		} else {
			for i, p := range []*float32{&lo, &hi} {
				v := n.Input(1 + i)
				if v == nil {
					continue
				}
				f, ok := scalarConst(v)
				if !ok {
					return nil, false
				}
				*p = float32(f)
			}
		}
		return []*ir.Attr{name("Clip"), params(lo, hi)}, true
	}
	return nil, false
}

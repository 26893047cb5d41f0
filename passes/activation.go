package passes

import "github.com/cuvil/cuvil/ir"

// FuseActivation replaces activations that exporters write out in
// element-wise ops by one node each, so that fuse-conv and fuse-gemm can
// take them into an epilogue and every kernel sees one spelling:
//
//	x * Sigmoid(x)                 -> Swish (SiLU; opset >= 24) or cuvil::Swish
//	x * Tanh(Softplus(x))          -> Mish (opset >= 18) or cuvil::Mish
//	clamp(x + 3, 0, 6) / 6         -> HardSigmoid(alpha=1/6, beta=0.5)
//	x * clamp(x + 3, 0, 6) / 6     -> HardSwish (opset >= 14) or cuvil::HardSwish
//	x * HardSigmoid(x) (1/6, 0.5)  -> HardSwish (likewise)
//
// Operands of Mul and Add in either order; the "+ 3" may be a scalar
// constant on either side; "/ 6" is Div by 6 or Mul by 1/6 (the float64
// value or its float32 rounding); the clamp is a Clip with constant
// bounds, a Relu, or Max/Min with scalar constants, up to two of them,
// whose bounds compose to exactly [0, 6]; HardSwish's product may come
// before the division. Every constant must be exact, every intermediate
// value must have no other reader (nor be a graph output), and the
// result must have x's shape (no broadcasting operand); anything else
// stays as it is.
var FuseActivation = &Pass{
	Name: "fuse-activation",
	Doc:  "replace decomposed SiLU, HardSwish, HardSigmoid and Mish by one node each",
	Run: func(m *ir.Model) error {
		return forGraphs(m, func(g *ir.Graph) error {
			r := newRewriter(m, g)
			for _, n := range g.Nodes {
				at(m, n)
				if r.dead[n] || len(n.Outputs) != 1 || n.Outputs[0] == nil {
					continue
				}
				switch {
				case isOp(n, "Sigmoid"):
					actSwishAt(r, n)
				case isOp(n, "Softplus"):
					actMishAt(r, n)
				case isOp(n, "Add"):
					actHardAt(r, n)
				case isOp(n, "HardSigmoid"):
					actHardSigmoidMulAt(r, n)
				}
			}
			r.sweep()
			return nil
		})
	},
}

// actFloat reports whether v is a float32 or float64 value of known
// shape, the types the activations are rewritten for.
func actFloat(v *ir.Value) bool {
	return v != nil && !v.IsConst() && v.Type.Known() && (v.Type.DType == ir.F32 || v.Type.DType == ir.F64)
}

// actMulBy returns the Mul reading v whose other operand is x, when v
// has that one reader.
func actMulBy(r *rewriter, v, x *ir.Value) *ir.Node {
	u := r.only(v)
	if !isOp(u, "Mul") || otherInput(u, v) != x || u.Inputs[0] == u.Inputs[1] {
		return nil
	}
	return u
}

// actSixth reports whether n divides v by 6: Div(v, 6) or Mul by 1/6.
func actSixth(n *ir.Node, v *ir.Value) bool {
	switch {
	case isOp(n, "Div") && len(n.Inputs) == 2 && n.Inputs[0] == v:
		c, ok := scalarConst(n.Inputs[1])
		return ok && c == 6
	case isOp(n, "Mul"):
		o := otherInput(n, v)
		if o == nil || o == v {
			return false
		}
		c, ok := scalarConst(o)
		return ok && (c == 1.0/6 || c == float64(float32(1.0/6)))
	}
	return false
}

// actNode makes the node that replaces the nodes from: the ai.onnx op
// when the model's opset has it, else the cuvil op of the same name.
func actNode(r *rewriter, op string, x *ir.Value, last *ir.Node, from []*ir.Node, attrs ...*ir.Attr) {
	y := last.Outputs[0]
	n := &ir.Node{Name: last.Name, Op: op, Inputs: []*ir.Value{x}, Outputs: []*ir.Value{y}, Attrs: attrs}
	if v, ok := onnxVersion(r.m, op); ok {
		n.Version = v
	} else {
		n.Domain, n.Version = ir.CuvilDomain, ir.CuvilOpset
		useCuvil(r.m)
	}
	y.Def = n
	r.fuse(n, last, from...)
}

// actSwishAt rewrites x * Sigmoid(x) from its Sigmoid s.
func actSwishAt(r *rewriter, s *ir.Node) {
	x := s.Input(0)
	if !actFloat(x) {
		return
	}
	u := actMulBy(r, s.Outputs[0], x)
	if u == nil || !sameShape(u.Outputs[0], x) {
		return
	}
	actNode(r, "Swish", x, u, []*ir.Node{s, u})
}

// actMishAt rewrites x * Tanh(Softplus(x)) from its Softplus sp.
func actMishAt(r *rewriter, sp *ir.Node) {
	x := sp.Input(0)
	if !actFloat(x) {
		return
	}
	t := r.only(sp.Outputs[0])
	if !isOp(t, "Tanh") {
		return
	}
	u := actMulBy(r, t.Outputs[0], x)
	if u == nil || !sameShape(u.Outputs[0], x) {
		return
	}
	actNode(r, "Mish", x, u, []*ir.Node{sp, t, u})
}

// actClamp returns the bounds clamp node n applies to its input v
// (Clip with constant bounds, Relu, Max or Min with a scalar constant).
func actClamp(n *ir.Node, v *ir.Value) (lo, hi float64, ok bool) {
	lo, hi = -3.4028234663852886e38*10, 3.4028234663852886e38*10 // beyond any float32
	switch {
	case isOp(n, "Relu") && n.Input(0) == v:
		return 0, hi, true
	case isOp(n, "Clip") && n.Input(0) == v:
		if n.Version < 11 {
			if a := n.Attr("min"); a != nil {
				lo = float64(a.F)
			}
			if a := n.Attr("max"); a != nil {
				hi = float64(a.F)
			}
			return lo, hi, true
		}
		for i, p := range []*float64{&lo, &hi} {
			b := n.Input(1 + i)
			if b == nil {
				continue
			}
			c, ok := scalarConst(b)
			if !ok {
				return 0, 0, false
			}
			*p = c
		}
		return lo, hi, true
	case (isOp(n, "Max") || isOp(n, "Min")) && len(n.Inputs) == 2 && n.Attr("broadcast") == nil:
		o := otherInput(n, v)
		if o == nil || o == v {
			return 0, 0, false
		}
		c, ok := scalarConst(o)
		if !ok {
			return 0, 0, false
		}
		if n.Op == "Max" {
			return c, hi, true
		}
		return lo, c, true
	}
	return 0, 0, false
}

// actHardAt rewrites the HardSigmoid and HardSwish forms from their
// Add a = x + 3.
func actHardAt(r *rewriter, a *ir.Node) {
	if len(a.Inputs) != 2 || a.Attr("broadcast") != nil {
		return
	}
	var x *ir.Value
	for i := 0; i < 2; i++ {
		if c, ok := scalarConst(a.Inputs[1-i]); ok && c == 3 && actFloat(a.Inputs[i]) {
			x = a.Inputs[i]
		}
	}
	if x == nil || !sameShape(a.Outputs[0], x) {
		return
	}
	// The clamp: one or two ops composing to [0, 6].
	eaten := []*ir.Node{a}
	cur := a.Outputs[0]
	lo, hi := -3.4028234663852886e38*10, 3.4028234663852886e38*10
	for k := 0; k < 2; k++ {
		u := r.only(cur)
		l, h, ok := actClamp(u, cur)
		if !ok || !sameShape(u.Outputs[0], x) {
			break
		}
		lo, hi = max(lo, l), min(hi, h)
		eaten = append(eaten, u)
		cur = u.Outputs[0]
		if lo == 0 && hi == 6 {
			break
		}
	}
	if len(eaten) == 1 || lo != 0 || hi != 6 {
		return
	}
	u := r.only(cur)
	if u == nil || !sameShape(u.Outputs[0], x) {
		return
	}
	switch {
	case actSixth(u, cur):
		// clamp/6: HardSigmoid, then x * that: HardSwish.
		eaten = append(eaten, u)
		if w := actMulBy(r, u.Outputs[0], x); w != nil && sameShape(w.Outputs[0], x) {
			actNode(r, "HardSwish", x, w, append(eaten, w))
			return
		}
		actNode(r, "HardSigmoid", x, u, eaten,
			&ir.Attr{Name: "alpha", Kind: ir.AttrFloat, F: float32(1.0 / 6)},
			&ir.Attr{Name: "beta", Kind: ir.AttrFloat, F: 0.5})
	case isOp(u, "Mul") && otherInput(u, cur) == x:
		// (x * clamp) / 6.
		w := r.only(u.Outputs[0])
		if w == nil || !actSixth(w, u.Outputs[0]) || !sameShape(w.Outputs[0], x) {
			return
		}
		actNode(r, "HardSwish", x, w, append(eaten, u, w))
	}
}

// actHardSigmoidMulAt rewrites x * HardSigmoid(x) with alpha 1/6 and
// beta 0.5 (how exporters write HardSwish before opset 14).
func actHardSigmoidMulAt(r *rewriter, h *ir.Node) {
	x := h.Input(0)
	if !actFloat(x) || h.AttrFloat("alpha", 0.2) != float32(1.0/6) || h.AttrFloat("beta", 0.5) != 0.5 {
		return
	}
	u := actMulBy(r, h.Outputs[0], x)
	if u == nil || !sameShape(u.Outputs[0], x) {
		return
	}
	actNode(r, "HardSwish", x, u, []*ir.Node{h, u})
}

package passes

import (
	"math"

	"github.com/cuvil/cuvil/ir"
)

// FuseGelu recognises GELU written out in elementwise ops, as exporters
// write it, and replaces it by one cuvil::Gelu (which fuse-gemm then
// folds into the preceding MatMul's epilogue):
//
//	erf form:  x * 0.5 * (1 + erf(x / sqrt(2)))   (Div by sqrt2 or Mul by 1/sqrt2)
//	tanh form: x * 0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
//
// (x^3 as Pow(x, 3) or x*x*x)
// with the final products in either order: (x*h)*0.5 or (x*0.5)*h.
var FuseGelu = &Pass{
	Name: "fuse-gelu",
	Doc:  "replace erf- and tanh-form GELU subgraphs by cuvil::Gelu",
	Run: func(m *ir.Model) error {
		return forGraphs(m, func(g *ir.Graph) error {
			r := newRewriter(m, g)
			for _, n := range g.Nodes {
				at(m, n)
				if r.dead[n] {
					continue
				}
				if isOp(n, "Erf") || isOp(n, "Tanh") {
					fuseGeluAt(r, n)
				}
			}
			r.sweep()
			return nil
		})
	},
}

func near(v, want float64) bool { return math.Abs(v-want) <= 1e-4*math.Abs(want) }

// constOperand returns the non-constant operand of binary n and the scalar
// constant, when n has that form.
func constOperand(n *ir.Node) (*ir.Value, float64, bool) {
	if len(n.Inputs) != 2 {
		return nil, 0, false
	}
	a, c := n.Inputs[0], n.Inputs[1]
	if a.IsConst() {
		a, c = c, a
	}
	if a.IsConst() {
		return nil, 0, false
	}
	f, ok := scalarConst(c)
	return a, f, ok
}

func fuseGeluAt(r *rewriter, fn *ir.Node) {
	var x *ir.Value
	var inner []*ir.Node
	approx := "none"
	p := fn.Inputs[0].Def
	if p == nil || r.only(fn.Inputs[0]) != fn {
		return
	}
	if isOp(fn, "Erf") {
		a, c, ok := constOperand(p)
		switch {
		case ok && isOp(p, "Div") && p.Inputs[1].IsConst() && near(c, math.Sqrt2):
		case ok && isOp(p, "Mul") && near(c, 1/math.Sqrt2):
		default:
			return
		}
		x, inner = a, []*ir.Node{p}
	} else {
		// Tanh(Mul(Add(x, Mul(x^3, 0.044715)), sqrt(2/pi))), x^3 as
		// Pow(x, 3) or x*x*x (cubeOf)
		a, c, ok := constOperand(p)
		if !ok || !isOp(p, "Mul") || !near(c, math.Sqrt(2/math.Pi)) || r.only(a) != p {
			return
		}
		add := a.Def
		if !isOp(add, "Add") || len(add.Inputs) != 2 {
			return
		}
		for i := 0; i < 2; i++ {
			xs, cube := add.Inputs[i], add.Inputs[1-i].Def
			if cube == nil || r.only(add.Inputs[1-i]) != add {
				continue
			}
			pw, k, ok := constOperand(cube)
			if !ok || !isOp(cube, "Mul") || !near(k, 0.044715) || pw.Def == nil || r.only(pw) != cube {
				continue
			}
			if cubed := cubeOf(r, pw, xs); cubed != nil {
				x, inner = xs, append(cubed, cube, add, p)
				approx = "tanh"
				break
			}
		}
		if x == nil || r.only(add.Outputs[0]) != p {
			return
		}
	}
	// 1 + h
	one := r.only(fn.Outputs[0])
	if !isOp(one, "Add") {
		return
	}
	if _, c, ok := constOperand(one); !ok || c != 1 {
		return
	}
	h := one.Outputs[0]
	m1 := r.only(h)
	if !isOp(m1, "Mul") {
		return
	}
	var last *ir.Node
	var eaten []*ir.Node
	switch o := otherInput(m1, h); {
	case o == x:
		// (x * h) * 0.5
		m2 := r.only(m1.Outputs[0])
		if !isOp(m2, "Mul") {
			return
		}
		if _, c, ok := constOperand(m2); !ok || c != 0.5 {
			return
		}
		eaten, last = []*ir.Node{m1}, m2
	case o != nil && o.Def != nil && isOp(o.Def, "Mul") && r.only(o) == m1:
		// (x * 0.5) * h
		if xx, c, ok := constOperand(o.Def); !ok || xx != x || c != 0.5 {
			return
		}
		eaten, last = []*ir.Node{o.Def}, m1
	default:
		return
	}
	for _, n := range inner {
		if n != inner[len(inner)-1] && r.only(n.Outputs[0]) == nil {
			return
		}
	}
	y := last.Outputs[0]
	if !sameShape(x, y) {
		return
	}
	gelu := &ir.Node{Name: fn.Name, Op: "Gelu", Domain: ir.CuvilDomain, Version: ir.CuvilOpset, Inputs: []*ir.Value{x}, Outputs: []*ir.Value{y}}
	if approx != "none" {
		gelu.Attrs = []*ir.Attr{{Name: "approximate", Kind: ir.AttrString, S: approx}}
	}
	y.Def = gelu
	useCuvil(r.m)
	r.fuse(gelu, last, append(append(append(inner, fn, one), eaten...), last)...)
}

// cubeOf returns the nodes computing v = x^3, as Pow(x, 3) or as products
// of x, x and x in either association (Mul(Mul(x, x), x), Mul(x, Mul(x,
// x)); GPT-style exports write x*x*x), nil if v is not that. The inner
// square must have no other reader.
func cubeOf(r *rewriter, v, x *ir.Value) []*ir.Node {
	n := v.Def
	if n == nil {
		return nil
	}
	if px, e, ok := constOperand(n); ok && isOp(n, "Pow") && n.Inputs[1].IsConst() && e == 3 && px == x {
		return []*ir.Node{n}
	}
	if !isOp(n, "Mul") || len(n.Inputs) != 2 {
		return nil
	}
	for i := 0; i < 2; i++ {
		a, sq := n.Inputs[i], n.Inputs[1-i]
		if a != x || sq.Def == nil || !isOp(sq.Def, "Mul") || r.only(sq) != n {
			continue
		}
		if d := sq.Def; len(d.Inputs) == 2 && d.Inputs[0] == x && d.Inputs[1] == x {
			return []*ir.Node{d, n}
		}
	}
	return nil
}

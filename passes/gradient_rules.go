package passes

import (
	"slices"

	"github.com/cuvil/cuvil/ir"
)

// gradRule returns the gradient of each input of n (nil where there is
// none, or where the input does not depend on the xs), given the
// gradients of its outputs (nil for outputs y does not need).
type gradRule func(b *gradBuilder, n *ir.Node, dOut []*ir.Value) []*ir.Value

// gradRules holds the derivative of each ai.onnx op Gradient can
// differentiate through.
var gradRules map[string]gradRule

func init() {
	gradRules = map[string]gradRule{
		"Add": func(b *gradBuilder, n *ir.Node, d []*ir.Value) []*ir.Value {
			if !b.modernBroadcast(n) {
				return nil
			}
			out := n.Outputs[0].Type.Shape
			return b.each(n, func(i int, x *ir.Value) *ir.Value { return b.unbroadcast(n, d[0], x, out) })
		},
		"Sub": func(b *gradBuilder, n *ir.Node, d []*ir.Value) []*ir.Value {
			if !b.modernBroadcast(n) {
				return nil
			}
			out := n.Outputs[0].Type.Shape
			return b.each(n, func(i int, x *ir.Value) *ir.Value {
				g := d[0]
				if i == 1 {
					g = b.emit(b.base(x, "neg"), "Neg", []*ir.Value{g})
				}
				return b.unbroadcast(n, g, x, out)
			})
		},
		"Mul": func(b *gradBuilder, n *ir.Node, d []*ir.Value) []*ir.Value {
			if !b.modernBroadcast(n) {
				return nil
			}
			out := n.Outputs[0].Type.Shape
			return b.each(n, func(i int, x *ir.Value) *ir.Value {
				g := b.emit(b.base(x, "mul"), "Mul", []*ir.Value{d[0], n.Inputs[1-i]})
				return b.unbroadcast(n, g, x, out)
			})
		},
		// C = A/B: dA = dC/B, dB = -dC*C/B.
		"Div": func(b *gradBuilder, n *ir.Node, d []*ir.Value) []*ir.Value {
			if !b.modernBroadcast(n) {
				return nil
			}
			a, bb, c := n.Inputs[0], n.Inputs[1], n.Outputs[0]
			out := c.Type.Shape
			return b.each(n, func(i int, x *ir.Value) *ir.Value {
				if i == 0 {
					return b.unbroadcast(n, b.emit(b.base(a, "div"), "Div", []*ir.Value{d[0], bb}), a, out)
				}
				g := b.emit(b.base(bb, "mul"), "Mul", []*ir.Value{d[0], c})
				g = b.emit(b.base(bb, "div"), "Div", []*ir.Value{g, bb})
				return b.unbroadcast(n, b.emit(b.base(bb, "neg"), "Neg", []*ir.Value{g}), bb, out)
			})
		},
		"Neg": func(b *gradBuilder, n *ir.Node, d []*ir.Value) []*ir.Value {
			return []*ir.Value{b.emit(b.base(n.Inputs[0], "neg"), "Neg", []*ir.Value{d[0]})}
		},
		"Identity": func(b *gradBuilder, n *ir.Node, d []*ir.Value) []*ir.Value { return []*ir.Value{d[0]} },
		// dX = dY * (X > 0).
		"Relu": func(b *gradBuilder, n *ir.Node, d []*ir.Value) []*ir.Value {
			x := n.Inputs[0]
			gt := b.emit(b.base(x, "pos"), "Greater", []*ir.Value{x, b.scalar(b.base(x, "zero"), x.Type.DType, 0)})
			mask := b.emit(b.base(x, "mask"), "Cast", []*ir.Value{gt}, &ir.Attr{Name: "to", Kind: ir.AttrInt, I: int64(x.Type.DType)})
			return []*ir.Value{b.emit(b.base(x, "mul"), "Mul", []*ir.Value{d[0], mask})}
		},
		// dX = dY * Y * (1-Y).
		"Sigmoid": func(b *gradBuilder, n *ir.Node, d []*ir.Value) []*ir.Value {
			x, y := n.Inputs[0], n.Outputs[0]
			one := b.scalar(b.base(x, "one"), y.Type.DType, 1)
			s := b.emit(b.base(x, "sub"), "Sub", []*ir.Value{one, y})
			s = b.emit(b.base(x, "dsig"), "Mul", []*ir.Value{y, s})
			return []*ir.Value{b.emit(b.base(x, "mul"), "Mul", []*ir.Value{d[0], s})}
		},
		// dX = dY * (1-Y²).
		"Tanh": func(b *gradBuilder, n *ir.Node, d []*ir.Value) []*ir.Value {
			x, y := n.Inputs[0], n.Outputs[0]
			one := b.scalar(b.base(x, "one"), y.Type.DType, 1)
			sq := b.emit(b.base(x, "sq"), "Mul", []*ir.Value{y, y})
			s := b.emit(b.base(x, "dtanh"), "Sub", []*ir.Value{one, sq})
			return []*ir.Value{b.emit(b.base(x, "mul"), "Mul", []*ir.Value{d[0], s})}
		},
		// dX = dY * Y.
		"Exp": func(b *gradBuilder, n *ir.Node, d []*ir.Value) []*ir.Value {
			return []*ir.Value{b.emit(b.base(n.Inputs[0], "mul"), "Mul", []*ir.Value{d[0], n.Outputs[0]})}
		},
		// dX = dY / X.
		"Log": func(b *gradBuilder, n *ir.Node, d []*ir.Value) []*ir.Value {
			return []*ir.Value{b.emit(b.base(n.Inputs[0], "div"), "Div", []*ir.Value{d[0], n.Inputs[0]})}
		},
		// dX = dY / (2Y).
		"Sqrt": func(b *gradBuilder, n *ir.Node, d []*ir.Value) []*ir.Value {
			x, y := n.Inputs[0], n.Outputs[0]
			two := b.emit(b.base(x, "twice"), "Add", []*ir.Value{y, y})
			return []*ir.Value{b.emit(b.base(x, "div"), "Div", []*ir.Value{d[0], two})}
		},
		"Sum": func(b *gradBuilder, n *ir.Node, d []*ir.Value) []*ir.Value {
			out := n.Outputs[0].Type.Shape
			if !n.Outputs[0].Type.Known() {
				b.fail("cannot differentiate through node %q (%s): its output's shape is unknown", n.Name, n.Op)
				return nil
			}
			return b.each(n, func(i int, x *ir.Value) *ir.Value { return b.unbroadcast(n, d[0], x, out) })
		},
		"MatMul":    gradMatMul,
		"ReduceSum": gradReduceSum,
		"Transpose": gradTranspose,
		// Shape-only ops: the gradient takes the input's shape back.
		"Reshape":   gradReshape,
		"Flatten":   gradReshape,
		"Squeeze":   gradReshape,
		"Unsqueeze": gradReshape,
	}
}

// base names a backward value computed for the gradient of x.
func (b *gradBuilder) base(x *ir.Value, what string) string { return "d_" + x.Name + "_" + what }

// each calls f for each input of n that depends on the xs.
func (b *gradBuilder) each(n *ir.Node, f func(i int, x *ir.Value) *ir.Value) []*ir.Value {
	out := make([]*ir.Value, len(n.Inputs))
	for i, x := range n.Inputs {
		if x != nil && b.active[x] {
			out[i] = f(i, x)
		}
	}
	return out
}

// modernBroadcast fails on the opset<7 form of the arithmetic ops, whose
// broadcast/axis attributes align B differently.
func (b *gradBuilder) modernBroadcast(n *ir.Node) bool {
	if n.Version < 7 && n.AttrInt("broadcast", 0) != 0 {
		b.fail("node %q (%s): no derivative rule for the legacy broadcast attribute", n.Name, n.Op)
		return false
	}
	if !n.Outputs[0].Type.Known() {
		b.fail("cannot differentiate through node %q (%s): its output's shape is unknown", n.Name, n.Op)
		return false
	}
	return true
}

// swapLast transposes the last two axes of x, of rank r.
func (b *gradBuilder) swapLast(x *ir.Value, r int, base string) *ir.Value {
	perm := make([]int64, r)
	for i := range perm {
		perm[i] = int64(i)
	}
	perm[r-2], perm[r-1] = perm[r-1], perm[r-2]
	return b.emit(base, "Transpose", []*ir.Value{x}, &ir.Attr{Name: "perm", Kind: ir.AttrInts, Ints: perm})
}

// C = A·B over the last two axes, batch axes broadcast: dA = dC·Bᵀ and
// dB = Aᵀ·dC, each summed over the batch axes it was broadcast along.
func gradMatMul(b *gradBuilder, n *ir.Node, d []*ir.Value) []*ir.Value {
	a, bb, c := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	if !a.Type.Known() || !bb.Type.Known() || !c.Type.Known() {
		b.fail("cannot differentiate through node %q (MatMul): operand shapes unknown", n.Name)
		return nil
	}
	ra, rb, rc := a.Type.Rank(), bb.Type.Rank(), c.Type.Rank()
	if ra < 2 || rb < 2 {
		b.fail("node %q (MatMul): no derivative rule for 1-D operands", n.Name)
		return nil
	}
	batch := c.Type.Shape[:rc-2]
	return b.each(n, func(i int, x *ir.Value) *ir.Value {
		var g *ir.Value
		if i == 0 {
			g = b.emit(b.base(a, "matmul"), "MatMul", []*ir.Value{d[0], b.swapLast(bb, rb, b.base(a, "bt"))})
		} else {
			g = b.emit(b.base(bb, "matmul"), "MatMul", []*ir.Value{b.swapLast(a, ra, b.base(bb, "at")), d[0]})
		}
		r := x.Type.Rank()
		return b.unbroadcast(n, g, x, append(slices.Clone(batch), x.Type.Shape[r-2:]...))
	})
}

// dX = dY with the reduced axes put back (when keepdims=0), expanded to
// X's shape.
func gradReduceSum(b *gradBuilder, n *ir.Node, d []*ir.Value) []*ir.Value {
	x := n.Inputs[0]
	if !x.Type.Known() {
		b.fail("cannot differentiate through node %q (ReduceSum): the input's rank is unknown", n.Name)
		return nil
	}
	r := x.Type.Rank()
	axes := n.AttrInts("axes", nil)
	if n.Version >= 13 {
		axes = nil
		if ax := n.Input(1); ax != nil {
			if !ax.IsConst() {
				b.fail("node %q (ReduceSum): no derivative rule for axes computed at run time", n.Name)
				return nil
			}
			axes = ax.Const.Int64s()
		}
		if len(axes) == 0 && n.AttrInt("noop_with_empty_axes", 0) != 0 {
			return []*ir.Value{d[0]}
		}
	}
	if len(axes) == 0 {
		for i := range r {
			axes = append(axes, int64(i))
		}
	}
	norm := make([]int64, len(axes))
	for i, a := range axes {
		if a < 0 {
			a += int64(r)
		}
		norm[i] = a
	}
	slices.Sort(norm)
	g := d[0]
	if n.AttrInt("keepdims", 1) == 0 {
		g = b.axesOp(b.base(x, "unsqueeze"), "Unsqueeze", g, norm)
	}
	return []*ir.Value{b.emit(b.base(x, "expand"), "Expand", []*ir.Value{g, b.shapeOf(x)})}
}

// dX = dY transposed by the inverse permutation.
func gradTranspose(b *gradBuilder, n *ir.Node, d []*ir.Value) []*ir.Value {
	x := n.Inputs[0]
	if !x.Type.Known() {
		b.fail("cannot differentiate through node %q (Transpose): the input's rank is unknown", n.Name)
		return nil
	}
	r := x.Type.Rank()
	perm := n.AttrInts("perm", nil)
	if perm == nil {
		for i := range r {
			perm = append(perm, int64(r-1-i))
		}
	}
	inv := make([]int64, len(perm))
	for i, p := range perm {
		inv[p] = int64(i)
	}
	return []*ir.Value{b.emit(b.base(x, "transpose"), "Transpose", []*ir.Value{d[0]}, &ir.Attr{Name: "perm", Kind: ir.AttrInts, Ints: inv})}
}

// dX = dY reshaped to X's shape; shape and axes inputs get none.
func gradReshape(b *gradBuilder, n *ir.Node, d []*ir.Value) []*ir.Value {
	x := n.Inputs[0]
	if !x.Type.Known() {
		b.fail("cannot differentiate through node %q (%s): the input's shape is unknown", n.Name, n.Op)
		return nil
	}
	return []*ir.Value{b.emit(b.base(x, "reshape"), "Reshape", []*ir.Value{d[0], b.shapeOf(x)})}
}

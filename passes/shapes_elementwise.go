package passes

import (
	"fmt"

	"github.com/cuvil/cuvil/ir"
)

func init() {
	// The element-wise ops of the table ("ew") take their rule from it:
	// one required input is unary, more (or a variadic one) broadcast; an
	// output whose dtype the table fixes to bool makes the comparison and
	// logic variants. The ew ops with a rule of their own are listed.
	ownRule := map[string]bool{"Cast": true, "CastLike": true, "PRelu": true, "RegexFullMatch": true, "StringConcat": true, "Where": true}
	for _, s := range ir.Ops() {
		if s.Domain != "" || !s.Elementwise || ownRule[s.Name] {
			continue
		}
		reg(elementwiseRule(s), s.Name)
	}
	// Not element-wise, but the output has input 0's type and shape.
	reg(inferUnary, "Softmax", "LogSoftmax", "Hardmax", "LRN", "MeanVarianceNormalization", "CumSum", "CumProd", "Trilu",
		"ReverseSequence", "InstanceNormalization", "GroupNormalization", "Scatter", "ScatterElements", "ScatterND")
	reg(inferWhere, "Where")
	reg(inferCast, "Cast")
	reg(inferBitCast, "BitCast")
	reg(inferCastLike, "CastLike")
	reg(inferDropout, "Dropout")
	reg(inferBatchNorm, "BatchNormalization")
	reg(inferLayerNorm, "LayerNormalization")
	reg(inferQuantizeLinear, "QuantizeLinear")
	reg(inferDequantizeLinear, "DequantizeLinear")
	reg(inferDynamicQuantizeLinear, "DynamicQuantizeLinear")
}

// elementwiseRule is the shape rule of an element-wise op from its table
// row: unary (one required input) or broadcast, keeping input 0's dtype
// or, where the table fixes the output to bool, giving bool.
func elementwiseRule(s *ir.OpSchema) inferFunc {
	required := 0
	for _, a := range s.Inputs {
		if !a.Optional {
			required++
		}
		if a.Variadic {
			required = 2
		}
	}
	out := s.Types[s.Outputs[0].Type]
	toBool := len(out) == 1 && out[0] == ir.Bool
	switch {
	case required == 1 && toBool:
		return inferUnaryBool
	case required == 1:
		return inferUnary
	case toBool:
		return inferBroadcastBool
	}
	return inferBroadcast
}

// fixedDType is the dtype the op table fixes output i of n to (one dtype
// for its constraint letter), or Undefined.
func fixedDType(n *ir.Node, i int) ir.DType {
	s := ir.LookupOp(n.Domain, n.Op)
	if s == nil || i >= len(s.Outputs) {
		return ir.Undefined
	}
	if dts := s.Types[s.Outputs[i].Type]; len(dts) == 1 {
		return dts[0]
	}
	return ir.Undefined
}

func inferUnary(x *inferer, n *ir.Node) error {
	v := n.Input(0)
	if v == nil {
		return fmt.Errorf("input 0 is missing")
	}
	switch n.Op {
	case "Softmax", "LogSoftmax", "Hardmax":
		if t := v.Type; t.Kind == ir.TensorKind && !t.Unranked {
			r := len(t.Shape)
			// Before 13 the input is coerced to 2-D at axis, which may
			// also be r (the default 1 on a 1-D input: [N, 1]).
			if a := n.IntAttr("axis"); !(n.Version < 13 && (a == int64(r) || r == 0)) {
				if _, err := normAxis(a, r); err != nil {
					return err
				}
			}
		}
	}
	x.set(n.Outputs[0], v.Type.Clone())
	if n.Op == "Identity" {
		if d, ok := x.vals(v); ok {
			x.track(n.Outputs[0], d)
		}
	}
	return nil
}

func inferUnaryBool(x *inferer, n *ir.Node) error {
	t, err := x.in(n, 0)
	if err != nil {
		return err
	}
	x.setOut(n, 0, fixedDType(n, 0), cloneShape(t.Shape))
	if n.Op == "Not" {
		if a, ok := x.ints(n.Inputs[0]); ok && len(t.Shape) <= 1 {
			out := make([]ir.Dim, len(a))
			for i, v := range a {
				out[i] = boolDim(v == 0)
			}
			x.track(n.Outputs[0], out)
		}
	}
	return nil
}

func boolDim(b bool) ir.Dim {
	if b {
		return ir.D(1)
	}
	return ir.D(0)
}

// inputShapes returns the shapes of the present inputs.
func (x *inferer) inputShapes(n *ir.Node) ([]ir.Shape, error) {
	var shapes []ir.Shape
	for i, v := range n.Inputs {
		if v == nil {
			continue
		}
		t, err := x.in(n, i)
		if err != nil {
			return nil, err
		}
		shapes = append(shapes, t.Shape)
	}
	if len(shapes) == 0 {
		return nil, fmt.Errorf("no inputs")
	}
	return shapes, nil
}

func inferBroadcast(x *inferer, n *ir.Node) error {
	shapes, err := x.inputShapes(n)
	if err != nil {
		return err
	}
	out, err := x.broadcast(shapes...)
	if err != nil {
		return err
	}
	dt := n.Inputs[0].Type.DType
	x.setOut(n, 0, dt, out)
	if dt.IsInt() && len(n.Inputs) == 2 {
		x.trackArith(n)
	}
	return nil
}

// trackedPair returns the tracked contents of n's two inputs, which must
// broadcast (equal lengths or one of length 1) into a tracked output, and
// the output's contents to fill.
func (x *inferer) trackedPair(n *ir.Node) (a, b, out []ir.Dim, ok bool) {
	a, ok1 := x.vals(n.Inputs[0])
	b, ok2 := x.vals(n.Inputs[1])
	if !ok1 || !ok2 || len(n.Outputs[0].Type.Shape) > 1 {
		return nil, nil, nil, false
	}
	l := max(len(a), len(b))
	if len(a) != l && len(a) != 1 || len(b) != l && len(b) != 1 {
		return nil, nil, nil, false
	}
	return a, b, make([]ir.Dim, l), true
}

// trackArith follows integer arithmetic on tracked tensors (shape maths
// like Div(Gather(Shape(x), 2), 4)). Sizes that cannot be computed get
// fresh symbols shared by equal expressions.
func (x *inferer) trackArith(n *ir.Node) {
	a, b, out, ok := x.trackedPair(n)
	if !ok {
		return
	}
	for i := range out {
		p, q := a[min(i, len(a)-1)], b[min(i, len(b)-1)]
		d, ok := x.arith(n.Op, p, q)
		if !ok {
			return
		}
		out[i] = d
	}
	x.track(n.Outputs[0], out)
}

func (x *inferer) arith(op string, p, q ir.Dim) (ir.Dim, bool) {
	if p.IsConst() && q.IsConst() {
		a, b := p.Size, q.Size
		switch op {
		case "Add":
			return ir.D(a + b), true
		case "Sub":
			return ir.D(a - b), true
		case "Mul":
			return ir.D(a * b), true
		case "Div":
			// Exact, or non-negative where truncation and floor agree: no
			// rounding convention is involved.
			if b != 0 && (a%b == 0 || a >= 0 && b > 0) {
				return ir.D(a / b), true
			}
		case "Max":
			return ir.D(max(a, b)), true
		case "Min":
			return ir.D(min(a, b)), true
		}
		return ir.Dim{}, false
	}
	switch {
	case op == "Add" && q == ir.D(0), op == "Sub" && q == ir.D(0), op == "Mul" && q == ir.D(1), op == "Div" && q == ir.D(1):
		return p, true
	case op == "Add" && p == ir.D(0), op == "Mul" && p == ir.D(1):
		return q, true
	case op == "Sub" && p == q:
		return ir.D(0), true
	case op == "Div" && p == q:
		return ir.D(1), true
	case op == "Mul" && q.IsConst():
		return x.mulDim(p, q.Size), true
	case op == "Mul" && p.IsConst():
		return x.mulDim(q, p.Size), true
	case op == "Div" && q.IsConst() && q.Size > 0:
		d, err := x.divDim(p, q.Size)
		return d, err == nil
	case op == "Add" && q.IsConst():
		return x.addDim(p, q.Size), true
	case op == "Sub" && q.IsConst():
		return x.addDim(p, -q.Size), true
	case op == "Add" || op == "Sub" || op == "Mul" || op == "Div":
		return x.freshDim(op + "(" + p.String() + "," + q.String() + ")"), true
	}
	return ir.Dim{}, false
}

func inferBroadcastBool(x *inferer, n *ir.Node) error {
	shapes, err := x.inputShapes(n)
	if err != nil {
		return err
	}
	out, err := x.broadcast(shapes...)
	if err != nil {
		return err
	}
	x.setOut(n, 0, fixedDType(n, 0), out)
	if len(n.Inputs) == 2 {
		x.trackCompare(n)
	}
	return nil
}

// trackCompare follows comparisons and logic on tracked tensors: an If's
// condition such as Equal(Size(x), 4) is then known, and the If takes its
// branch's types exactly. Equal symbols are equal; anything else about a
// symbol stays unknown.
func (x *inferer) trackCompare(n *ir.Node) {
	a, b, out, ok := x.trackedPair(n)
	if !ok {
		return
	}
	for i := range out {
		p, q := a[min(i, len(a)-1)], b[min(i, len(b)-1)]
		if n.Op == "Equal" && p == q {
			out[i] = ir.D(1)
			continue
		}
		if !p.IsConst() || !q.IsConst() {
			return
		}
		u, v := p.Size, q.Size
		if (u < 0 || v < 0) && n.Inputs[0].Type.DType.IsUnsigned() {
			return // a uint64 past int64's range: the order differs
		}
		var r bool
		switch n.Op {
		case "Equal":
			r = u == v
		case "Less":
			r = u < v
		case "Greater":
			r = u > v
		case "LessOrEqual":
			r = u <= v
		case "GreaterOrEqual":
			r = u >= v
		case "And":
			r = u != 0 && v != 0
		case "Or":
			r = u != 0 || v != 0
		case "Xor":
			r = (u != 0) != (v != 0)
		default:
			return
		}
		out[i] = boolDim(r)
	}
	x.track(n.Outputs[0], out)
}

func inferWhere(x *inferer, n *ir.Node) error {
	shapes, err := x.inputShapes(n)
	if err != nil {
		return err
	}
	if len(shapes) != 3 {
		return fmt.Errorf("has %d inputs, want 3", len(shapes))
	}
	out, err := x.broadcast(shapes...)
	if err != nil {
		return err
	}
	x.setOut(n, 0, n.Inputs[1].Type.DType, out)
	// Where(Equal(shape, -1), ones, shape) style rewrites of shape tensors:
	// follow them when the condition is known.
	c, ok1 := x.ints(n.Inputs[0])
	a, ok2 := x.vals(n.Inputs[1])
	b, ok3 := x.vals(n.Inputs[2])
	if ok1 && ok2 && ok3 && len(out) <= 1 {
		l := 1
		if len(out) == 1 && out[0].IsConst() {
			l = int(out[0].Size)
		}
		res := make([]ir.Dim, l)
		for i := range res {
			if len(c) == 0 || len(a) == 0 || len(b) == 0 {
				return nil
			}
			if c[min(i, len(c)-1)] != 0 {
				res[i] = a[min(i, len(a)-1)]
			} else {
				res[i] = b[min(i, len(b)-1)]
			}
		}
		x.track(n.Outputs[0], res)
	}
	return nil
}

func inferCast(x *inferer, n *ir.Node) error {
	t, err := x.in(n, 0)
	if err != nil {
		return err
	}
	if n.Attr("to") == nil {
		return fmt.Errorf("attribute to is missing")
	}
	dt, err := attrDType(n, "to", 0)
	if err != nil {
		return err
	}
	x.setOut(n, 0, dt, cloneShape(t.Shape))
	if d, ok := x.vals(n.Inputs[0]); ok && dt.IsInt() && dt.Bits() >= 8 {
		x.track(n.Outputs[0], d)
	}
	return nil
}

// inferBitCast: same shape, dtype "to" of the same width (values are not
// tracked: the bits change meaning).
func inferBitCast(x *inferer, n *ir.Node) error {
	t, err := x.in(n, 0)
	if err != nil {
		return err
	}
	if n.Attr("to") == nil {
		return fmt.Errorf("attribute to is missing")
	}
	dt, err := attrDType(n, "to", 0)
	if err != nil {
		return err
	}
	if t.DType != ir.Undefined && (dt.Bits() != t.DType.Bits() || dt == ir.String || t.DType == ir.String || dt.Bits() < 8) {
		return fmt.Errorf("cannot bit-cast %s to %s: BitCast needs two fixed-width dtypes of the same size", t.DType, dt)
	}
	x.setOut(n, 0, dt, cloneShape(t.Shape))
	return nil
}

func inferCastLike(x *inferer, n *ir.Node) error {
	t, err := x.in(n, 0)
	if err != nil {
		return err
	}
	like, err := x.in(n, 1)
	if err != nil {
		return err
	}
	x.setOut(n, 0, like.DType, cloneShape(t.Shape))
	if d, ok := x.vals(n.Inputs[0]); ok && like.DType.IsInt() && like.DType.Bits() >= 8 {
		x.track(n.Outputs[0], d)
	}
	return nil
}

func inferDropout(x *inferer, n *ir.Node) error {
	t, err := x.in(n, 0)
	if err != nil {
		return err
	}
	x.setOut(n, 0, t.DType, cloneShape(t.Shape))
	mask := fixedDType(n, 1)
	if n.Version > 0 && n.Version < 10 {
		mask = t.DType // Dropout-7: the mask has the input's type
	}
	x.setOut(n, 1, mask, cloneShape(t.Shape))
	return nil
}

func inferBatchNorm(x *inferer, n *ir.Node) error {
	t, err := x.inRank(n, 0, 1, -1)
	if err != nil {
		return err
	}
	x.setOut(n, 0, t.DType, cloneShape(t.Shape))
	c := ir.D(1)
	if len(t.Shape) > 1 {
		c = t.Shape[1]
	}
	// scale, B, mean and var hold one value per channel.
	for i, name := range []string{"scale", "B", "input_mean", "input_var"} {
		v := n.Input(i + 1)
		if v == nil || v.Type.Kind != ir.TensorKind || v.Type.Unranked || n.Version < 7 {
			continue
		}
		if len(v.Type.Shape) != 1 {
			return fmt.Errorf("input %d (%s) has shape %v, want [C]", i+1, name, v.Type.Shape)
		}
		if d := v.Type.Shape[0]; d.IsConst() && c.IsConst() && d.Size != c.Size {
			return fmt.Errorf("input %d (%s) has %d elements, the input has %d channels", i+1, name, d.Size, c.Size)
		}
	}
	// Training-mode outputs: running (or saved) mean and variance, per channel.
	statType := t.DType
	if v := n.Input(3); v != nil {
		statType = v.Type.DType
	}
	for i := 1; i < len(n.Outputs); i++ {
		x.setOut(n, i, statType, ir.Shape{c})
	}
	return nil
}

func inferLayerNorm(x *inferer, n *ir.Node) error {
	t, err := x.in(n, 0)
	if err != nil {
		return err
	}
	axis, err := normAxis(n.IntAttr("axis"), len(t.Shape))
	if err != nil {
		return err
	}
	x.setOut(n, 0, t.DType, cloneShape(t.Shape))
	stash, err := attrDType(n, "stash_type", ir.DType(n.IntAttr("stash_type")))
	if err != nil {
		return err
	}
	stat := cloneShape(t.Shape)
	for i := axis; i < len(stat); i++ {
		stat[i] = ir.D(1)
	}
	x.setOut(n, 1, stash, stat)
	x.setOut(n, 2, stash, cloneShape(stat))
	return nil
}

func inferQuantizeLinear(x *inferer, n *ir.Node) error {
	t, err := x.in(n, 0)
	if err != nil {
		return err
	}
	dt, err := attrDType(n, "output_dtype", ir.U8)
	if err != nil {
		return err
	}
	if dt == ir.Undefined {
		dt = ir.U8
	}
	if zp := n.Input(2); zp != nil {
		if a := n.Attr("output_dtype"); a != nil && a.I != 0 && ir.DType(a.I) != zp.Type.DType && zp.Type.DType != ir.Undefined {
			return fmt.Errorf("output_dtype %s differs from y_zero_point's dtype %s", ir.DType(a.I), zp.Type.DType)
		}
		dt = zp.Type.DType
	}
	x.setOut(n, 0, dt, cloneShape(t.Shape))
	return nil
}

func inferDequantizeLinear(x *inferer, n *ir.Node) error {
	t, err := x.in(n, 0)
	if err != nil {
		return err
	}
	dt := ir.F32
	if s := n.Input(1); s != nil && s.Type.DType.IsFloat() {
		dt = s.Type.DType
	}
	if a := n.Attr("output_dtype"); a != nil && a.I != 0 {
		if dt, err = attrDType(n, "output_dtype", dt); err != nil {
			return err
		}
	}
	x.setOut(n, 0, dt, cloneShape(t.Shape))
	return nil
}

func inferDynamicQuantizeLinear(x *inferer, n *ir.Node) error {
	t, err := x.in(n, 0)
	if err != nil {
		return err
	}
	x.setOut(n, 0, fixedDType(n, 0), cloneShape(t.Shape))
	x.setOut(n, 1, fixedDType(n, 1), ir.Shape{})
	x.setOut(n, 2, fixedDType(n, 2), ir.Shape{})
	return nil
}

package passes

import (
	"fmt"
	"slices"

	"github.com/cuvil/cuvil/ir"
)

// Gradient rewrites each ai.onnx.preview.training Gradient node into
// ordinary ai.onnx nodes: reverse-mode automatic differentiation of the
// forward nodes between its xs and y, seeded with ones of y's shape (the
// spec's implicit dY). Values named in zs, and values that do not depend
// on any of xs, are constants to the derivative. Broadcasting in the
// forward graph becomes ReduceSum over the broadcast axes and a Reshape
// back to the operand's shape; that needs the shapes, so the pass infers
// them itself before it starts. An op on the path without a rule below is
// an error naming the node.
var Gradient = &Pass{
	Name:     "gradient",
	Doc:      "rewrite ai.onnx.preview.training Gradient nodes into reverse-mode backward nodes",
	Required: true, // no kernel implements Gradient
	Run:      runGradient,
}

// maxInlineFill bounds the seeds and zero gradients stored as constants.
const maxInlineFill = 16

func isGradientNode(n *ir.Node) bool { return n.Op == "Gradient" && n.Domain == ir.TrainingDomain }

func runGradient(m *ir.Model) error {
	found := false
	m.Graph.Walk(func(g *ir.Graph) {
		for _, n := range g.Nodes {
			if !isGradientNode(n) {
				continue
			}
			found = true
			// dy/dx has x's type; say so, so inference (which has no rule
			// for Gradient) need not rely on the model declaring it.
			for i, o := range n.Outputs {
				if x := n.Input(i); o != nil && x != nil && !hintUsable(o.Type) {
					o.Type = x.Type.Clone()
				}
			}
		}
	})
	if !found {
		return nil
	}
	if _, err := InferShapes(m); err != nil {
		return err
	}
	err := forGraphs(m, func(g *ir.Graph) error {
		var grads []*ir.Node
		for _, n := range g.Nodes {
			if isGradientNode(n) {
				grads = append(grads, n)
			}
		}
		if len(grads) == 0 {
			return nil
		}
		r := newRewriter(m, g)
		for _, n := range grads {
			at(m, n)
			if err := differentiate(r, n); err != nil {
				return err
			}
		}
		return sortNodes(g)
	})
	if err != nil {
		return err
	}
	// Type the backward nodes for the passes that follow.
	_, err = InferShapes(m)
	return err
}

// gradBuilder emits the backward nodes of one Gradient node. The first
// error sticks; emitting after it is harmless, so rules read straight.
type gradBuilder struct {
	r      *rewriter
	active map[*ir.Value]bool // depends on some x, and is not cut by zs
	gn     *ir.Node
	nodes  []*ir.Node
	made   map[*ir.Value]bool // values the backward nodes define
	err    error
}

func (b *gradBuilder) fail(format string, args ...any) {
	if b.err == nil {
		b.err = fmt.Errorf("%v: "+format, append([]any{b.gn}, args...)...)
	}
}

// emit appends an ai.onnx node with one output named from base.
func (b *gradBuilder) emit(base, op string, ins []*ir.Value, attrs ...*ir.Attr) *ir.Value {
	v, ok := onnxVersion(b.r.m, op)
	if !ok && b.err == nil {
		b.fail("the backward graph needs %s, which ai.onnx opset %d does not have", op, b.r.m.Opset(""))
	}
	out := &ir.Value{Name: b.r.fresh(base), Type: ir.Type{Unranked: true}}
	n := &ir.Node{Name: out.Name, Op: op, Version: v, Inputs: ins, Outputs: []*ir.Value{out}}
	for _, a := range attrs {
		n.SetAttr(a)
	}
	out.Def = n
	b.made[out] = true
	b.nodes = append(b.nodes, n)
	return out
}

// scalar is a rank-0 constant of dtype dt.
func (b *gradBuilder) scalar(base string, dt ir.DType, f float64) *ir.Value {
	if dt != ir.F32 && dt != ir.F64 {
		b.fail("gradients of %s values are not supported (f32 and f64 are)", dt)
		dt = ir.F32
	}
	return b.r.constant(base, floatTensor(dt, nil, []float64{f}))
}

// filled is a tensor of like's dtype and shape holding f: a constant when
// the shape is known and small, else ConstantOfShape (so a large seed
// costs no weights).
func (b *gradBuilder) filled(base string, like *ir.Value, f float64) *ir.Value {
	dt := like.Type.DType
	if dt != ir.F32 && dt != ir.F64 {
		b.fail("gradients of %s values are not supported (f32 and f64 are)", dt)
		return like
	}
	if dims, ok := like.Type.Shape.Consts(); ok && !like.Type.Unranked {
		if n, _ := like.Type.Shape.NumElements(); n <= maxInlineFill {
			vals := make([]float64, n)
			for i := range vals {
				vals[i] = f
			}
			return b.r.constant(base, floatTensor(dt, dims, vals))
		}
	}
	return b.emit(base, "ConstantOfShape", []*ir.Value{b.shapeOf(like)},
		&ir.Attr{Name: "value", Kind: ir.AttrTensor, T: floatTensor(dt, []int64{1}, []float64{f})})
}

// shapeOf is v's shape as an i64 tensor: a constant when known, else Shape.
func (b *gradBuilder) shapeOf(v *ir.Value) *ir.Value {
	if dims, ok := v.Type.Shape.Consts(); ok && !v.Type.Unranked {
		return b.r.constant(v.Name+"_shape", ir.NewTensorInt64([]int64{int64(len(dims))}, dims))
	}
	return b.emit(v.Name+"_shape", "Shape", []*ir.Value{v})
}

// axesOp emits op (ReduceSum, Unsqueeze) with its axes as the attribute or,
// from opset 13, the input.
func (b *gradBuilder) axesOp(base, op string, x *ir.Value, axes []int64, attrs ...*ir.Attr) *ir.Value {
	if v, _ := onnxVersion(b.r.m, op); v >= 13 {
		c := b.r.constant(base+"_axes", ir.NewTensorInt64([]int64{int64(len(axes))}, axes))
		return b.emit(base, op, []*ir.Value{x, c}, attrs...)
	}
	return b.emit(base, op, []*ir.Value{x}, append(attrs, &ir.Attr{Name: "axes", Kind: ir.AttrInts, Ints: axes})...)
}

// unbroadcast sums d, of shape out, down to the shape of the operand in
// of node n that broadcasting stretched to out.
func (b *gradBuilder) unbroadcast(n *ir.Node, d, in *ir.Value, out ir.Shape) *ir.Value {
	if !in.Type.Known() {
		b.fail("cannot differentiate through node %q (%s): the shape of %s is unknown", n.Name, n.Op, in)
		return d
	}
	ri, ro := in.Type.Rank(), len(out)
	if ri > ro {
		b.fail("node %q (%s): operand %s has rank %d, above the output's %d", n.Name, n.Op, in, ri, ro)
		return d
	}
	var axes []int64
	for k := range ro {
		if k < ro-ri {
			axes = append(axes, int64(k))
			continue
		}
		di, do := in.Type.Shape[k-(ro-ri)], out[k]
		switch {
		case di == do:
		case di.IsConst() && di.Size == 1:
			axes = append(axes, int64(k))
		default:
			b.fail("node %q (%s): cannot tell whether axis %d of %s (%v against %v) is broadcast", n.Name, n.Op, k, in, di, do)
			return d
		}
	}
	if len(axes) == 0 {
		return d
	}
	s := b.axesOp("d_"+in.Name+"_sum", "ReduceSum", d, axes, &ir.Attr{Name: "keepdims", Kind: ir.AttrInt, I: 1})
	if ri == ro {
		return s
	}
	return b.emit("d_"+in.Name+"_reshape", "Reshape", []*ir.Value{s, b.shapeOf(in)})
}

// differentiate replaces Gradient node gn with its backward nodes.
func differentiate(r *rewriter, gn *ir.Node) error {
	b := &gradBuilder{r: r, gn: gn, made: map[*ir.Value]bool{}, active: map[*ir.Value]bool{}}
	var xs, zs []string
	if a := gn.Attr("xs"); a != nil {
		xs = a.Strings
	}
	if a := gn.Attr("zs"); a != nil {
		zs = a.Strings
	}
	yName := gn.StringAttr("y")
	if len(xs) == 0 || yName == "" {
		return fmt.Errorf("%v: attributes xs and y are required", gn)
	}
	if len(gn.Inputs) != len(xs)+len(zs) {
		return fmt.Errorf("%v: has %d inputs, want %d (the values xs then zs name)", gn, len(gn.Inputs), len(xs)+len(zs))
	}
	if len(gn.Outputs) != len(xs) {
		return fmt.Errorf("%v: has %d outputs, want one per name in xs (%d)", gn, len(gn.Outputs), len(xs))
	}
	names := append(slices.Clone(xs), zs...)
	for i, v := range gn.Inputs {
		if v == nil || v.Name != names[i] {
			return fmt.Errorf("%v: input %d is %v, but xs/zs name %q there", gn, i, v, names[i])
		}
	}
	y := lookupValue(r.g, yName, gn)
	if y == nil {
		return fmt.Errorf("%v: y names %q, which is no value of graph %q", gn, yName, r.g.Name)
	}

	// Active values depend on some x (zs cut the dependence); the region
	// is the active nodes whose outputs y needs.
	active := b.active
	cut := map[*ir.Value]bool{}
	for i, v := range gn.Inputs {
		if i < len(xs) {
			active[v] = true
		} else {
			cut[v] = true
		}
	}
	for _, n := range r.g.Nodes {
		if n == gn {
			continue
		}
		if slices.ContainsFunc(nodeReads(n), func(v *ir.Value) bool { return active[v] && !cut[v] }) {
			for _, o := range n.Outputs {
				// Integer and bool values (shapes, indices, masks) carry
				// no derivative.
				if o != nil && !cut[o] && !nonFloat(o.Type) {
					active[o] = true
				}
			}
		}
	}
	needed := map[*ir.Value]bool{y: true}
	var region []*ir.Node // reverse order
	for i := len(r.g.Nodes) - 1; i >= 0; i-- {
		n := r.g.Nodes[i]
		if n == gn || !slices.ContainsFunc(n.Outputs, func(v *ir.Value) bool { return v != nil && needed[v] && active[v] }) {
			continue
		}
		region = append(region, n)
		for _, v := range nodeReads(n) {
			if active[v] && !cut[v] {
				needed[v] = true
			}
		}
	}

	adj := map[*ir.Value]*ir.Value{}
	accumulate := func(v, d *ir.Value) {
		if old := adj[v]; old != nil {
			d = b.emit("d_"+v.Name+"_acc", "Add", []*ir.Value{old, d})
		}
		adj[v] = d
	}
	if active[y] {
		adj[y] = b.filled(gn.Name+"_seed", y, 1)
	}
	for _, n := range region {
		rule := gradRules[n.Op]
		if n.Domain != "" && n.Domain != "ai.onnx" {
			rule = nil
		}
		if rule == nil {
			return fmt.Errorf("%v: no derivative rule for node %q (%s), which lies between xs and y", gn, n.Name, n.Op)
		}
		dOut := make([]*ir.Value, len(n.Outputs))
		any := false
		for i, o := range n.Outputs {
			if o != nil {
				dOut[i] = adj[o]
				any = any || dOut[i] != nil
			}
		}
		if !any {
			continue
		}
		dIn := rule(b, n, dOut)
		if b.err != nil {
			return b.err
		}
		for i, d := range dIn {
			if v := n.Input(i); d != nil && v != nil && active[v] && !cut[v] {
				accumulate(v, d)
			}
		}
	}

	// Each output takes its gradient's node when nothing else reads that
	// value; otherwise (a constant, a forward value, a shared one) an
	// Identity defines it.
	uses := map[*ir.Value]int{}
	for _, n := range b.nodes {
		for _, v := range n.Inputs {
			uses[v]++
		}
	}
	taken := map[*ir.Value]*ir.Value{}
	for i, o := range gn.Outputs {
		x := gn.Inputs[i]
		d := adj[x]
		if d == nil {
			d = b.filled("d_"+x.Name+"_zero", x, 0)
		}
		if b.err != nil {
			return b.err
		}
		if o == nil {
			continue
		}
		if t := taken[d]; t != nil {
			d = t // a second output with the same gradient copies the first
		} else if b.made[d] && uses[d] == 0 {
			def := d.Def
			def.Outputs[0] = o
			def.Name = o.Name
			o.Def = def
			taken[d] = o
			continue
		}
		idn := &ir.Node{Name: o.Name, Op: "Identity", Inputs: []*ir.Value{d}, Outputs: []*ir.Value{o}}
		idn.Version, _ = onnxVersion(r.m, "Identity")
		o.Def = idn
		b.nodes = append(b.nodes, idn)
	}
	if b.err != nil {
		return b.err
	}
	i := slices.Index(r.g.Nodes, gn)
	r.g.Nodes = slices.Replace(r.g.Nodes, i, i+1, b.nodes...)
	return nil
}

// nonFloat reports whether t is known to hold no floating-point numbers.
func nonFloat(t ir.Type) bool {
	switch dt := t.ElemDType(); dt {
	case ir.Undefined, ir.F16, ir.BF16, ir.F32, ir.F64:
		return false
	}
	return true
}

// lookupValue finds the value called name visible in g (its inputs,
// constants, node outputs other than skip's, then the enclosing graphs').
func lookupValue(g *ir.Graph, name string, skip *ir.Node) *ir.Value {
	for ; g != nil; g = g.Parent {
		for _, v := range slices.Concat(g.Inputs, g.Consts) {
			if v.Name == name {
				return v
			}
		}
		for _, n := range g.Nodes {
			if n == skip {
				continue
			}
			for _, v := range n.Outputs {
				if v != nil && v.Name == name {
					return v
				}
			}
		}
	}
	return nil
}

// nodeReads is n's inputs and what its subgraphs capture.
func nodeReads(n *ir.Node) []*ir.Value {
	out := slices.Clone(n.Inputs)
	for _, a := range n.Attrs {
		if a.G != nil {
			out = append(out, a.G.Captures()...)
		}
		for _, s := range a.Graphs {
			out = append(out, s.Captures()...)
		}
	}
	return out
}

// sortNodes puts g's nodes back in topological order, keeping the present
// order where it already is one: the backward nodes sit where the
// Gradient node was, which may be before the forward nodes they read.
func sortNodes(g *ir.Graph) error {
	def := map[*ir.Value]*ir.Node{}
	for _, n := range g.Nodes {
		for _, v := range n.Outputs {
			if v != nil {
				def[v] = n
			}
		}
	}
	const (
		unseen = iota
		visiting
		done
	)
	state := map[*ir.Node]int{}
	out := make([]*ir.Node, 0, len(g.Nodes))
	var visit func(n *ir.Node) error
	visit = func(n *ir.Node) error {
		switch state[n] {
		case done:
			return nil
		case visiting:
			return fmt.Errorf("%v: the gradient makes the graph cyclic (y depends on a gradient output)", n)
		}
		state[n] = visiting
		for _, v := range nodeReads(n) {
			if p := def[v]; p != nil {
				if err := visit(p); err != nil {
					return err
				}
			}
		}
		state[n] = done
		out = append(out, n)
		return nil
	}
	for _, n := range g.Nodes {
		if err := visit(n); err != nil {
			return err
		}
	}
	g.Nodes = out
	return nil
}

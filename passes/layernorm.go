package passes

import "github.com/cuvil/cuvil/ir"

// FuseLayerNorm recognises layer normalisation over the last axis written
// out in elementwise ops (as PyTorch exports it before opset 17):
//
//	mean = ReduceMean(x, axes=[-1]); d = Sub(x, mean)
//	var = ReduceMean(Pow(d, 2), axes=[-1])
//	y = Add(Mul(Div(d, Sqrt(Add(var, eps))), gamma), beta)
//
// and replaces it by one cuvil::LayerNorm; when x is an Add that only the
// pattern reads (a residual connection), by cuvil::SkipLayerNorm of the
// Add's two inputs.
var FuseLayerNorm = &Pass{
	Name: "fuse-layernorm",
	Doc:  "replace ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/Add layer norms by cuvil::LayerNorm or SkipLayerNorm",
	Run: func(m *ir.Model) error {
		return forGraphs(m, func(g *ir.Graph) error {
			r := newRewriter(m, g)
			for _, n := range g.Nodes {
				at(m, n)
				if !r.dead[n] && isOp(n, "ReduceMean") {
					fuseLayerNormAt(r, n)
				}
			}
			r.sweep()
			return nil
		})
	},
}

// lastAxisMean reports whether n is ReduceMean over the last axis only,
// keeping dims.
func lastAxisMean(n *ir.Node) bool {
	if !isOp(n, "ReduceMean") || n.IntAttr("keepdims") != 1 || len(n.Inputs) < 1 || len(n.Inputs) > 2 {
		return false
	}
	axes := n.AttrInts("axes", nil)
	if len(n.Inputs) == 2 { // ReduceMean-18: constant axes input
		ax := n.Inputs[1]
		if ax == nil || !ax.IsConst() {
			return false
		}
		axes = ax.Const.Int64s()
	}
	rank := n.Inputs[0].Type.Rank()
	return len(axes) == 1 && (axes[0] == -1 || (rank > 0 && axes[0] == int64(rank-1)))
}

func fuseLayerNormAt(r *rewriter, mean *ir.Node) {
	if !lastAxisMean(mean) {
		return
	}
	x := mean.Inputs[0]
	if !x.Type.Known() || x.Type.Rank() < 1 {
		return
	}
	// Sub(x, mean), read by Pow and Div.
	sub := r.only(mean.Outputs[0])
	if !isOp(sub, "Sub") || sub.Inputs[0] != x || sub.Inputs[1] != mean.Outputs[0] {
		return
	}
	d := sub.Outputs[0]
	if r.outs[d] || len(r.uses[d]) != 2 {
		return
	}
	var pow, div *ir.Node
	for _, u := range r.uses[d] {
		switch {
		case isOp(u, "Pow") && u.Inputs[0] == d:
			pow = u
		case isOp(u, "Div") && u.Inputs[0] == d:
			div = u
		}
	}
	if pow == nil || div == nil {
		return
	}
	if e, ok := scalarConst(pow.Inputs[1]); !ok || e != 2 {
		return
	}
	vmean := r.only(pow.Outputs[0])
	if !lastAxisMean(vmean) {
		return
	}
	addEps := r.only(vmean.Outputs[0])
	if !isOp(addEps, "Add") {
		return
	}
	_, eps, ok := constOperand(addEps)
	if !ok || otherInput(addEps, vmean.Outputs[0]) == nil {
		return
	}
	sqrt := r.only(addEps.Outputs[0])
	if !isOp(sqrt, "Sqrt") || r.only(sqrt.Outputs[0]) != div || div.Inputs[1] != sqrt.Outputs[0] {
		return
	}
	// Mul by gamma, Add beta, both constant vectors over the last axis.
	inner := x.Type.Shape[x.Type.Rank()-1]
	if !inner.IsConst() {
		return
	}
	vec := func(n *ir.Node, v *ir.Value) *ir.Value {
		c := otherInput(n, v)
		if c == nil || !c.IsConst() || c.Const.NumElements() != inner.Size || c.Const.DType != x.Type.DType {
			return nil
		}
		if axis, _, ok := axisVector(c, x.Type.Rank()); !ok || (axis != x.Type.Rank()-1 && inner.Size != 1) {
			return nil
		}
		return c
	}
	mul := r.only(div.Outputs[0])
	if !isOp(mul, "Mul") {
		return
	}
	gamma := vec(mul, div.Outputs[0])
	if gamma == nil {
		return
	}
	eaten := []*ir.Node{mean, sub, pow, vmean, addEps, sqrt, div, mul}
	last := mul
	var beta *ir.Value
	if add := r.only(mul.Outputs[0]); isOp(add, "Add") {
		if beta = vec(add, mul.Outputs[0]); beta != nil {
			eaten = append(eaten, add)
			last = add
		}
	}
	y := last.Outputs[0]
	if !sameShape(x, y) {
		return
	}
	flat := func(c *ir.Value) *ir.Value {
		if c == nil || len(c.Const.Shape) == 1 {
			return c
		}
		return r.constant(c.Name+"_vec", &ir.Tensor{DType: c.Const.DType, Shape: []int64{inner.Size}, Raw: c.Const.Raw})
	}
	gamma, beta = flat(gamma), flat(beta)
	epsAttr := &ir.Attr{Name: "epsilon", Kind: ir.AttrFloat, F: float32(eps)}
	ln := &ir.Node{Name: mean.Name, Domain: ir.CuvilDomain, Version: ir.CuvilOpset, Outputs: []*ir.Value{y}}
	// x = Add(a, b) read only by the pattern: a SkipLayerNorm.
	skip := x.Def
	if isOp(skip, "Add") && !r.outs[x] && len(r.uses[x]) == 2 && sameShape(skip.Inputs[0], x) &&
		(sameShape(skip.Inputs[1], x) || skip.Inputs[1].Type.Known() && skip.Inputs[1].Type.Shape.Equal(ir.Shape{inner})) &&
		!skip.Inputs[0].IsConst() {
		ln.Op = "SkipLayerNorm"
		ln.Inputs = []*ir.Value{skip.Inputs[0], skip.Inputs[1], gamma}
		eaten = append(eaten, skip)
	} else {
		ln.Op = "LayerNorm"
		ln.Inputs = []*ir.Value{x, gamma}
		ln.Attrs = []*ir.Attr{{Name: "axis", Kind: ir.AttrInt, I: -1}}
	}
	if beta != nil {
		ln.Inputs = append(ln.Inputs, beta)
	}
	ln.SetAttr(epsAttr)
	y.Def = ln
	useCuvil(r.m)
	r.fuse(ln, last, eaten...)
}

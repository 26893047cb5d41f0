package passes

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cuvil/cuvil/ir"
)

// ConstFold replaces nodes whose results are known at compile time by
// constants, and an If whose condition is known by the branch it runs.
var ConstFold = &Pass{
	Name: "constfold",
	Doc:  "replace nodes computable at compile time (constant inputs, known shapes) by constants, an If of known condition by its branch",
	Run:  constFold,
}

// maxFoldElements bounds the size of a folded tensor: past it, folding
// would only move work from run time into the weights file. Shape-sized
// integer tensors are folded whatever the bound.
const maxFoldElements = 1 << 20

// maxFoldRounds bounds the fold/infer iterations; each round folds every
// chain it can in topological order, so two or three rounds are typical.
const maxFoldRounds = 16

// nonFoldable ops produce different values at each run.
var nonFoldable = map[string]bool{
	"RandomNormal": true, "RandomUniform": true, "RandomNormalLike": true,
	"RandomUniformLike": true, "Bernoulli": true, "Multinomial": true,
}

func constFold(m *ir.Model) error {
	for round := 0; round < maxFoldRounds; round++ {
		info, err := InferShapes(m)
		if err != nil {
			return err
		}
		folded := 0
		var ferr error
		m.Graph.Walk(func(g *ir.Graph) {
			if ferr == nil {
				var k int
				k, ferr = foldGraph(m, g, info)
				folded += k
			}
		})
		if ferr != nil {
			return ferr
		}
		if folded == 0 {
			return nil // types are current: this round's inference saw the final graph
		}
	}
	_, err := InferShapes(m)
	return err
}

// foldGraph folds the nodes of g it can, in order, so that a chain of
// foldable nodes collapses in one sweep. It returns how many it folded.
func foldGraph(m *ir.Model, g *ir.Graph, info *ShapeInfo) (int, error) {
	kept := g.Nodes[:0:0]
	folded := 0
	var r *rewriter
	for _, n := range g.Nodes {
		at(m, n)
		if branch := knownBranch(n, info); branch != nil {
			if r == nil {
				r = newRewriter(m, g)
			}
			nodes, err := inlineBranch(r, n, branch)
			if err != nil {
				return folded, fmt.Errorf("%v: %w", n, err)
			}
			kept = append(kept, nodes...)
			folded++
			continue
		}
		outs, err := foldNode(n, info)
		if err != nil {
			return folded, fmt.Errorf("%v: %w", n, err)
		}
		if outs == nil {
			kept = append(kept, n)
			continue
		}
		for i, o := range n.Outputs {
			if o == nil {
				continue
			}
			o.Const, o.Def, o.Type = outs[i], nil, outs[i].Type()
			g.Consts = append(g.Consts, o)
		}
		folded++
	}
	g.Nodes = kept
	return folded, nil
}

// knownBranch returns the branch an If runs when shape inference knows its
// condition (a constant, or a comparison of known sizes such as
// Equal(Size(x), 4)), else nil.
func knownBranch(n *ir.Node, info *ShapeInfo) *ir.Graph {
	if !isOp(n, "If") || len(n.Inputs) != 1 || n.Inputs[0] == nil {
		return nil
	}
	c := n.Inputs[0]
	var cond []int64
	if c.Const != nil && (c.Const.DType == ir.Bool || c.Const.DType.IsInt()) {
		cond = c.Const.Int64s()
	} else if d, ok := info.Values[c]; ok {
		cond, _ = ir.Shape(d).Consts()
	}
	if len(cond) != 1 {
		return nil
	}
	name := "else_branch"
	if cond[0] != 0 {
		name = "then_branch"
	}
	if a := n.Attr(name); a != nil && a.G != nil && len(a.G.Outputs) == len(n.Outputs) {
		return a.G
	}
	return nil
}

// inlineBranch returns the nodes that replace If n by the branch it runs:
// the branch's nodes (renamed after n, their constants moved to n's
// graph), then an Identity per output of n that gives it the branch's
// result (remove-identity drops them), so n's outputs keep their names and
// readers.
func inlineBranch(r *rewriter, n *ir.Node, b *ir.Graph) ([]*ir.Node, error) {
	ver, ok := onnxVersion(r.m, "Identity")
	if !ok {
		return nil, fmt.Errorf("Identity is not available at opset %d", r.m.Opset(""))
	}
	// The branch's names stay unless another scope uses them too (ONNX
	// forbids that, but a model may still do it).
	count := map[string]int{}
	r.m.Graph.Walk(func(s *ir.Graph) {
		for _, v := range s.Inputs {
			count[v.Name]++
		}
		for _, v := range s.Consts {
			count[v.Name]++
		}
		for _, nd := range s.Nodes {
			for _, v := range nd.Outputs {
				if v != nil {
					count[v.Name]++
				}
			}
		}
	})
	for _, c := range b.Consts {
		if count[c.Name] > 1 {
			c.Name = r.fresh(c.Name)
			if c.Const != nil {
				c.Const.Name = c.Name
			}
		}
		r.g.Consts = append(r.g.Consts, c)
	}
	var nodes []*ir.Node
	for _, nd := range b.Nodes {
		nd.Name = r.fresh(n.Name + "_" + nd.Name)
		for _, o := range nd.Outputs {
			if o != nil && count[o.Name] > 1 {
				o.Name = r.fresh(o.Name)
			}
		}
		for _, a := range nd.Attrs {
			if a.G != nil {
				a.G.Parent = r.g
			}
			for _, s := range a.Graphs {
				s.Parent = r.g
			}
		}
		nodes = append(nodes, nd)
	}
	for i, o := range n.Outputs {
		if o == nil {
			continue
		}
		id := &ir.Node{Name: r.fresh(n.Name + "_" + o.Name), Op: "Identity", Version: ver, Inputs: []*ir.Value{b.Outputs[i]}, Outputs: []*ir.Value{o}}
		o.Def = id
		nodes = append(nodes, id)
	}
	return nodes, nil
}

// foldNode returns the constant outputs of n, or nil when n stays.
func foldNode(n *ir.Node, info *ShapeInfo) ([]*ir.Tensor, error) {
	if n.Domain != "" && n.Domain != "ai.onnx" || nonFoldable[n.Op] || hasGraphAttr(n) {
		return nil, nil
	}
	for _, o := range n.Outputs {
		if o != nil && o.Type.Kind != ir.TensorKind {
			return nil, nil
		}
	}
	if n.Op == "Constant" {
		t, err := ConstantTensor(n)
		if err != nil {
			return nil, err
		}
		c := *t
		c.Name = n.Outputs[0].Name
		return []*ir.Tensor{&c}, nil
	}
	// Shape-like results that inference computed element by element,
	// whatever the inputs: Shape of a fully known shape, Gather(Shape(x), 0)
	// even when other dims of x are symbolic, and the arithmetic on them.
	if outs := trackedConsts(n, info); outs != nil {
		return outs, nil
	}
	inputs := make([]*ir.Tensor, len(n.Inputs))
	present := 0
	var inElems int64
	for i, v := range n.Inputs {
		if v == nil {
			continue
		}
		if v.Const == nil {
			return nil, nil
		}
		inputs[i] = v.Const
		inElems += v.Const.NumElements()
		present++
	}
	if present == 0 || !worthFolding(n, inElems) {
		return nil, nil
	}
	outs, err := Eval(n, inputs)
	if errors.Is(err, errNoKernel) {
		return nil, nil
	}
	if err != nil {
		// The kernel rejects these constants; the same call would fail at
		// run time, where the generated code reports it. Leave the node.
		return nil, nil
	}
	for i, o := range n.Outputs {
		if o == nil {
			continue
		}
		if err := agrees(outs[i], o.Type); err != nil {
			return nil, fmt.Errorf("folded output %d (%s): %w", i, o.Name, err)
		}
		if outs[i].NumElements() > maxFoldElements && !shapeSized(outs[i].Type()) {
			return nil, nil
		}
	}
	return outs, nil
}

func hasGraphAttr(n *ir.Node) bool {
	for _, a := range n.Attrs {
		if a.G != nil || len(a.Graphs) > 0 {
			return true
		}
	}
	return false
}

// worthFolding decides from the inferred output types (and the input size
// when they are not fully known) whether folding n stays within bounds.
func worthFolding(n *ir.Node, inElems int64) bool {
	var total int64
	for _, o := range n.Outputs {
		if o == nil {
			continue
		}
		if shapeSized(o.Type) {
			continue
		}
		k, ok := o.Type.Shape.NumElements()
		if o.Type.Unranked || !ok {
			// Size unknown until evaluated: the result is checked after.
			k = inElems
		}
		total += k
	}
	return total <= maxFoldElements
}

// shapeSized reports whether t looks like a shape or index tensor: integer,
// rank <= 1, small.
func shapeSized(t ir.Type) bool {
	if !t.DType.IsInt() || t.Unranked || len(t.Shape) > 1 {
		return false
	}
	k, ok := t.Shape.NumElements()
	return ok && k <= maxTracked
}

// agrees checks a folded tensor against the type inference gave its value:
// they must agree on dtype, rank and every constant dim.
func agrees(t *ir.Tensor, want ir.Type) error {
	if want.DType != t.DType {
		return fmt.Errorf("kernel gave %s, shape inference says %s", t.Type(), want)
	}
	if want.Unranked {
		return nil
	}
	if len(want.Shape) != len(t.Shape) {
		return fmt.Errorf("kernel gave %s, shape inference says %s", t.Type(), want)
	}
	for i, d := range want.Shape {
		if d.IsConst() && d.Size != t.Shape[i] {
			return fmt.Errorf("kernel gave %s, shape inference says %s", t.Type(), want)
		}
	}
	return nil
}

// trackedConsts builds the outputs of n from shape inference's tracked
// contents when all of them are known constants.
func trackedConsts(n *ir.Node, info *ShapeInfo) []*ir.Tensor {
	outs := make([]*ir.Tensor, len(n.Outputs))
	any := false
	for i, o := range n.Outputs {
		if o == nil {
			continue
		}
		d, ok := info.Values[o]
		if !ok {
			return nil
		}
		vals, ok := ir.Shape(d).Consts()
		if !ok {
			return nil
		}
		shape, ok := o.Type.Shape.Consts()
		if !ok || o.Type.Unranked || !trackable(o.Type.DType) {
			return nil
		}
		t := intTensor(o.Type.DType, shape, vals)
		if t == nil || t.NumElements() != int64(len(vals)) {
			return nil
		}
		t.Name = o.Name
		outs[i] = t
		any = true
	}
	if !any {
		return nil
	}
	return outs
}

// intTensor packs integer values into a tensor of an integer dtype, or
// 0/1 values into a bool tensor.
func intTensor(dt ir.DType, shape, vals []int64) *ir.Tensor {
	size := dt.Size()
	if !trackable(dt) || size == 0 {
		return nil
	}
	raw := make([]byte, size*len(vals))
	for i, v := range vals {
		switch size {
		case 1:
			raw[i] = byte(v)
		case 2:
			binary.LittleEndian.PutUint16(raw[2*i:], uint16(v))
		case 4:
			binary.LittleEndian.PutUint32(raw[4*i:], uint32(v))
		case 8:
			binary.LittleEndian.PutUint64(raw[8*i:], uint64(v))
		}
	}
	return &ir.Tensor{DType: dt, Shape: append([]int64{}, shape...), Raw: raw}
}

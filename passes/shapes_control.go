package passes

import (
	"fmt"

	"github.com/cuvil/cuvil/ir"
)

func init() {
	reg(inferIf, "If")
	reg(inferLoop, "Loop")
	reg(inferScan, "Scan")
	reg(inferSequenceConstruct, "SequenceConstruct")
	reg(inferSequenceEmpty, "SequenceEmpty")
	reg(inferSequenceAt, "SequenceAt")
	reg(inferSequenceInsert, "SequenceInsert", "SequenceErase")
	reg(inferSequenceLength, "SequenceLength")
	reg(inferSplitToSequence, "SplitToSequence")
	reg(inferConcatFromSequence, "ConcatFromSequence")
}

// subgraph infers a body graph, then restores the current node (fresh
// symbols are named after it).
func (x *inferer) subgraph(n *ir.Node, g *ir.Graph) error {
	attr := "?"
	for _, a := range n.Attrs {
		if a.G == g {
			attr = a.Name
		}
		for _, h := range a.Graphs {
			if h == g {
				attr = a.Name
			}
		}
	}
	x.chain = append(x.chain, fmt.Sprintf("%v.%s", n, attr))
	err := x.graph(g)
	x.chain = x.chain[:len(x.chain)-1]
	at(x.m, n)
	x.node = n
	return err
}

func graphAttr(n *ir.Node, name string) (*ir.Graph, error) {
	a := n.Attr(name)
	if a == nil || a.G == nil {
		return nil, fmt.Errorf("graph attribute %s is missing", name)
	}
	return a.G, nil
}

// mergeTypes joins the types two control-flow paths give one value: equal
// dims stay, different ones become fresh symbols, different ranks unranked.
func (x *inferer) mergeTypes(a, b ir.Type) ir.Type {
	if a.Equal(b) {
		return a.Clone()
	}
	if a.Kind != b.Kind {
		// An optional and a value of its element type (a Loop-carried
		// optional the body returns unwrapped) merge to an optional.
		if a.Kind == ir.OptionalKind && a.Elem != nil && a.Elem.Kind == b.Kind {
			e := x.mergeTypes(*a.Elem, b)
			return ir.Type{Kind: ir.OptionalKind, Elem: &e}
		}
		if b.Kind == ir.OptionalKind && b.Elem != nil && b.Elem.Kind == a.Kind {
			e := x.mergeTypes(a, *b.Elem)
			return ir.Type{Kind: ir.OptionalKind, Elem: &e}
		}
		return ir.Type{Unranked: true}
	}
	if a.Kind != ir.TensorKind {
		if a.Elem == nil || b.Elem == nil {
			return ir.Type{Kind: a.Kind, DType: a.DType}
		}
		e := x.mergeTypes(*a.Elem, *b.Elem)
		return ir.Type{Kind: a.Kind, DType: a.DType, Elem: &e}
	}
	// A path that does not know the dtype takes the other's: both must
	// agree at run time.
	dt := a.DType
	switch {
	case dt == ir.Undefined:
		dt = b.DType
	case b.DType != ir.Undefined && dt != b.DType:
		dt = ir.Undefined
	}
	if a.Unranked || b.Unranked || len(a.Shape) != len(b.Shape) {
		return ir.Type{DType: dt, Unranked: true}
	}
	s := make(ir.Shape, len(a.Shape))
	for i := range s {
		if a.Shape[i] == b.Shape[i] {
			s[i] = a.Shape[i]
		} else {
			s[i] = x.freshDim("")
		}
	}
	return ir.TensorType(dt, s)
}

func inferIf(x *inferer, n *ir.Node) error {
	if _, err := x.in(n, 0); err != nil {
		return err
	}
	then, err := graphAttr(n, "then_branch")
	if err != nil {
		return err
	}
	els, err := graphAttr(n, "else_branch")
	if err != nil {
		return err
	}
	if len(then.Outputs) != len(n.Outputs) || len(els.Outputs) != len(n.Outputs) {
		return fmt.Errorf("branches have %d and %d outputs, node has %d", len(then.Outputs), len(els.Outputs), len(n.Outputs))
	}
	// A known condition picks one branch's types exactly. The other
	// branch never runs (constfold removes it): an error there, such as
	// the shape arithmetic of an expanded function's case for other
	// inputs, does not stop inference.
	if c, ok := x.ints(n.Inputs[0]); ok && len(c) == 1 {
		pick, dead := els, then
		if c[0] != 0 {
			pick, dead = then, els
		}
		if err := x.subgraph(n, pick); err != nil {
			return err
		}
		_ = x.subgraph(n, dead)
		for i, o := range n.Outputs {
			x.set(o, pick.Outputs[i].Type.Clone())
		}
		return nil
	}
	if err := x.subgraph(n, then); err != nil {
		return err
	}
	if err := x.subgraph(n, els); err != nil {
		return err
	}
	for i, o := range n.Outputs {
		t := x.mergeTypes(then.Outputs[i].Type, els.Outputs[i].Type)
		x.set(o, t)
		// A branch output whose dtype only the other branch (or the
		// declaration) knows gets it too.
		for _, b := range []*ir.Value{then.Outputs[i], els.Outputs[i]} {
			if b.Def != nil && b.Type.Kind == ir.TensorKind && b.Type.DType == ir.Undefined && o.Type.Kind == ir.TensorKind {
				b.Type.DType = o.Type.DType
			}
		}
	}
	return nil
}

func inferLoop(x *inferer, n *ir.Node) error {
	body, err := graphAttr(n, "body")
	if err != nil {
		return err
	}
	nCarried := len(n.Inputs) - 2
	if nCarried < 0 {
		return fmt.Errorf("has %d inputs, want at least 2 (M, cond)", len(n.Inputs))
	}
	if len(body.Inputs) != nCarried+2 {
		return fmt.Errorf("body has %d inputs, want %d (iteration, condition and %d carried)", len(body.Inputs), nCarried+2, nCarried)
	}
	nScan := len(body.Outputs) - 1 - nCarried
	if nScan < 0 || len(n.Outputs) != nCarried+nScan {
		return fmt.Errorf("body has %d outputs and the node %d, with %d carried values", len(body.Outputs), len(n.Outputs), nCarried)
	}
	x.set(body.Inputs[0], ir.TensorType(ir.I64, ir.Shape{}))
	x.set(body.Inputs[1], ir.TensorType(ir.Bool, ir.Shape{}))
	for i := 0; i < nCarried; i++ {
		v := n.Inputs[2+i]
		if v == nil {
			return fmt.Errorf("loop-carried input %d is missing", i)
		}
		x.set(body.Inputs[2+i], v.Type.Clone())
	}
	if err := x.subgraph(n, body); err != nil {
		return err
	}
	// A carried value whose type changes across iterations: widen the body
	// input to the merged type and infer the body again.
	changed := false
	for i := 0; i < nCarried; i++ {
		in, out := body.Inputs[2+i].Type, body.Outputs[1+i].Type
		if !in.Equal(out) {
			body.Inputs[2+i].Type = x.mergeTypes(in, out)
			changed = true
		}
	}
	if changed {
		if err := x.subgraph(n, body); err != nil {
			return err
		}
	}
	for i := 0; i < nCarried; i++ {
		t := body.Inputs[2+i].Type
		if out := body.Outputs[1+i].Type; t.Kind == ir.OptionalKind && t.Elem != nil && out.Kind == t.Elem.Kind {
			// An optional initial value the body turns into its element
			// (loop16_seq_none): after an iteration the output is what the
			// body produced, as ONNX infers it.
			t = out
		}
		x.set(n.Outputs[i], t.Clone())
	}
	var trips ir.Dim
	if m, ok := x.ints(n.Input(0)); ok && len(m) == 1 && n.Input(1) == nil {
		trips = ir.D(m[0]) // no condition: exactly M iterations
	} else {
		trips = x.freshDim("trips(" + n.Name + ")")
	}
	for k := 0; k < nScan; k++ {
		t := body.Outputs[1+nCarried+k].Type
		if t.Kind != ir.TensorKind || t.Unranked {
			x.set(n.Outputs[nCarried+k], ir.Type{DType: t.DType, Unranked: true})
			continue
		}
		x.set(n.Outputs[nCarried+k], ir.TensorType(t.DType, append(ir.Shape{trips}, t.Shape...)))
	}
	return nil
}

func inferScan(x *inferer, n *ir.Node) error {
	if n.Version > 0 && n.Version < 9 {
		return inferScan8(x, n) // shapes_seq.go
	}
	body, err := graphAttr(n, "body")
	if err != nil {
		return err
	}
	m := int(n.IntAttr("num_scan_inputs"))
	nState := len(n.Inputs) - m
	if m <= 0 || nState < 0 || len(body.Inputs) != len(n.Inputs) {
		return fmt.Errorf("num_scan_inputs %d does not fit %d inputs and a body with %d", m, len(n.Inputs), len(body.Inputs))
	}
	inAxes := n.AttrInts("scan_input_axes", make([]int64, m))
	var seq ir.Dim
	for i := 0; i < len(n.Inputs); i++ {
		t, err := x.in(n, i)
		if err != nil {
			return err
		}
		if i < nState {
			x.set(body.Inputs[i], t.Clone())
			continue
		}
		ax, err := normAxis(inAxes[i-nState], len(t.Shape))
		if err != nil {
			return fmt.Errorf("scan input %d: %w", i-nState, err)
		}
		if i == nState {
			seq = t.Shape[ax]
		}
		s := append(cloneShape(t.Shape[:ax]), t.Shape[ax+1:]...)
		x.set(body.Inputs[i], ir.TensorType(t.DType, s))
	}
	if err := x.subgraph(n, body); err != nil {
		return err
	}
	k := len(body.Outputs) - nState
	if k < 0 || len(n.Outputs) != len(body.Outputs) {
		return fmt.Errorf("body has %d outputs, node has %d", len(body.Outputs), len(n.Outputs))
	}
	outAxes := n.AttrInts("scan_output_axes", make([]int64, k))
	for i, o := range n.Outputs {
		t := body.Outputs[i].Type
		if i < nState {
			x.set(o, t.Clone())
			continue
		}
		if t.Unranked {
			x.set(o, ir.Type{DType: t.DType, Unranked: true})
			continue
		}
		ax, err := normAxis(outAxes[i-nState], len(t.Shape)+1)
		if err != nil {
			return fmt.Errorf("scan output %d: %w", i-nState, err)
		}
		s := append(append(cloneShape(t.Shape[:ax]), seq), t.Shape[ax:]...)
		x.set(o, ir.TensorType(t.DType, s))
	}
	return nil
}

func seqOf(e ir.Type) ir.Type { return ir.Type{Kind: ir.SequenceKind, Elem: &e} }

func inferSequenceConstruct(x *inferer, n *ir.Node) error {
	if len(n.Inputs) == 0 {
		return fmt.Errorf("no inputs")
	}
	e := n.Inputs[0].Type
	for _, v := range n.Inputs[1:] {
		e = x.mergeTypes(e, v.Type)
	}
	x.set(n.Outputs[0], seqOf(e))
	return nil
}

func inferSequenceEmpty(x *inferer, n *ir.Node) error {
	dt, err := attrDType(n, "dtype", ir.F32)
	if err != nil {
		return err
	}
	x.set(n.Outputs[0], seqOf(ir.Type{DType: dt, Unranked: true}))
	return nil
}

func seqInput(n *ir.Node, i int) (ir.Type, error) {
	v := n.Input(i)
	if v == nil || v.Type.Kind != ir.SequenceKind || v.Type.Elem == nil {
		return ir.Type{}, fmt.Errorf("input %d is not a sequence of known type", i)
	}
	return *v.Type.Elem, nil
}

func inferSequenceAt(x *inferer, n *ir.Node) error {
	e, err := seqInput(n, 0)
	if err != nil {
		return err
	}
	x.set(n.Outputs[0], e.Clone())
	return nil
}

func inferSequenceInsert(x *inferer, n *ir.Node) error {
	e, err := seqInput(n, 0)
	if err != nil {
		return err
	}
	if n.Op == "SequenceInsert" {
		if e.Unranked && n.Input(1) != nil {
			e = ir.Type{DType: e.DType, Unranked: true}
		} else if v := n.Input(1); v != nil {
			e = x.mergeTypes(e, v.Type)
		}
	}
	x.set(n.Outputs[0], seqOf(e))
	return nil
}

func inferSequenceLength(x *inferer, n *ir.Node) error {
	x.setOut(n, 0, ir.I64, ir.Shape{})
	return nil
}

func inferSplitToSequence(x *inferer, n *ir.Node) error {
	t, err := x.in(n, 0)
	if err != nil {
		return err
	}
	axis, err := normAxis(n.IntAttr("axis"), len(t.Shape))
	if err != nil {
		return err
	}
	s := cloneShape(t.Shape)
	if n.Input(1) == nil {
		if n.IntAttr("keepdims") != 0 {
			s[axis] = ir.D(1)
		} else {
			s = append(s[:axis], s[axis+1:]...)
		}
	} else if sp, ok := x.ints(n.Input(1)); ok && len(sp) == 1 && n.Inputs[1].Type.Rank() == 0 {
		s[axis] = ir.D(sp[0])
	} else {
		s[axis] = x.freshDim("")
	}
	x.set(n.Outputs[0], seqOf(ir.TensorType(t.DType, s)))
	return nil
}

func inferConcatFromSequence(x *inferer, n *ir.Node) error {
	e, err := seqInput(n, 0)
	if err != nil {
		return err
	}
	if e.Unranked {
		x.set(n.Outputs[0], ir.Type{DType: e.DType, Unranked: true})
		return nil
	}
	newAxis := n.IntAttr("new_axis") != 0
	r := len(e.Shape)
	if newAxis {
		r++
	}
	axis, err := normAxis(n.IntAttr("axis"), r)
	if err != nil {
		return err
	}
	s := cloneShape(e.Shape)
	if newAxis {
		s = append(s[:axis], append(ir.Shape{x.freshDim("")}, s[axis:]...)...)
	} else {
		s[axis] = x.freshDim("")
	}
	x.setOut(n, 0, e.DType, s)
	return nil
}

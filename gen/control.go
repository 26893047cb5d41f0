package gen

import (
	"fmt"
	"strings"

	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/templates"

	"github.com/dave/jennifer/jen"
)

// Control flow is generated as Go control flow. Each subgraph (an If
// branch, a Loop or Scan body) becomes a Session method whose body is the
// straight-line kernel calls of its nodes; the If, Loop or Scan node
// itself becomes Go code at its place in Run (or in the enclosing body's
// method): an if statement on the condition tensor, a for loop that runs
// the body and moves the carried values from its outputs to its inputs.
// Values of subgraphs are Session tensors like the others, outside the
// memory plan: each is grown by its first writer and then reused, so
// iterations do not allocate (beyond the growth of stacked scan outputs).
// Captured outer values are read in place.

// ctrlBody is one subgraph lowered to a Session method.
type ctrlBody struct {
	g      *ir.Graph
	method string
	nodes  []*ir.Node // in order: kernel nodes and nested control nodes
}

func isControl(n *ir.Node) bool {
	return n.Domain == "" && (n.Op == "If" || n.Op == "Loop" || n.Op == "Scan" || n.Op == "SequenceMap")
}

// lowerNodes lowers the nodes of g (the main graph or a subgraph) and
// returns those that run, in order.
func (c *compiled) lowerNodes(m *ir.Model, lib *library, g *ir.Graph, isInput map[*ir.Value]bool) ([]*ir.Node, error) {
	addConst := func(v *ir.Value, t *ir.Tensor) {
		if _, ok := c.constIndex[v]; ok {
			return
		}
		c.constIndex[v] = len(c.constTensors)
		c.constTensors = append(c.constTensors, t)
	}
	for _, v := range g.Consts {
		if v.Const != nil && g != c.g {
			addConst(v, v.Const)
		}
	}
	var run []*ir.Node
	for _, n := range g.Nodes {
		where := fmt.Sprintf("node %q (%s, domain %s, opset %d)", n.Name, n.Op, domainName(n.Domain), m.Opset(n.Domain))
		if n.Domain == "" && n.Op == "Constant" {
			t, err := constantValue(n)
			if err != nil {
				return nil, fmt.Errorf("gen: %s: %v", where, err)
			}
			if len(n.Outputs) != 1 || n.Outputs[0] == nil {
				return nil, fmt.Errorf("gen: %s: want one output", where)
			}
			addConst(n.Outputs[0], t)
			continue
		}
		for i, v := range n.Inputs {
			if v == nil || v.Def != nil || isInput[v] {
				continue
			}
			if _, ok := c.constIndex[v]; ok {
				continue
			}
			if _, ok := c.valIndex[v]; ok {
				continue // an input of an enclosing subgraph
			}
			if v.Const == nil {
				return nil, fmt.Errorf("gen: %s: input %d (%q) is neither computed, a graph input nor a constant", where, i, v.Name)
			}
			addConst(v, v.Const)
		}
		if isControl(n) {
			if err := c.lowerControl(m, lib, n, where, isInput); err != nil {
				return nil, err
			}
			run = append(run, n)
			continue
		}
		for _, a := range n.Attrs {
			if a.Kind == ir.AttrGraph || a.Kind == ir.AttrGraphs {
				return nil, fmt.Errorf("gen: %s: subgraphs of this op are not supported", where)
			}
		}
		key := n.Op
		if n.Domain != "" && n.Domain != "ai.onnx" {
			key = n.Domain + "::" + n.Op
		}
		fn, ok := lib.kernelFunc(key, n.Op)
		if key == "Identity" && len(n.Inputs) > 0 && n.Inputs[0] != nil && n.Inputs[0].Type.Kind != ir.TensorKind {
			fn, ok = "IdentityValue", true
		}
		if !ok {
			if _, registered := templates.Kernels[key]; registered {
				return nil, fmt.Errorf("gen: %s: its kernel is not a top-level function of templates/", where)
			}
			var err error
			if fn, err = c.customKernel(where, n); err != nil { // customop.go
				return nil, err
			}
		}
		for _, a := range n.Attrs {
			switch a.Kind {
			case ir.AttrTensor:
				if a.T == nil {
					return nil, fmt.Errorf("gen: %s: tensor attribute %q is empty", where, a.Name)
				}
				if _, ok := c.tensorIndex[a.T]; !ok {
					c.tensorIndex[a.T] = len(c.constTensors)
					c.constTensors = append(c.constTensors, a.T)
				}
			case ir.AttrTypeProto:
				// Optional's type: the session gives the output its
				// element dtype instead (see NewSession).
				if n.Op != "Optional" {
					return nil, fmt.Errorf("gen: %s: attribute %q of kind %s is not supported", where, a.Name, a.Kind)
				}
			case ir.AttrTensors, ir.AttrTypeProtos, ir.AttrUndefined:
				return nil, fmt.Errorf("gen: %s: attribute %q of kind %s is not supported", where, a.Name, a.Kind)
			}
		}
		c.nodeIndex[n] = len(c.nodes)
		c.nodes = append(c.nodes, loweredNode{n: n, fn: fn})
		run = append(run, n)
	}
	return run, nil
}

// addValue gives v a Session tensor outside the memory plan.
func (c *compiled) addValue(v *ir.Value) {
	if v == nil {
		return
	}
	if _, ok := c.valIndex[v]; ok {
		return
	}
	c.valIndex[v] = len(c.values)
	c.values = append(c.values, v)
}

// tempKey names a temporary of a control node.
type tempKey struct {
	n    *ir.Node
	name string
}

// temp returns the Session tensor named name that the code of control
// node n uses for itself, creating it on first use. Lowering creates every
// temp (see lowerTemps) so that the Session's size is known before any
// code is emitted.
func (c *compiled) temp(n *ir.Node, name string, t ir.Type) *ir.Value {
	k := tempKey{n, name}
	if v, ok := c.temps[k]; ok {
		return v
	}
	v := &ir.Value{Name: n.Name + "." + name, Type: t}
	c.temps[k] = v
	c.addValue(v)
	return v
}

// lowerTemps creates the temporaries a control node's code needs, by
// emitting it once into a scratch group.
func (c *compiled) lowerTemps(n *ir.Node) {
	e := &emitter{c: c, fail: func(err jen.Code) jen.Code { return jen.Return(err) }}
	jen.BlockFunc(func(g *jen.Group) {
		switch n.Op {
		case "Loop":
			e.emitLoop(g, n)
		case "Scan":
			e.emitScan(g, n)
		}
	})
}

// lowerControl checks an If, Loop or Scan node and lowers its subgraphs.
func (c *compiled) lowerControl(m *ir.Model, lib *library, n *ir.Node, where string, isInput map[*ir.Value]bool) error {
	var names []string
	switch n.Op {
	case "If":
		names = []string{"then_branch", "else_branch"}
	default:
		names = []string{"body"}
	}
	for _, a := range n.Attrs {
		if a.Kind == ir.AttrGraphs {
			return fmt.Errorf("gen: %s: attribute %q holds a list of graphs", where, a.Name)
		}
	}
	for _, name := range names {
		a := n.Attr(name)
		if a == nil || a.G == nil {
			return fmt.Errorf("gen: %s: graph attribute %s is missing", where, name)
		}
		body := a.G
		for _, v := range body.Inputs {
			c.addValue(v)
		}
		run, err := c.lowerNodes(m, lib, body, isInput)
		if err != nil {
			return err
		}
		for _, sub := range run {
			for _, v := range sub.Outputs {
				c.addValue(v)
			}
		}
		for _, v := range body.Outputs {
			if v == nil {
				return fmt.Errorf("gen: %s: %s has a nil output", where, name)
			}
			if v.Def == nil && v.Const != nil {
				if _, ok := c.constIndex[v]; !ok {
					c.constIndex[v] = len(c.constTensors)
					c.constTensors = append(c.constTensors, v.Const)
				}
			}
		}
		b := &ctrlBody{g: body, method: fmt.Sprintf("cuvilBody%d", len(c.bodies)), nodes: run}
		c.bodies = append(c.bodies, b)
		c.bodyOf[body] = b
	}
	switch n.Op {
	case "If":
		then, els := n.Attr("then_branch").G, n.Attr("else_branch").G
		if len(n.Inputs) < 1 || n.Inputs[0] == nil {
			return fmt.Errorf("gen: %s: condition is missing", where)
		}
		if len(then.Outputs) != len(n.Outputs) || len(els.Outputs) != len(n.Outputs) {
			return fmt.Errorf("gen: %s: branches have %d and %d outputs, the node %d", where, len(then.Outputs), len(els.Outputs), len(n.Outputs))
		}
	case "Loop":
		body := n.Attr("body").G
		nCarried := len(n.Inputs) - 2
		if nCarried < 0 || len(body.Inputs) != nCarried+2 || len(body.Outputs) < nCarried+1 || len(n.Outputs) != len(body.Outputs)-1 {
			return fmt.Errorf("gen: %s: body has %d inputs and %d outputs, which do not fit %d inputs and %d outputs", where, len(body.Inputs), len(body.Outputs), len(n.Inputs), len(n.Outputs))
		}
		for i := 0; i < nCarried; i++ {
			if n.Inputs[2+i] == nil {
				return fmt.Errorf("gen: %s: loop-carried input %d is missing", where, i)
			}
		}
	case "Scan":
		body := n.Attr("body").G
		first := 0
		if n.Version < 9 {
			first = 1
			if n.Input(0) != nil {
				return fmt.Errorf("gen: %s: Scan-8's sequence_lens input is not supported", where)
			}
		}
		nScanIn := int(n.AttrInt("num_scan_inputs", 0))
		nState := len(n.Inputs) - first - nScanIn
		if nScanIn <= 0 || nState < 0 || len(body.Inputs) != nState+nScanIn || len(body.Outputs) != len(n.Outputs) || len(n.Outputs) < nState {
			return fmt.Errorf("gen: %s: num_scan_inputs %d does not fit %d inputs and a body with %d inputs, %d outputs", where, nScanIn, len(n.Inputs), len(body.Inputs), len(body.Outputs))
		}
		for i := first; i < len(n.Inputs); i++ {
			if n.Inputs[i] == nil {
				return fmt.Errorf("gen: %s: input %d is missing", where, i)
			}
		}
		for i := nState; i < len(body.Outputs); i++ {
			if body.Outputs[i].Type.Unranked || body.Outputs[i].Type.Kind != ir.TensorKind {
				return fmt.Errorf("gen: %s: scan output %d has type %s, want a ranked tensor", where, i-nState, body.Outputs[i].Type)
			}
		}
		for i := first + nState; i < len(n.Inputs); i++ {
			if n.Inputs[i].Type.Unranked || n.Inputs[i].Type.Kind != ir.TensorKind {
				return fmt.Errorf("gen: %s: scan input %d has type %s, want a ranked tensor", where, i-first-nState, n.Inputs[i].Type)
			}
		}
	case "SequenceMap":
		body := n.Attr("body").G
		if len(n.Inputs) < 1 || len(body.Inputs) != len(n.Inputs) || len(body.Outputs) != len(n.Outputs) {
			return fmt.Errorf("gen: %s: body has %d inputs and %d outputs, which do not fit %d inputs and %d outputs", where, len(body.Inputs), len(body.Outputs), len(n.Inputs), len(n.Outputs))
		}
		for i, v := range n.Inputs {
			if v == nil {
				return fmt.Errorf("gen: %s: input %d is missing", where, i)
			}
		}
		if n.Inputs[0].Type.Kind != ir.SequenceKind {
			return fmt.Errorf("gen: %s: input_sequence has type %s, want a sequence", where, n.Inputs[0].Type)
		}
	}
	c.lowerTemps(n)
	return nil
}

// emitter writes the code of one graph's nodes inside a Session method.
type emitter struct {
	c    *compiled
	fail func(err jen.Code) jen.Code // the statement that returns err
	// mark emits s.prof.Mark(i) after the i-th node (the main graph's
	// nodes, for the per-node profiler) and the cancellation check.
	mark bool
	base int // the index of the first node given to nodes, for Mark
}

func (e *emitter) ref(v *ir.Value) jen.Code { return e.c.sessionRef(v) }

// check emits `if err := call; err != nil { fail }`.
func (e *emitter) check(g *jen.Group, call jen.Code) {
	g.If(jen.Err().Op(":=").Add(call), jen.Err().Op("!=").Nil()).Block(e.fail(jen.Err()))
}

// checkNode is check with the error wrapped to name the node.
func (e *emitter) checkNode(g *jen.Group, n *ir.Node, call jen.Code) {
	g.If(jen.Err().Op(":=").Add(call), jen.Err().Op("!=").Nil()).Block(
		e.fail(jen.Qual("fmt", "Errorf").Call(jen.Lit(fmt.Sprintf("node %q (%s): %%w", n.Name, n.Op)), jen.Err())),
	)
}

// nodes emits the code of a graph's nodes, in order.
func (e *emitter) nodes(g *jen.Group, nodes []*ir.Node) {
	for k, n := range nodes {
		g.Line()
		lines := []string{fmt.Sprintf("%s: %s(%s) -> %s", n.Name, n.Op, valueNames(n.Inputs), valueNames(n.Outputs))}
		if len(n.Fused) > 0 {
			// The fused group: the imported nodes this one stands for.
			var fused []string
			for _, o := range n.Fused {
				fused = append(fused, o.Op+" "+o.Name)
			}
			lines = append(lines, "fuses "+strings.Join(fused, ", "))
		}
		g.Add(lineComment(lines...))
		if e.mark {
			g.Id("s").Dot("at").Op("=").Lit(fmt.Sprintf("node %q (%s)", n.Name, n.Op))
		}
		switch {
		case n.Op == "If" && isControl(n):
			e.emitIf(g, n)
		case n.Op == "Loop" && isControl(n):
			e.emitLoop(g, n)
		case n.Op == "Scan" && isControl(n):
			e.emitScan(g, n)
		case n.Op == "SequenceMap" && isControl(n):
			e.emitSequenceMap(g, n)
		default:
			i := e.c.nodeIndex[n]
			e.check(g, jen.Id(e.c.nodes[i].fn).Call(jen.Op("&").Id("s").Dot("nodes").Index(jen.Lit(i))))
		}
		if e.mark {
			g.Id("s").Dot("prof").Dot("Mark").Call(jen.Lit(e.base + k))
			g.If(jen.Id("s").Dot("pool").Dot("Cancelled").Call()).Block(e.fail(jen.Id("errCancelled")))
		}
	}
}

func (e *emitter) callBody(g *jen.Group, body *ir.Graph) {
	e.check(g, jen.Id("s").Dot(e.c.bodyOf[body].method).Call())
}

func copyValue(dst, src jen.Code) jen.Code { return jen.Id("CopyValue").Call(dst, src) }

func (e *emitter) emitIf(g *jen.Group, n *ir.Node) {
	then, els := n.Attr("then_branch").G, n.Attr("else_branch").G
	branch := func(body *ir.Graph) []jen.Code {
		var out []jen.Code
		grp := jen.BlockFunc(func(b *jen.Group) {
			e.callBody(b, body)
			for i, o := range n.Outputs {
				if o != nil {
					b.Add(copyValue(e.ref(o), e.ref(body.Outputs[i])))
				}
			}
		})
		return append(out, grp)
	}
	g.BlockFunc(func(b *jen.Group) {
		b.List(jen.Id("cond"), jen.Err()).Op(":=").Id("ScalarBool").Call(e.ref(n.Inputs[0]))
		b.If(jen.Err().Op("!=").Nil()).Block(e.fail(jen.Qual("fmt", "Errorf").Call(jen.Lit(fmt.Sprintf("node %q (If): condition: %%w", n.Name)), jen.Err())))
		b.If(jen.Id("cond")).Add(branch(then)...).Else().Add(branch(els)...)
	})
}

// carry emits the moves of a body's outputs into its inputs for the next
// iteration (dst[i] <- src[i]). A source that is itself one of the
// destinations goes through a temporary first, so that swaps work.
func (e *emitter) carry(g *jen.Group, n *ir.Node, dst, src []*ir.Value) {
	isDst := map[*ir.Value]bool{}
	for _, v := range dst {
		isDst[v] = true
	}
	temps := map[int]*ir.Value{}
	for i := range dst {
		if src[i] != dst[i] && isDst[src[i]] {
			temps[i] = e.c.temp(n, fmt.Sprintf("carry%d", i), src[i].Type)
			g.Add(copyValue(e.ref(temps[i]), e.ref(src[i])))
		}
	}
	for i := range dst {
		if _, ok := temps[i]; !ok && src[i] != dst[i] {
			g.Add(copyValue(e.ref(dst[i]), e.ref(src[i])))
		}
	}
	for i := range dst {
		if t, ok := temps[i]; ok {
			g.Add(copyValue(e.ref(dst[i]), e.ref(t)))
		}
	}
}

// emptyStacked emits the resize of a stacked output to zero slices (a loop
// that ran no iteration), its slice shape taken from the body's type where
// known (unknown dims become 0).
func (e *emitter) emptyStacked(g *jen.Group, out, slice *ir.Value, axis int) {
	t := slice.Type
	dims := []jen.Code{}
	for k, d := range t.Shape {
		if k == axis {
			dims = append(dims, jen.Lit(0))
		}
		if d.IsConst() {
			dims = append(dims, jen.Lit(int(d.Size)))
		} else {
			dims = append(dims, jen.Lit(0))
		}
	}
	if axis == len(t.Shape) {
		dims = append(dims, jen.Lit(0))
	}
	dt := t.DType
	if dt == ir.Undefined {
		dt = ir.F32
	}
	g.Parens(e.ref(out)).Dot("Resize").Call(append([]jen.Code{dtypeID(dt)}, dims...)...)
}

func (e *emitter) emitLoop(g *jen.Group, n *ir.Node) {
	body := n.Attr("body").G
	nCarried := len(n.Inputs) - 2
	nScan := len(body.Outputs) - 1 - nCarried
	g.BlockFunc(func(b *jen.Group) {
		b.Id("trips").Op(":=").Int64().Call(jen.Qual("math", "MaxInt64"))
		b.Id("cond").Op(":=").True()
		if n.Input(0) != nil || n.Input(1) != nil {
			b.Var().Err().Error()
		}
		if m := n.Input(0); m != nil {
			b.If(jen.List(jen.Id("trips"), jen.Err()).Op("=").Id("ScalarInt").Call(e.ref(m)), jen.Err().Op("!=").Nil()).Block(
				e.fail(jen.Qual("fmt", "Errorf").Call(jen.Lit(fmt.Sprintf("node %q (Loop): trip count: %%w", n.Name)), jen.Err())))
		}
		if cv := n.Input(1); cv != nil {
			b.If(jen.List(jen.Id("cond"), jen.Err()).Op("=").Id("ScalarBool").Call(e.ref(cv)), jen.Err().Op("!=").Nil()).Block(
				e.fail(jen.Qual("fmt", "Errorf").Call(jen.Lit(fmt.Sprintf("node %q (Loop): condition: %%w", n.Name)), jen.Err())))
		}
		for i := 0; i < nCarried; i++ {
			b.Add(copyValue(e.ref(body.Inputs[2+i]), e.ref(n.Inputs[2+i])))
		}
		b.Id("i").Op(":=").Int64().Call(jen.Lit(0))
		if nScan > 0 {
			// Room for the stacked scan outputs: the trip count, when
			// given and modest.
			b.Id("hint").Op(":=").Lit(0)
			b.If(jen.Id("trips").Op("<=").Lit(1 << 16)).Block(jen.Id("hint").Op("=").Int().Call(jen.Id("trips")))
		}
		b.For(jen.Id("i").Op("<").Id("trips").Op("&&").Id("cond")).BlockFunc(func(l *jen.Group) {
			l.Id("SetScalarI64").Call(e.ref(body.Inputs[0]), jen.Id("i"))
			l.Id("SetScalarBool").Call(e.ref(body.Inputs[1]), jen.Id("cond"))
			e.callBody(l, body)
			l.Var().Err().Error()
			l.If(jen.List(jen.Id("cond"), jen.Err()).Op("=").Id("ScalarBool").Call(e.ref(body.Outputs[0])), jen.Err().Op("!=").Nil()).Block(
				e.fail(jen.Qual("fmt", "Errorf").Call(jen.Lit(fmt.Sprintf("node %q (Loop): body condition: %%w", n.Name)), jen.Err())))
			for k := 0; k < nScan; k++ {
				out := n.Outputs[nCarried+k]
				if out == nil {
					continue
				}
				e.checkNode(l, n, jen.Id("AppendStacked").Call(e.ref(out), e.ref(body.Outputs[1+nCarried+k]), jen.Int().Call(jen.Id("i")), jen.Id("hint")))
			}
			e.carry(l, n, body.Inputs[2:], body.Outputs[1:1+nCarried])
			l.Id("i").Op("++")
		})
		for i := 0; i < nCarried; i++ {
			if o := n.Outputs[i]; o != nil {
				b.Add(copyValue(e.ref(o), e.ref(body.Inputs[2+i])))
			}
		}
		if nScan > 0 {
			b.If(jen.Id("i").Op("==").Lit(0)).BlockFunc(func(z *jen.Group) {
				for k := 0; k < nScan; k++ {
					if out := n.Outputs[nCarried+k]; out != nil {
						e.emptyStacked(z, out, body.Outputs[1+nCarried+k], 0)
					}
				}
			}).Else().BlockFunc(func(z *jen.Group) {
				for k := 0; k < nScan; k++ {
					if out := n.Outputs[nCarried+k]; out != nil {
						z.Id("FinishStacked").Call(e.ref(out), jen.Int().Call(jen.Id("i")))
					}
				}
			})
		}
	})
}

// scanAxes returns the normalised axes (and reverse flags) of a Scan's
// scan inputs and outputs.
func scanAxes(n *ir.Node, body *ir.Graph, nState int) (inAxes, outAxes []int, inRev, outRev []bool) {
	nIn := len(body.Inputs) - nState
	nOut := len(body.Outputs) - nState
	v8 := n.Version < 9
	ia := n.AttrInts("scan_input_axes", nil)
	oa := n.AttrInts("scan_output_axes", nil)
	id := n.AttrInts("scan_input_directions", nil)
	od := n.AttrInts("scan_output_directions", nil)
	if v8 {
		id = n.AttrInts("directions", nil)
	}
	for j := 0; j < nIn; j++ {
		ax := 0
		if j < len(ia) && !v8 {
			ax = int(ia[j])
			if ax < 0 {
				ax += body.Inputs[nState+j].Type.Rank() + 1
			}
		}
		inAxes = append(inAxes, ax)
		inRev = append(inRev, j < len(id) && id[j] != 0)
	}
	for k := 0; k < nOut; k++ {
		ax := 0
		if k < len(oa) && !v8 {
			ax = int(oa[k])
			if ax < 0 {
				ax += body.Outputs[nState+k].Type.Rank() + 1
			}
		}
		outAxes = append(outAxes, ax)
		outRev = append(outRev, k < len(od) && od[k] != 0)
	}
	return
}

// scanSteps emits the time loop of a Scan over scan inputs ins (slices
// taken along inAxes) into scan outputs outs. The state is already in the
// body's inputs and stays there.
func (e *emitter) scanSteps(g *jen.Group, n *ir.Node, body *ir.Graph, nState int, ins, outs []*ir.Value) {
	inAxes, outAxes, inRev, outRev := scanAxes(n, body, nState)
	g.List(jen.Id("steps"), jen.Err()).Op(":=").Id("ScanLength").Call(e.ref(ins[0]), jen.Lit(inAxes[0]))
	g.If(jen.Err().Op("!=").Nil()).Block(e.fail(jen.Qual("fmt", "Errorf").Call(jen.Lit(fmt.Sprintf("node %q (Scan): scan input 0: %%w", n.Name)), jen.Err())))
	idx := func(rev bool) jen.Code {
		if rev {
			return jen.Id("steps").Op("-").Lit(1).Op("-").Id("t")
		}
		return jen.Id("t")
	}
	g.For(jen.Id("t").Op(":=").Lit(0), jen.Id("t").Op("<").Id("steps"), jen.Id("t").Op("++")).BlockFunc(func(l *jen.Group) {
		for j, in := range ins {
			e.checkNode(l, n, jen.Id("TakeSlice").Call(e.ref(body.Inputs[nState+j]), e.ref(in), jen.Lit(inAxes[j]), idx(inRev[j])))
		}
		e.callBody(l, body)
		for k, out := range outs {
			if out == nil {
				continue
			}
			src := e.ref(body.Outputs[nState+k])
			l.If(jen.Id("t").Op("==").Lit(0)).Block(
				jen.If(jen.Err().Op(":=").Id("ShapeStacked").Call(e.ref(out), src, jen.Lit(outAxes[k]), jen.Id("steps")), jen.Err().Op("!=").Nil()).Block(
					e.fail(jen.Qual("fmt", "Errorf").Call(jen.Lit(fmt.Sprintf("node %q (Scan): %%w", n.Name)), jen.Err()))),
			)
			e.checkNode(l, n, jen.Id("PutSlice").Call(e.ref(out), src, jen.Lit(outAxes[k]), idx(outRev[k])))
		}
		e.carry(l, n, body.Inputs[:nState], body.Outputs[:nState])
	})
	g.If(jen.Id("steps").Op("==").Lit(0)).BlockFunc(func(z *jen.Group) {
		for k, out := range outs {
			if out != nil {
				e.emptyStacked(z, out, body.Outputs[nState+k], outAxes[k])
			}
		}
	})
}

func (e *emitter) emitScan(g *jen.Group, n *ir.Node) {
	body := n.Attr("body").G
	nScanIn := int(n.AttrInt("num_scan_inputs", 0))
	if n.Version >= 9 {
		nState := len(n.Inputs) - nScanIn
		g.BlockFunc(func(b *jen.Group) {
			for i := 0; i < nState; i++ {
				b.Add(copyValue(e.ref(body.Inputs[i]), e.ref(n.Inputs[i])))
			}
			e.scanSteps(b, n, body, nState, n.Inputs[nState:], n.Outputs[nState:])
			for i := 0; i < nState; i++ {
				if o := n.Outputs[i]; o != nil {
					b.Add(copyValue(e.ref(o), e.ref(body.Inputs[i])))
				}
			}
		})
		return
	}
	// Scan-8: every input and output has a leading batch axis; each batch
	// entry is a Scan of its own over slices taken into temporaries.
	nState := len(n.Inputs) - 1 - nScanIn
	ins := make([]*ir.Value, nScanIn)
	for j := range ins {
		src := n.Inputs[1+nState+j]
		ins[j] = e.c.temp(n, fmt.Sprintf("in%d", j), ir.Type{DType: src.Type.DType, Shape: src.Type.Shape[1:]})
	}
	outs := make([]*ir.Value, len(n.Outputs)-nState)
	for k := range outs {
		if n.Outputs[nState+k] != nil {
			outs[k] = e.c.temp(n, fmt.Sprintf("out%d", k), body.Outputs[nState+k].Type)
		}
	}
	g.BlockFunc(func(b *jen.Group) {
		first := n.Inputs[1]
		b.List(jen.Id("batch"), jen.Err()).Op(":=").Id("ScanLength").Call(e.ref(first), jen.Lit(0))
		b.If(jen.Err().Op("!=").Nil()).Block(e.fail(jen.Qual("fmt", "Errorf").Call(jen.Lit(fmt.Sprintf("node %q (Scan): batch: %%w", n.Name)), jen.Err())))
		b.For(jen.Id("bi").Op(":=").Lit(0), jen.Id("bi").Op("<").Id("batch"), jen.Id("bi").Op("++")).BlockFunc(func(l *jen.Group) {
			for i := 0; i < nState; i++ {
				e.checkNode(l, n, jen.Id("TakeSlice").Call(e.ref(body.Inputs[i]), e.ref(n.Inputs[1+i]), jen.Lit(0), jen.Id("bi")))
			}
			for j := range ins {
				e.checkNode(l, n, jen.Id("TakeSlice").Call(e.ref(ins[j]), e.ref(n.Inputs[1+nState+j]), jen.Lit(0), jen.Id("bi")))
			}
			l.BlockFunc(func(s *jen.Group) { e.scanSteps(s, n, body, nState, ins, outs) })
			put := func(out, src *ir.Value) {
				l.If(jen.Id("bi").Op("==").Lit(0)).Block(
					jen.If(jen.Err().Op(":=").Id("ShapeStacked").Call(e.ref(out), e.ref(src), jen.Lit(0), jen.Id("batch")), jen.Err().Op("!=").Nil()).Block(
						e.fail(jen.Qual("fmt", "Errorf").Call(jen.Lit(fmt.Sprintf("node %q (Scan): %%w", n.Name)), jen.Err()))),
				)
				e.checkNode(l, n, jen.Id("PutSlice").Call(e.ref(out), e.ref(src), jen.Lit(0), jen.Id("bi")))
			}
			for i := 0; i < nState; i++ {
				if o := n.Outputs[i]; o != nil {
					put(o, body.Inputs[i])
				}
			}
			for k, o := range outs {
				if o != nil {
					put(n.Outputs[nState+k], o)
				}
			}
		})
	})
}

// bodyMethods emits one Session method per subgraph.
func (c *compiled) bodyMethods(f *jen.File) {
	for _, b := range c.bodies {
		e := &emitter{c: c, fail: func(err jen.Code) jen.Code { return jen.Return(err) }}
		f.Line()
		f.Add(lineComment(fmt.Sprintf("%s runs graph %q, a subgraph.", b.method, b.g.Name)))
		if len(b.nodes) <= runChunk {
			f.Func().Params(jen.Id("s").Op("*").Id("Session")).Id(b.method).Params().Error().BlockFunc(func(g *jen.Group) {
				e.nodes(g, b.nodes)
				g.Return(jen.Nil())
			})
			continue
		}
		// A large body runs as parts of at most runChunk nodes (tables.go).
		var parts []string
		for lo := 0; lo < len(b.nodes); lo += runChunk {
			parts = append(parts, fmt.Sprintf("%s_%d", b.method, lo/runChunk))
		}
		f.Func().Params(jen.Id("s").Op("*").Id("Session")).Id(b.method).Params().Error().BlockFunc(func(g *jen.Group) {
			for _, p := range parts {
				e.check(g, jen.Id("s").Dot(p).Call())
			}
			g.Return(jen.Nil())
		})
		for k, p := range parts {
			lo, hi := k*runChunk, min((k+1)*runChunk, len(b.nodes))
			f.Line()
			f.Add(lineComment(fmt.Sprintf("%s runs nodes %d to %d of graph %q.", p, lo, hi-1, b.g.Name)))
			f.Func().Params(jen.Id("s").Op("*").Id("Session")).Id(p).Params().Error().BlockFunc(func(g *jen.Group) {
				e.nodes(g, b.nodes[lo:hi])
				g.Return(jen.Nil())
			})
		}
	}
}

// planGraph is the main graph as the memory planner sees it: a control
// node also reads the outer values its subgraphs capture, so they live
// until it ends.
func planGraph(run []*ir.Node) *ir.Graph {
	out := &ir.Graph{Nodes: make([]*ir.Node, len(run))}
	for i, n := range run {
		if !isControl(n) {
			out.Nodes[i] = n
			continue
		}
		cp := *n
		cp.Inputs = append([]*ir.Value(nil), n.Inputs...)
		for _, a := range n.Attrs {
			if a.G != nil {
				cp.Inputs = append(cp.Inputs, a.G.Captures()...)
			}
		}
		out.Nodes[i] = &cp
	}
	return out
}

// initValues emits, in NewSession, the setup of sequence and optional
// values: each starts empty with its element dtype, which an Optional node
// without input keeps.
func (c *compiled) initValues(g *jen.Group) {
	for k, v := range c.values {
		dt := v.Type.ElemDType()
		if dt == ir.Undefined {
			dt = ir.F32
		}
		ref := jen.Op("&").Id("s").Dot("vals").Index(jen.Lit(k))
		switch v.Type.Kind {
		case ir.SequenceKind:
			g.Id("MakeSequence").Call(ref, dtypeID(dt))
		case ir.OptionalKind:
			g.Id("MakeOptional").Call(ref, dtypeID(dt))
		}
	}
}

// emitSequenceMap runs the body once per element of the input sequences
// (which iterate in lockstep and must have the same length), giving the
// body each tensor input whole, and collects each body output into a
// sequence.
func (e *emitter) emitSequenceMap(g *jen.Group, n *ir.Node) {
	body := n.Attr("body").G
	fail := func(format string, args ...jen.Code) jen.Code {
		return e.fail(jen.Qual("fmt", "Errorf").Call(append([]jen.Code{jen.Lit(fmt.Sprintf("node %q (SequenceMap): ", n.Name) + format)}, args...)...))
	}
	g.BlockFunc(func(b *jen.Group) {
		// Every input's kind is checked at run time: a graph input typed
		// loosely may still hold either.
		for k, v := range n.Inputs {
			if v.Type.Kind == ir.SequenceKind {
				b.If(jen.Op("!").Parens(e.ref(v)).Dot("IsSequence").Call()).Block(fail(fmt.Sprintf("input %d is not a sequence", k)))
			}
		}
		b.Id("count").Op(":=").Parens(e.ref(n.Inputs[0])).Dot("Seq").Call().Dot("Len").Call()
		for k, v := range n.Inputs[1:] {
			if v.Type.Kind == ir.SequenceKind {
				b.If(jen.Id("l").Op(":=").Parens(e.ref(v)).Dot("Seq").Call().Dot("Len").Call(), jen.Id("l").Op("!=").Id("count")).Block(
					fail(fmt.Sprintf("sequence input %d has %%d elements, input_sequence %%d", k+1), jen.Id("l"), jen.Id("count")))
			} else {
				b.Add(copyValue(e.ref(body.Inputs[k+1]), e.ref(v)))
			}
		}
		outs := make([]jen.Code, len(n.Outputs))
		for j, o := range n.Outputs {
			if o == nil {
				continue
			}
			dt := ir.Undefined
			if o.Type.Elem != nil {
				dt = ElemDType(*o.Type.Elem)
			}
			if dt == ir.Undefined {
				dt = ElemDType(body.Outputs[j].Type)
			}
			if dt == ir.Undefined {
				dt = ir.F32
			}
			outs[j] = jen.Id(fmt.Sprintf("out%d", j))
			b.Id(fmt.Sprintf("out%d", j)).Op(":=").Id("MakeSequence").Call(e.ref(o), dtypeID(dt))
		}
		b.For(jen.Id("i").Op(":=").Lit(0), jen.Id("i").Op("<").Id("count"), jen.Id("i").Op("++")).BlockFunc(func(l *jen.Group) {
			for k, v := range n.Inputs {
				if k == 0 || v.Type.Kind == ir.SequenceKind {
					l.Add(copyValue(e.ref(body.Inputs[k]), jen.Parens(e.ref(v)).Dot("Seq").Call().Dot("Elems").Index(jen.Id("i"))))
				}
			}
			e.callBody(l, body)
			for j, o := range n.Outputs {
				if o != nil {
					l.Add(copyValue(jen.Add(outs[j]).Dot("Append").Call(), e.ref(body.Outputs[j])))
				}
			}
		})
	})
}

package passes

import (
	"fmt"
	"math"

	"github.com/cuvil/cuvil/ir"
)

// InlineFlexAttention lowers each ai.onnx.preview FlexAttention node that
// has score_mod, mask_mod or prob_mod subgraphs into ordinary nodes, the
// subgraphs inlined at their stage of the computation:
//
//	S = score_mod(scale * Q·Kᵀ); S = mask_mod(S); P = prob_mod(Softmax(S)); Y = P·V
//
// Each subgraph maps the whole [B, H, Sq, Sk] tensor to one of the same
// shape. FlexAttention without subgraphs stays one node (its kernel).
// Grouped KV heads (Hq != Hkv) with subgraphs are refused with an error.
var InlineFlexAttention = &Pass{
	Name:     "inline-flexattention",
	Doc:      "lower ai.onnx.preview FlexAttention with score/mask/prob subgraphs into MatMul, Softmax and the inlined subgraphs",
	Required: true, // the FlexAttention kernel runs no subgraphs
	Run:      runInlineFlexAttention,
}

var flexMods = []string{"score_mod", "mask_mod", "prob_mod"}

func isFlexWithMods(n *ir.Node) bool {
	if n.Op != "FlexAttention" || n.Domain != ir.PreviewDomain {
		return false
	}
	for _, a := range flexMods {
		if n.Attr(a) != nil {
			return true
		}
	}
	return false
}

func runInlineFlexAttention(m *ir.Model) error {
	return forGraphs(m, func(g *ir.Graph) error {
		var todo []*ir.Node
		for _, n := range g.Nodes {
			if isFlexWithMods(n) {
				todo = append(todo, n)
			}
		}
		if len(todo) == 0 {
			return nil
		}
		r := newRewriter(m, g)
		for _, n := range todo {
			if err := inlineFlex(r, n); err != nil {
				return fmt.Errorf("%v: %w", n, err)
			}
		}
		return nil
	})
}

func inlineFlex(r *rewriter, n *ir.Node) error {
	if len(n.Inputs) != 3 || len(n.Outputs) != 1 || n.Outputs[0] == nil {
		return fmt.Errorf("want inputs Q, K, V and output Y")
	}
	q, k, v := n.Inputs[0], n.Inputs[1], n.Inputs[2]
	dt := q.Type.DType
	if dt != ir.F32 && dt != ir.F64 {
		return fmt.Errorf("subgraphs are supported for f32 and f64 only, Q is %v", dt)
	}
	qs, ks := q.Type.Shape, k.Type.Shape
	if q.Type.Unranked || k.Type.Unranked || len(qs) != 4 || len(ks) != 4 || qs[1] != ks[1] {
		return fmt.Errorf("subgraphs need 4-D Q and K with the same number of heads (grouped KV heads are not supported), have %v and %v", q.Type, k.Type)
	}
	scale := float64(n.FloatAttr("scale"))
	if n.Attr("scale") == nil {
		if !qs[3].IsConst() || qs[3].Size <= 0 {
			return fmt.Errorf("the default scale needs a constant head size, Q is %v", q.Type)
		}
		scale = 1 / math.Sqrt(float64(qs[3].Size))
	}
	var seq []*ir.Node
	var err error
	mk := func(op string, ins []*ir.Value, out *ir.Value, attrs ...*ir.Attr) *ir.Value {
		ver, ok := onnxVersion(r.m, op)
		if !ok && err == nil {
			err = fmt.Errorf("%s is not available at opset %d", op, r.m.Opset(""))
		}
		if out == nil {
			out = &ir.Value{Name: r.fresh(n.Name + "_" + op)}
		}
		nd := &ir.Node{Name: r.fresh(n.Name + "_" + op), Op: op, Version: ver, Inputs: ins, Outputs: []*ir.Value{out}, Attrs: attrs}
		out.Def = nd
		seq = append(seq, nd)
		return out
	}
	kt := mk("Transpose", []*ir.Value{k}, nil, &ir.Attr{Name: "perm", Kind: ir.AttrInts, Ints: []int64{0, 1, 3, 2}})
	s := mk("MatMul", []*ir.Value{q, kt}, nil)
	sc := r.constant(n.Name+"_scale", floatTensor(dt, nil, []float64{scale}))
	s = mk("Mul", []*ir.Value{s, sc}, nil)
	inline := func(attr string, in *ir.Value) (*ir.Value, error) {
		a := n.Attr(attr)
		if a == nil {
			return in, nil
		}
		if a.G == nil {
			return nil, fmt.Errorf("%s is not a graph", attr)
		}
		return inlineFlexGraph(r, n, a.G, in, &seq)
	}
	if s, err = inline("score_mod", s); err != nil {
		return err
	}
	if s, err = inline("mask_mod", s); err != nil {
		return err
	}
	p := mk("Softmax", []*ir.Value{s}, nil, &ir.Attr{Name: "axis", Kind: ir.AttrInt, I: -1})
	if p, err = inline("prob_mod", p); err != nil {
		return err
	}
	mk("MatMul", []*ir.Value{p, v}, n.Outputs[0])
	if err != nil {
		return err
	}
	g := r.g
	for i, x := range g.Nodes {
		if x == n {
			g.Nodes = append(g.Nodes[:i], append(seq, g.Nodes[i+1:]...)...)
			break
		}
	}
	r.refresh()
	return nil
}

// inlineFlexGraph moves subgraph sub's nodes and constants into r's graph
// (after the nodes in seq), its one input replaced by in, and returns what
// stands for its one output.
func inlineFlexGraph(r *rewriter, n *ir.Node, sub *ir.Graph, in *ir.Value, seq *[]*ir.Node) (*ir.Value, error) {
	if len(sub.Inputs) != 1 || len(sub.Outputs) != 1 {
		return nil, fmt.Errorf("a FlexAttention subgraph must have one input and one output, has %d and %d", len(sub.Inputs), len(sub.Outputs))
	}
	x := sub.Inputs[0]
	sub.Walk(func(s *ir.Graph) {
		for _, nd := range s.Nodes {
			for i, v := range nd.Inputs {
				if v == x {
					nd.Inputs[i] = in
				}
			}
		}
	})
	for _, c := range sub.Consts {
		c.Name = r.fresh(n.Name + "_" + c.Name)
		if c.Const != nil {
			c.Const.Name = c.Name
		}
		r.g.Consts = append(r.g.Consts, c)
	}
	for _, nd := range sub.Nodes {
		nd.Name = r.fresh(n.Name + "_" + nd.Name)
		for _, o := range nd.Outputs {
			if o != nil {
				o.Name = r.fresh(n.Name + "_" + o.Name)
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
		*seq = append(*seq, nd)
	}
	out := sub.Outputs[0]
	if out == x {
		out = in
	}
	return out, nil
}

package passes

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/cuvil/cuvil/ir"
)

// Helpers the rewriting passes (canonicalisation, folding, fusion) share.

// rewriter holds what a rewriting pass needs while it edits one graph:
// each value's readers, the graph outputs, and names already taken.
type rewriter struct {
	m     *ir.Model
	g     *ir.Graph
	uses  map[*ir.Value][]*ir.Node
	outs  map[*ir.Value]bool
	names map[string]bool // every value name in the model, made on first use
	dead  map[*ir.Node]bool
	pos   map[*ir.Node]int // node -> index in g.Nodes, rebuilt when stale
}

func newRewriter(m *ir.Model, g *ir.Graph) *rewriter {
	r := &rewriter{m: m, g: g, outs: map[*ir.Value]bool{}, dead: map[*ir.Node]bool{}}
	for _, v := range g.Outputs {
		r.outs[v] = true
	}
	r.refresh()
	return r
}

// modelNames returns the set of value names in m. While Run runs a pass
// the set is shared by every rewriter of that pass (one per graph), so a
// model of many subgraphs is walked once, not once per graph.
func modelNames(m *ir.Model) map[string]bool {
	c, _ := cursors.Load(m)
	if cur, ok := c.(*cursor); ok && cur.names != nil {
		return cur.names
	}
	names := map[string]bool{}
	m.Graph.Walk(func(s *ir.Graph) {
		for _, v := range s.Inputs {
			names[v.Name] = true
		}
		for _, v := range s.Consts {
			names[v.Name] = true
		}
		for _, n := range s.Nodes {
			for _, v := range n.Outputs {
				if v != nil {
					names[v.Name] = true
				}
			}
		}
	})
	if cur, ok := c.(*cursor); ok {
		cur.names = names
	}
	return names
}

// nodePos returns n's index in g.Nodes (-1 when it is not there), from a
// map rebuilt only when it no longer matches the graph.
func (r *rewriter) nodePos(n *ir.Node) int {
	if i, ok := r.pos[n]; ok && i < len(r.g.Nodes) && r.g.Nodes[i] == n {
		return i
	}
	r.pos = make(map[*ir.Node]int, len(r.g.Nodes))
	for i, x := range r.g.Nodes {
		r.pos[x] = i
	}
	if i, ok := r.pos[n]; ok {
		return i
	}
	return -1
}

// refresh recomputes the readers of every value.
func (r *rewriter) refresh() { r.uses = r.g.Uses() }

// only returns the single node reading v, or nil when v has another reader,
// none, or is a graph output.
func (r *rewriter) only(v *ir.Value) *ir.Node {
	if v == nil || r.outs[v] {
		return nil
	}
	if u := r.uses[v]; len(u) == 1 && !r.dead[u[0]] {
		return u[0]
	}
	return nil
}

// read reports whether v is a graph output or has a live reader.
func (r *rewriter) read(v *ir.Value) bool {
	if r.outs[v] {
		return true
	}
	for _, u := range r.uses[v] {
		if !r.dead[u] {
			return true
		}
	}
	return false
}

// fresh returns an unused value name built from base.
func (r *rewriter) fresh(base string) string {
	if r.names == nil {
		r.names = modelNames(r.m)
	}
	name := base
	for i := 1; r.names[name]; i++ {
		name = fmt.Sprintf("%s_%d", base, i)
	}
	r.names[name] = true
	return name
}

// constant adds a constant value to the graph.
func (r *rewriter) constant(base string, t *ir.Tensor) *ir.Value {
	t.Name = r.fresh(base)
	v := &ir.Value{Name: t.Name, Type: t.Type(), Const: t}
	r.g.Consts = append(r.g.Consts, v)
	return v
}

// replaceUses makes every reader of old (in g and its subgraphs, which
// read outer values by pointer) read new instead. A graph output old is
// replaced too; the caller keeps output names stable (see redirect).
func (r *rewriter) replaceUses(old, new *ir.Value) {
	r.g.Walk(func(s *ir.Graph) {
		for _, n := range s.Nodes {
			for i, v := range n.Inputs {
				if v == old {
					n.Inputs[i] = new
				}
			}
		}
		for i, v := range s.Outputs {
			if v == old {
				s.Outputs[i] = new
			}
		}
	})
}

// replaceAll makes every reader of a key of repl (nodes of g and of its
// subgraphs, graph outputs) read its value instead, in one walk, and
// refreshes the readers. The values are final (no chains).
func (r *rewriter) replaceAll(repl map[*ir.Value]*ir.Value) {
	if len(repl) == 0 {
		return
	}
	r.g.Walk(func(s *ir.Graph) {
		for _, n := range s.Nodes {
			for i, v := range n.Inputs {
				if w, ok := repl[v]; ok {
					n.Inputs[i] = w
				}
			}
		}
		for i, v := range s.Outputs {
			if w, ok := repl[v]; ok {
				s.Outputs[i] = w
			}
		}
	})
	r.refresh()
}

// redirect removes value old (defined by a node being deleted) in favour
// of new, which computes the same thing. When old is a graph output, new
// takes old's name so the model's interface does not change; that needs
// new to be a node output that is not an input, constant or output
// already. It reports whether it could.
func (r *rewriter) redirect(old, new *ir.Value) bool {
	if r.outs[old] {
		if new.Def == nil || r.outs[new] {
			return false
		}
		new.Name = old.Name
		delete(r.outs, old)
		r.outs[new] = true
	}
	r.replaceUses(old, new)
	return true
}

// kill marks nodes for removal by sweep.
func (r *rewriter) kill(ns ...*ir.Node) {
	for _, n := range ns {
		r.dead[n] = true
	}
}

// sweep drops killed nodes and refreshes the readers.
func (r *rewriter) sweep() {
	if len(r.dead) == 0 {
		return
	}
	nodes := r.g.Nodes[:0]
	for _, n := range r.g.Nodes {
		if !r.dead[n] {
			nodes = append(nodes, n)
		}
	}
	clear(r.g.Nodes[len(nodes):])
	r.g.Nodes = nodes
	r.dead = map[*ir.Node]bool{}
	r.refresh()
}

// replaceNode puts n where old sits in the node list (old is dropped).
// old is marked dead too: the readers (r.uses) are not refreshed until
// sweep, so a later match that finds old as the reader of a value (say
// the other operand of an Add a fusion replaced) must see it gone, not
// fuse it a second time.
func (r *rewriter) replaceNode(old, n *ir.Node) {
	for i, x := range r.g.Nodes {
		if x == old {
			r.g.Nodes[i] = n
			r.dead[old] = true
			return
		}
	}
	panic("passes: replaceNode: node not in graph")
}

// fuse puts n, which computes what the nodes from did, in at's place (at
// is one of them) and kills the others; n records them (ir.Node.Fused).
// at counts as dead too (it left the node list), so a later match that
// still sees it as a value's reader (the readers refresh at sweep) takes
// it for gone: two Convs feeding one Add fuse the Add once (lraspp's
// classifier failed with "replaceNode: node not in graph").
func (r *rewriter) fuse(n, at *ir.Node, from ...*ir.Node) {
	r.record(n, from...)
	r.replaceNode(at, n)
	r.kill(at)
	for _, x := range from {
		if x != at {
			r.kill(x)
		}
	}
}

// absorb kills the nodes eaten, whose work p (which stays) now does too,
// and records them on p.
func (r *rewriter) absorb(p *ir.Node, eaten ...*ir.Node) {
	r.record(p, append([]*ir.Node{p}, eaten...)...)
	r.kill(eaten...)
}

// record sets n.Fused to the imported nodes behind the nodes from: each
// one's own record, or the node itself when it has none; in graph order,
// each once. All fusion and folding passes go through it (fuse, absorb),
// so cuvil inspect -graph can box every fused group.
func (r *rewriter) record(n *ir.Node, from ...*ir.Node) {
	from = slices.Clone(from)
	pos := make([]int, len(from))
	for i, x := range from {
		pos[i] = r.nodePos(x)
	}
	idx := make([]int, len(from))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return pos[a] - pos[b] })
	sorted := make([]*ir.Node, len(from))
	for i, j := range idx {
		sorted[i] = from[j]
	}
	from = sorted
	var fused []ir.Origin
	seen := map[ir.Origin]bool{}
	for _, x := range from {
		o := x.Fused
		if len(o) == 0 {
			op := x.Op
			if x.Domain != "" && x.Domain != "ai.onnx" {
				op = x.Domain + "." + op
			}
			o = []ir.Origin{{Op: op, Name: x.Name}}
		}
		for _, y := range o {
			if !seen[y] {
				seen[y] = true
				fused = append(fused, y)
			}
		}
	}
	n.Fused = fused
}

// useCuvil makes the model import the cuvil domain.
func useCuvil(m *ir.Model) {
	if m.Opsets == nil {
		m.Opsets = map[string]int64{}
	}
	if _, ok := m.Opsets[ir.CuvilDomain]; !ok {
		m.Opsets[ir.CuvilDomain] = ir.CuvilOpset
	}
}

// onnxVersion resolves op's version at the model's ai.onnx opset.
func onnxVersion(m *ir.Model, op string) (int, bool) {
	s := ir.LookupOp("", op)
	if s == nil {
		return 0, false
	}
	return s.VersionFor(m.Opset(""))
}

// isOp reports whether n is the ai.onnx op.
func isOp(n *ir.Node, op string) bool {
	return n != nil && n.Op == op && (n.Domain == "" || n.Domain == "ai.onnx")
}

// floatConst returns the values of a constant float tensor (f32 or f64).
func floatConst(v *ir.Value) ([]float64, bool) {
	if !v.IsConst() || (v.Const.DType != ir.F32 && v.Const.DType != ir.F64) {
		return nil, false
	}
	return v.Const.Float64s(), true
}

// scalarConst returns the value of a one-element float constant.
func scalarConst(v *ir.Value) (float64, bool) {
	f, ok := floatConst(v)
	if !ok || len(f) != 1 {
		return 0, false
	}
	return f[0], true
}

// floatTensor encodes vals as a tensor of dtype dt (f32 or f64).
func floatTensor(dt ir.DType, shape []int64, vals []float64) *ir.Tensor {
	t := &ir.Tensor{DType: dt, Shape: append([]int64(nil), shape...)}
	if dt == ir.F64 {
		t.Raw = make([]byte, 8*len(vals))
		for i, v := range vals {
			binary.LittleEndian.PutUint64(t.Raw[8*i:], math.Float64bits(v))
		}
		return t
	}
	t.Raw = make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(t.Raw[4*i:], math.Float32bits(float32(v)))
	}
	return t
}

// axisVector reports whether constant c, broadcast against a value of
// rank r, varies along one axis only: it returns that axis (-1 for a
// scalar) and the values, one per index along it.
func axisVector(c *ir.Value, r int) (axis int, vals []float64, ok bool) {
	f, ok := floatConst(c)
	if !ok || len(c.Const.Shape) > r {
		return 0, nil, false
	}
	axis = -1
	off := r - len(c.Const.Shape)
	for i, d := range c.Const.Shape {
		if d != 1 {
			if axis >= 0 {
				return 0, nil, false
			}
			axis = off + i
		}
	}
	return axis, f, true
}

// sameShape reports whether a and b have the same known type.
func sameShape(a, b *ir.Value) bool {
	return a.Type.Known() && b.Type.Known() && a.Type.DType == b.Type.DType && a.Type.Shape.Equal(b.Type.Shape)
}

// otherInput returns the input of binary node n that is not v.
func otherInput(n *ir.Node, v *ir.Value) *ir.Value {
	if len(n.Inputs) != 2 {
		return nil
	}
	if n.Inputs[0] == v {
		return n.Inputs[1]
	}
	if n.Inputs[1] == v {
		return n.Inputs[0]
	}
	return nil
}

// forGraphs runs f on the main graph and every subgraph.
func forGraphs(m *ir.Model, f func(*ir.Graph) error) error {
	var err error
	m.Graph.Walk(func(g *ir.Graph) {
		if err == nil {
			err = f(g)
		}
	})
	return err
}

package passes

import (
	"fmt"
	"io"
	"sort"

	"github.com/cuvil/cuvil/ir"
)

// Memory planning is an analysis: it changes nothing in the graph and
// returns a *MemPlan that gen lays the session's memory out by (and that
// `cuvil inspect -memplan` prints).
//
// Every value a node computes gets a buffer. Buffers of values whose size is
// known at compile time live in one arena per dtype at offsets fixed here:
// a value lives from the node that defines it to the last node that reads
// it (a node whose subgraphs capture it counts as a reader; graph outputs
// live to the end), and two values may overlap in the arena only when one
// is dead before the other is defined. A node's outputs never overlap its
// inputs, except in place: an elementwise kernel whose input dies at the
// node and has exactly the output's dtype and size writes its output over
// that input, and so does a FusedConv over its Into (concat-into: the
// convolutions of one Concat share one buffer). Offsets are MemAlign-aligned and chosen best-fit (the
// smallest free gap that holds the buffer, else the top of the arena).
// Values whose size depends on symbolic dims (or that are not tensors)
// are planned separately, as Dynamic: each owns memory grown at run time.

// MemAlign is the alignment, in bytes, of every arena offset (a cache line).
const MemAlign = 64

// MemPlan is the result of PlanMemory.
type MemPlan struct {
	// Buffers holds the values of static size, in the order of the nodes
	// that define them.
	Buffers []MemBuffer
	// Dynamic holds the values whose size is only known at run time
	// (Offset is -1, Bytes 0).
	Dynamic []MemBuffer
	// Arenas gives each dtype's arena size, by dtype.
	Arenas []MemArena
	// Nodes is the number of nodes planned over.
	Nodes int

	index map[*ir.Value]int // value -> index in Buffers (>= 0) or -1-index in Dynamic
}

// MemBuffer is where one value lives.
type MemBuffer struct {
	Value  *ir.Value
	DType  ir.DType
	Bytes  int64 // the value's size (not rounded up)
	Offset int64 // byte offset in its dtype's arena (a multiple of MemAlign); -1 when dynamic
	First  int   // index of the defining node
	Last   int   // index of the last reader (Nodes when the value is a graph output)
	// InPlace is the input of the defining node whose memory the value
	// reuses, or nil.
	InPlace *ir.Value
}

// MemArena is the arena of one dtype.
type MemArena struct {
	DType ir.DType
	Bytes int64
}

// Lookup returns v's buffer; ok is false when v is not a value the plan
// covers (inputs, constants).
func (p *MemPlan) Lookup(v *ir.Value) (b MemBuffer, ok bool) {
	i, ok := p.index[v]
	if !ok {
		return MemBuffer{}, false
	}
	if i < 0 {
		return p.Dynamic[-1-i], true
	}
	return p.Buffers[i], true
}

// Total is the sum of the arena sizes: the memory the static values need.
func (p *MemPlan) Total() int64 {
	var n int64
	for _, a := range p.Arenas {
		n += a.Bytes
	}
	return n
}

// Sum is the sum of the static values' sizes: the memory they would need
// without sharing.
func (p *MemPlan) Sum() int64 {
	var n int64
	for _, b := range p.Buffers {
		n += b.Bytes
	}
	return n
}

// InPlaceCount counts the values that reuse their input's memory.
func (p *MemPlan) InPlaceCount() int {
	k := 0
	for _, b := range p.Buffers {
		if b.InPlace != nil {
			k++
		}
	}
	return k
}

// ArenaBytes returns the arena size of dtype dt (0 when it has none).
func (p *MemPlan) ArenaBytes(dt ir.DType) int64 {
	for _, a := range p.Arenas {
		if a.DType == dt {
			return a.Bytes
		}
	}
	return 0
}

// StaticBytes returns v's size in bytes when its type is fully known.
func StaticBytes(v *ir.Value) (int64, bool) {
	t := v.Type
	if t.Kind != ir.TensorKind || !t.Known() || t.DType.Size() == 0 {
		return 0, false
	}
	n, ok := t.Shape.NumElements()
	if !ok {
		return 0, false
	}
	return n * int64(t.DType.Size()), true
}

// inPlaceOps are the elementwise kernels that read element i of each input
// before writing element i of the output and nothing else (templates'
// ewUnary/ewBinary), so the output may overwrite an input of the same size.
var inPlaceOps = map[string]bool{
	"Abs": true, "Add": true, "Ceil": true, "Celu": true, "Cos": true, "Div": true, "Elu": true, "Erf": true,
	"Exp": true, "Floor": true, "HardSigmoid": true, "HardSwish": true, "LeakyRelu": true, "Log": true,
	"Mish": true, "Mul": true, "Neg": true, "Reciprocal": true, "Relu": true, "Round": true, "Selu": true,
	"Sigmoid": true, "Sign": true, "Sin": true, "Softplus": true, "Softsign": true, "Sqrt": true, "Sub": true,
	"Tan": true, "Tanh": true, "ThresholdedRelu": true,
}

// viewOps keep their data input's elements in order and change only its
// shape (templates' ewReshaped): the output may be the input's memory
// (the kernel then copies nothing). Only input 0: the others are shapes
// or axes.
var viewOps = map[string]bool{"Reshape": true, "Flatten": true, "Squeeze": true, "Unsqueeze": true}

// inPlaceInputs returns the inputs of n whose memory its output may take
// (one that dies at n with the output's dtype and size): any input of an
// inPlaceOps kernel; the Into input of a FusedConv the concat-into pass
// made write a channel slice (it writes its channels over Into's: the
// kernel copies Into first only when the plan did not put Y over it).
func inPlaceInputs(n *ir.Node) []*ir.Value {
	if len(n.Outputs) != 1 {
		return nil
	}
	if n.Domain == ir.CuvilDomain && n.Op == "FusedConv" && n.Input(4) != nil {
		return n.Inputs[4:5]
	}
	if n.Domain == "" || n.Domain == "ai.onnx" {
		if viewOps[n.Op] {
			return n.Inputs[:min(1, len(n.Inputs))]
		}
	}
	if (n.Domain != "" && n.Domain != "ai.onnx") || !inPlaceOps[n.Op] {
		return nil
	}
	for _, a := range n.Attrs {
		if a.G != nil || len(a.Graphs) > 0 {
			return nil
		}
	}
	return n.Inputs
}

// memReads lists the values n reads: its inputs and what its subgraphs
// capture from enclosing graphs.
func memReads(n *ir.Node) []*ir.Value {
	out := n.Inputs
	for _, a := range n.Attrs {
		if a.G != nil {
			out = append(out[:len(out):len(out)], a.G.Captures()...)
		}
		for _, g := range a.Graphs {
			out = append(out[:len(out):len(out)], g.Captures()...)
		}
	}
	return out
}

// PlanMemory plans the values that nodes (in execution order) define;
// outputs live to the end.
func PlanMemory(nodes []*ir.Node, outputs []*ir.Value) (*MemPlan, error) {
	isOut := map[*ir.Value]bool{}
	for _, v := range outputs {
		isOut[v] = true
	}
	end := len(nodes)
	p := &MemPlan{Nodes: end, index: map[*ir.Value]int{}}
	first := map[*ir.Value]int{}
	last := map[*ir.Value]int{}
	for i, n := range nodes {
		for _, v := range n.Outputs {
			if v == nil {
				continue
			}
			if _, dup := first[v]; dup {
				return nil, fmt.Errorf("memplan: value %q is defined twice (node %q)", v.Name, n.Name)
			}
			first[v], last[v] = i, i
		}
	}
	for i, n := range nodes {
		for _, v := range memReads(n) {
			if _, ok := first[v]; ok && v != nil {
				last[v] = max(last[v], i)
			}
		}
	}
	for v := range isOut {
		if _, ok := first[v]; ok {
			last[v] = end
		}
	}

	// Groups of values sharing one buffer (in place): root -> members.
	type group struct {
		dt          ir.DType
		bytes       int64
		first, last int
		members     []int // indices in p.Buffers
		offset      int64
	}
	var groups []*group
	groupOf := map[*ir.Value]*group{}
	for i, n := range nodes {
		for _, v := range n.Outputs {
			if v == nil {
				continue
			}
			size, static := StaticBytes(v)
			b := MemBuffer{Value: v, DType: v.Type.DType, Bytes: size, Offset: -1, First: first[v], Last: last[v]}
			if !static {
				b.Bytes = 0
				p.index[v] = -1 - len(p.Dynamic)
				p.Dynamic = append(p.Dynamic, b)
				continue
			}
			var gr *group
			for _, in := range inPlaceInputs(n) {
				g := groupOf[in]
				if in == nil || g == nil || last[in] != i || isOut[in] || g.last != i || in.Type.DType != v.Type.DType || g.bytes != size {
					continue
				}
				gr, b.InPlace = g, in
				break
			}
			if gr == nil {
				gr = &group{dt: v.Type.DType, bytes: size, first: i}
				groups = append(groups, gr)
			}
			gr.last = max(gr.last, b.Last)
			gr.members = append(gr.members, len(p.Buffers))
			groupOf[v] = gr
			p.index[v] = len(p.Buffers)
			p.Buffers = append(p.Buffers, b)
		}
	}

	// Offsets: groups in order of definition; live blocks of the same
	// dtype block their range; pick the smallest gap that fits.
	type block struct{ off, size int64 }
	live := map[ir.DType][]*group{}
	arena := map[ir.DType]int64{}
	for _, g := range groups {
		l := live[g.dt][:0:0]
		for _, o := range live[g.dt] {
			if o.last >= g.first { // still live when g is defined
				l = append(l, o)
			}
		}
		sort.Slice(l, func(i, j int) bool { return l[i].offset < l[j].offset })
		size := alignUp(g.bytes)
		best, bestGap := int64(-1), int64(-1)
		at := int64(0)
		for _, o := range l {
			if gap := o.offset - at; gap >= size && (bestGap < 0 || gap < bestGap) {
				best, bestGap = at, gap
			}
			at = max(at, o.offset+alignUp(o.bytes))
		}
		if best < 0 {
			best = at
		}
		g.offset = best
		arena[g.dt] = max(arena[g.dt], best+size)
		live[g.dt] = append(l, g)
		for _, k := range g.members {
			p.Buffers[k].Offset = best
		}
	}
	for dt, n := range arena {
		p.Arenas = append(p.Arenas, MemArena{dt, n})
	}
	sort.Slice(p.Arenas, func(i, j int) bool { return p.Arenas[i].DType < p.Arenas[j].DType })
	return p, nil
}

// Check verifies the plan's invariant: each buffer lies aligned inside its
// arena, and buffers of one dtype whose lifetimes overlap do not overlap
// in the arena, except a value written in place over its own input.
func (p *MemPlan) Check() error {
	for i, a := range p.Buffers {
		if a.Offset < 0 || a.Offset%MemAlign != 0 || a.Offset+a.Bytes > p.ArenaBytes(a.DType) {
			return fmt.Errorf("memplan: %s at %d (%d bytes) is unaligned or outside its arena of %d bytes", a.Value.Name, a.Offset, a.Bytes, p.ArenaBytes(a.DType))
		}
		for _, b := range p.Buffers[i+1:] {
			if a.DType != b.DType || a.Last < b.First || b.Last < a.First {
				continue
			}
			if b.InPlace != nil && b.First == a.Last && b.Offset == a.Offset {
				continue // b overwrites its dying input (or a value sharing it)
			}
			if a.Offset < b.Offset+b.Bytes && b.Offset < a.Offset+a.Bytes {
				return fmt.Errorf("memplan: %s [%d,%d] at %d and %s [%d,%d] at %d overlap", a.Value.Name, a.First, a.Last, a.Offset, b.Value.Name, b.First, b.Last, b.Offset)
			}
		}
	}
	return nil
}

func alignUp(n int64) int64 { return (n + MemAlign - 1) / MemAlign * MemAlign }

// PlanModel plans the top-level graph of m as gen runs it: Constant nodes
// become constants and are left out.
func PlanModel(m *ir.Model) (*MemPlan, error) {
	var nodes []*ir.Node
	for _, n := range m.Graph.Nodes {
		if n.Op == "Constant" && (n.Domain == "" || n.Domain == "ai.onnx") {
			continue
		}
		nodes = append(nodes, n)
	}
	return PlanMemory(nodes, m.Graph.Outputs)
}

// Print writes the plan as text: one line per value (name, dtype, bytes,
// offset, first and last node; "in-place" and the input it overwrites),
// the dynamic values, then the arenas and the total against the sum.
func (p *MemPlan) Print(w io.Writer) error {
	ew := &errWriter{w: w}
	for _, b := range p.Buffers {
		ew.printf("%-40s %-5s %10d @%-10d [%d,%d]", b.Value.Name, b.DType, b.Bytes, b.Offset, b.First, b.Last)
		if b.InPlace != nil {
			ew.printf(" in-place %s", b.InPlace.Name)
		}
		ew.printf("\n")
	}
	for _, b := range p.Dynamic {
		ew.printf("%-40s %-5s %10s %-11s [%d,%d] dynamic %s\n", b.Value.Name, b.Value.Type.DType, "-", "-", b.First, b.Last, b.Value.Type)
	}
	for _, a := range p.Arenas {
		ew.printf("arena %s %d bytes\n", a.DType, a.Bytes)
	}
	ew.printf("total %d bytes for %d values (sum of sizes %d", p.Total(), len(p.Buffers), p.Sum())
	if s := p.Sum(); s > 0 {
		ew.printf(", %.1f%%", 100*float64(p.Total())/float64(s))
	}
	ew.printf("); %d in place; %d dynamic\n", p.InPlaceCount(), len(p.Dynamic))
	return ew.err
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

package onnx

import (
	"container/heap"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/cuvil/cuvil/ir"
	pb "github.com/cuvil/cuvil/ir/onnx/onnxpb"
)

// importer holds what one model's import shares across its graphs.
type importer struct {
	dir    string
	budget int64 // bytes external data and sparse expansion may still add (< 0: no limit)
	nodes  int64 // nodes imported so far, function bodies inlined (all graphs)
	// funcSizes memoizes funcNodes: the nodes each function expands into.
	funcSizes map[string]int64
	limits    LoadOptions
	depth     int // graphs open (1 in the main graph)
	opsets    map[string]int64
	lookup    func(domain, op string) *ir.OpSchema
	funcs     map[string]*pb.FunctionProto // funcKey -> model-local function
	names     map[string]bool              // every value name in the file
	syms      map[string]bool              // every dim_param in the file
	unk       int                          // next unk__N
	fresh     int                          // next suffix for invented value names
}

// UnknownOpError reports a node whose operator the op table does not know.
// Callers can test for it with errors.As to tell "unsupported" from "bad
// model".
type UnknownOpError struct {
	Node   string
	Op     string
	Domain string // "" for ai.onnx
	Opset  int64
}

func (e *UnknownOpError) Error() string {
	if why, ok := ir.MLUnsupported[e.Op]; ok && e.Domain == ir.MLDomain {
		return fmt.Sprintf("node %q (%s): op %s of domain %q is not supported yet: %s", e.Node, e.Op, e.Op, displayDomain(e.Domain), why)
	}
	return fmt.Sprintf("node %q (%s): op %s of domain %q is not known at opset %d; custom ops are not yet supported",
		e.Node, e.Op, e.Op, displayDomain(e.Domain), e.Opset)
}

// scope maps names to values for one graph; subgraphs look names up
// through their parents, which is how captures resolve to the outer
// graph's *ir.Value.
type scope struct {
	parent *scope
	vals   map[string]*ir.Value
}

func (s *scope) find(name string) *ir.Value {
	for ; s != nil; s = s.parent {
		if v := s.vals[name]; v != nil {
			return v
		}
	}
	return nil
}

// describe says where a value comes from, for SSA-violation messages.
func describe(v *ir.Value) string {
	switch {
	case v.Def != nil:
		return fmt.Sprintf("output of node %q (%s)", v.Def.Name, v.Def.Op)
	case v.Const != nil:
		return "an initializer"
	}
	return "a graph input"
}

// nodeEntry is a node to import: from the graph itself, or from the body
// of a model-local function being inlined (with that function's opsets).
type nodeEntry struct {
	np     *pb.NodeProto
	name   string
	opsets map[string]int64
}

func (e nodeEntry) String() string { return fmt.Sprintf("node %q (%s)", e.name, e.np.GetOpType()) }

func nodeName(np *pb.NodeProto, i int) string {
	if np.GetName() != "" {
		return np.GetName()
	}
	return fmt.Sprintf("%s_%d", np.GetOpType(), i)
}

// depthError is the error for subgraphs nested too deep; the enclosing
// nodes do not add themselves to it.
type depthError struct{ msg string }

func (e *depthError) Error() string { return e.msg }

// importGraph builds one graph. parent is the scope of the enclosing graph
// (nil for the main graph).
func (im *importer) importGraph(gp *pb.GraphProto, parent *scope, parentGraph *ir.Graph, opsets map[string]int64) (*ir.Graph, error) {
	im.depth++
	defer func() { im.depth-- }()
	if max := im.limits.maxDepth(); im.depth > max {
		return nil, &depthError{fmt.Sprintf("graph %q: subgraphs nest more than %d deep (compile -max-depth raises it)", gp.GetName(), max)}
	}
	g := &ir.Graph{Name: gp.GetName(), Parent: parentGraph}
	sc := &scope{parent: parent, vals: map[string]*ir.Value{}}
	define := func(v *ir.Value) error {
		if v.Name == "" {
			return fmt.Errorf("a value has an empty name")
		}
		if old := sc.find(v.Name); old != nil {
			return fmt.Errorf("value %q is defined twice: as %s and as %s; values must be assigned once (SSA)", v.Name, describe(old), describe(v))
		}
		sc.vals[v.Name] = v
		return nil
	}

	for _, tp := range gp.Initializer {
		t, err := im.tensor(tp)
		if err != nil {
			return nil, fmt.Errorf("initializer: %w", err)
		}
		v := &ir.Value{Name: tp.GetName(), Type: t.Type(), Const: t}
		if err := define(v); err != nil {
			return nil, fmt.Errorf("initializer: %w", err)
		}
		g.Consts = append(g.Consts, v)
	}
	for _, sp := range gp.SparseInitializer {
		t, err := im.sparse(sp)
		if err != nil {
			return nil, fmt.Errorf("sparse initializer: %w", err)
		}
		v := &ir.Value{Name: t.Name, Type: t.Type(), Const: t}
		if err := define(v); err != nil {
			return nil, fmt.Errorf("sparse initializer: %w", err)
		}
		g.Consts = append(g.Consts, v)
	}

	for _, vi := range gp.Input {
		if v := sc.vals[vi.GetName()]; v != nil && v.Const != nil {
			// Before IR version 4 initializers had to be listed as inputs
			// too; they are constants, not run-time inputs.
			continue
		}
		t, err := im.typeFromProto(vi.Type)
		if err != nil {
			return nil, fmt.Errorf("graph input %q: %w", vi.GetName(), err)
		}
		v := &ir.Value{Name: vi.GetName(), Type: t}
		if err := define(v); err != nil {
			return nil, fmt.Errorf("graph input: %w", err)
		}
		g.Inputs = append(g.Inputs, v)
	}

	// Declared types of intermediate values and outputs; graph outputs win
	// over value_info when both name a value.
	declared := map[string]*pb.TypeProto{}
	for _, vi := range gp.ValueInfo {
		declared[vi.GetName()] = vi.Type
	}
	for _, vi := range gp.Output {
		if vi.Type != nil {
			declared[vi.GetName()] = vi.Type
		}
	}

	entries, err := im.expand(gp.Node, opsets, nil)
	if err != nil {
		return nil, err
	}
	// A node output that reuses the name of an input or constant (here or
	// in an enclosing graph) breaks SSA; catch it before sorting, which
	// would otherwise read it as a cycle.
	for _, e := range entries {
		for i, o := range e.np.Output {
			if old := sc.find(o); o != "" && old != nil {
				return nil, fmt.Errorf("%s: output %d: value %q is defined twice: as %s and as output of %s; values must be assigned once (SSA)", e, i, o, describe(old), e)
			}
		}
	}
	entries, err = sortNodes(entries)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		n, err := im.importNode(e, sc, g, declared, define)
		if err != nil {
			return nil, err
		}
		g.Nodes = append(g.Nodes, n)
	}

	for _, vi := range gp.Output {
		v := sc.find(vi.GetName())
		if v == nil {
			return nil, fmt.Errorf("graph output %q is not produced by any node, graph input or initializer", vi.GetName())
		}
		g.Outputs = append(g.Outputs, v)
	}
	return g, nil
}

func (im *importer) importNode(e nodeEntry, sc *scope, g *ir.Graph, declared map[string]*pb.TypeProto, define func(*ir.Value) error) (*ir.Node, error) {
	np := e.np
	n := &ir.Node{Name: e.name, Op: np.GetOpType(), Domain: normDomain(np.GetDomain())}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%s: %s", e, fmt.Sprintf(format, args...))
	}
	if n.Op == "" {
		return nil, fail("node has no op_type")
	}
	opset, ok := e.opsets[n.Domain]
	if !ok {
		return nil, fail("domain %q is not in the model's opset_import (it imports %s)", displayDomain(n.Domain), strings.Join(quoted(sortedKeys(e.opsets)), ", "))
	}
	schema := im.lookup(n.Domain, n.Op)
	if schema == nil && !customDomain(n.Domain) {
		return nil, &UnknownOpError{Node: e.name, Op: n.Op, Domain: n.Domain, Opset: opset}
	}
	if schema == nil {
		// A custom op: its kernel is the user's (cuvil compile -op), its
		// version the domain's opset.
		schema = &ir.OpSchema{Name: n.Op, Versions: []int{int(opset)}}
	}
	v, ok := schema.VersionFor(opset)
	if !ok {
		if n.Domain == "" && opset > ir.MaxOpset {
			return nil, fail("opset %d of ai.onnx is newer than Cuvil supports (up to %d)", opset, ir.MaxOpset)
		}
		if n.Domain == ir.MLDomain && opset > ir.MaxMLOpset {
			return nil, fail("opset %d of ai.onnx.ml is newer than Cuvil supports (up to %d)", opset, ir.MaxMLOpset)
		}
		first := 0
		if len(schema.Versions) > 0 {
			first = schema.Versions[0]
		}
		return nil, fail("op %s of domain %q does not exist at opset %d (its first version is %d)", n.Op, displayDomain(n.Domain), opset, first)
	}
	n.Version = v

	n.Inputs = make([]*ir.Value, len(np.Input))
	for i, name := range np.Input {
		if name == "" {
			continue // omitted optional input
		}
		v := sc.find(name)
		if v == nil {
			return nil, fail("input %d %q is not defined: no node output, graph input or initializer has that name", i, name)
		}
		n.Inputs[i] = v
	}

	attrs, err := im.importAttrs(np, sc, g, e.opsets)
	var deep *depthError
	if errors.As(err, &deep) {
		return nil, err // a chain hundreds of levels long says nothing more
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", e, err)
	}
	n.Attrs = attrs

	n.Outputs = make([]*ir.Value, len(np.Output))
	for i, name := range np.Output {
		if name == "" {
			continue // omitted optional output
		}
		t, err := im.typeFromProto(declared[name])
		if err != nil {
			return nil, fail("output %d %q: %v", i, name, err)
		}
		out := &ir.Value{Name: name, Type: t, Def: n}
		if err := define(out); err != nil {
			return nil, fail("output %d: %v", i, err)
		}
		n.Outputs[i] = out
	}
	return n, nil
}

func quoted(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", displayDomain(s))
	}
	return out
}

// importAttrs converts a node's attributes, sorted by name. Subgraphs are
// imported in scope sc, so their captures resolve to this graph's values.
func (im *importer) importAttrs(np *pb.NodeProto, sc *scope, g *ir.Graph, opsets map[string]int64) ([]*ir.Attr, error) {
	attrs := make([]*ir.Attr, 0, len(np.Attribute))
	seen := map[string]bool{}
	for _, ap := range np.Attribute {
		name := ap.GetName()
		if name == "" {
			return nil, fmt.Errorf("an attribute has no name")
		}
		if seen[name] {
			return nil, fmt.Errorf("attribute %q is given twice", name)
		}
		seen[name] = true
		if ap.GetRefAttrName() != "" {
			return nil, fmt.Errorf("attribute %q refers to attribute %q of a calling function, but the node is not inside a function", name, ap.GetRefAttrName())
		}
		a, err := im.importAttr(ap, sc, g, opsets)
		var deep *depthError
		if errors.As(err, &deep) {
			return nil, err
		}
		if err != nil {
			return nil, fmt.Errorf("attribute %q: %w", name, err)
		}
		attrs = append(attrs, a)
	}
	sort.Slice(attrs, func(i, j int) bool { return attrs[i].Name < attrs[j].Name })
	return attrs, nil
}

// attrType returns the attribute's type; IR version 1 files leave it
// unset, and then the one field that is set says it.
func attrType(ap *pb.AttributeProto) pb.AttributeProto_AttributeType {
	if t := ap.GetType(); t != pb.AttributeProto_UNDEFINED {
		return t
	}
	switch {
	case ap.F != nil:
		return pb.AttributeProto_FLOAT
	case ap.I != nil:
		return pb.AttributeProto_INT
	case ap.S != nil:
		return pb.AttributeProto_STRING
	case ap.T != nil:
		return pb.AttributeProto_TENSOR
	case ap.G != nil:
		return pb.AttributeProto_GRAPH
	case ap.SparseTensor != nil:
		return pb.AttributeProto_SPARSE_TENSOR
	case ap.Tp != nil:
		return pb.AttributeProto_TYPE_PROTO
	case len(ap.Floats) > 0:
		return pb.AttributeProto_FLOATS
	case len(ap.Ints) > 0:
		return pb.AttributeProto_INTS
	case len(ap.Strings) > 0:
		return pb.AttributeProto_STRINGS
	case len(ap.Tensors) > 0:
		return pb.AttributeProto_TENSORS
	case len(ap.Graphs) > 0:
		return pb.AttributeProto_GRAPHS
	case len(ap.SparseTensors) > 0:
		return pb.AttributeProto_SPARSE_TENSORS
	case len(ap.TypeProtos) > 0:
		return pb.AttributeProto_TYPE_PROTOS
	}
	return pb.AttributeProto_UNDEFINED
}

func (im *importer) importAttr(ap *pb.AttributeProto, sc *scope, g *ir.Graph, opsets map[string]int64) (*ir.Attr, error) {
	a := &ir.Attr{Name: ap.GetName()}
	switch attrType(ap) {
	case pb.AttributeProto_FLOAT:
		a.Kind, a.F = ir.AttrFloat, ap.GetF()
	case pb.AttributeProto_INT:
		a.Kind, a.I = ir.AttrInt, ap.GetI()
	case pb.AttributeProto_STRING:
		a.Kind, a.S = ir.AttrString, string(ap.GetS())
	case pb.AttributeProto_FLOATS:
		a.Kind, a.Floats = ir.AttrFloats, append([]float32{}, ap.Floats...)
	case pb.AttributeProto_INTS:
		a.Kind, a.Ints = ir.AttrInts, append([]int64{}, ap.Ints...)
	case pb.AttributeProto_STRINGS:
		a.Kind = ir.AttrStrings
		a.Strings = make([]string, len(ap.Strings))
		for i, s := range ap.Strings {
			a.Strings[i] = string(s)
		}
	case pb.AttributeProto_TENSOR:
		if ap.T == nil {
			return nil, fmt.Errorf("type is tensor but no tensor is set")
		}
		t, err := im.tensor(ap.T)
		if err != nil {
			return nil, err
		}
		a.Kind, a.T = ir.AttrTensor, t
	case pb.AttributeProto_SPARSE_TENSOR:
		// The IR has no sparse tensors: Constant's sparse_value becomes the
		// dense tensor it stands for.
		if ap.SparseTensor == nil {
			return nil, fmt.Errorf("type is sparse_tensor but no sparse tensor is set")
		}
		t, err := im.sparse(ap.SparseTensor)
		if err != nil {
			return nil, err
		}
		a.Kind, a.T = ir.AttrTensor, t
	case pb.AttributeProto_TENSORS:
		a.Kind = ir.AttrTensors
		for _, tp := range ap.Tensors {
			t, err := im.tensor(tp)
			if err != nil {
				return nil, err
			}
			a.Tensors = append(a.Tensors, t)
		}
	case pb.AttributeProto_SPARSE_TENSORS:
		a.Kind = ir.AttrTensors
		for _, sp := range ap.SparseTensors {
			t, err := im.sparse(sp)
			if err != nil {
				return nil, err
			}
			a.Tensors = append(a.Tensors, t)
		}
	case pb.AttributeProto_GRAPH:
		if ap.G == nil {
			return nil, fmt.Errorf("type is graph but no graph is set")
		}
		sg, err := im.importGraph(ap.G, sc, g, opsets)
		if err != nil {
			return nil, err
		}
		a.Kind, a.G = ir.AttrGraph, sg
	case pb.AttributeProto_GRAPHS:
		a.Kind = ir.AttrGraphs
		for _, gp := range ap.Graphs {
			sg, err := im.importGraph(gp, sc, g, opsets)
			if err != nil {
				return nil, err
			}
			a.Graphs = append(a.Graphs, sg)
		}
	case pb.AttributeProto_TYPE_PROTO:
		if ap.Tp == nil {
			return nil, fmt.Errorf("type is type_proto but no type is set")
		}
		t, err := im.typeFromProto(ap.Tp)
		if err != nil {
			return nil, err
		}
		a.Kind, a.Types = ir.AttrTypeProto, []ir.Type{t}
	case pb.AttributeProto_TYPE_PROTOS:
		a.Kind = ir.AttrTypeProtos
		for _, tp := range ap.TypeProtos {
			t, err := im.typeFromProto(tp)
			if err != nil {
				return nil, err
			}
			a.Types = append(a.Types, t)
		}
	default:
		return nil, fmt.Errorf("has no value or an unknown type %d", ap.GetType())
	}
	return a, nil
}

// freeNames adds to out the names gp reads but does not define: what a
// subgraph captures from enclosing graphs.
func freeNames(gp *pb.GraphProto, out map[string]bool) {
	defined := map[string]bool{}
	for _, vi := range gp.Input {
		defined[vi.GetName()] = true
	}
	for _, t := range gp.Initializer {
		defined[t.GetName()] = true
	}
	for _, sp := range gp.SparseInitializer {
		defined[sp.GetValues().GetName()] = true
	}
	for _, np := range gp.Node {
		for _, o := range np.Output {
			defined[o] = true
		}
	}
	use := func(name string) {
		if name != "" && !defined[name] {
			out[name] = true
		}
	}
	for _, np := range gp.Node {
		for _, in := range np.Input {
			use(in)
		}
		for _, a := range np.Attribute {
			sub := map[string]bool{}
			if a.G != nil {
				freeNames(a.G, sub)
			}
			for _, sg := range a.Graphs {
				freeNames(sg, sub)
			}
			for name := range sub {
				use(name)
			}
		}
	}
	for _, vi := range gp.Output {
		use(vi.GetName())
	}
}

// reads lists the names a node depends on: its inputs and its subgraphs'
// captures, in a deterministic order.
func reads(np *pb.NodeProto) []string {
	var out []string
	seen := map[string]bool{}
	for _, in := range np.Input {
		if in != "" && !seen[in] {
			seen[in] = true
			out = append(out, in)
		}
	}
	sub := map[string]bool{}
	for _, a := range np.Attribute {
		if a.G != nil {
			freeNames(a.G, sub)
		}
		for _, sg := range a.Graphs {
			freeNames(sg, sub)
		}
	}
	names := sortedKeys(sub)
	for _, name := range names {
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	return out
}

// sortNodes orders nodes topologically. ONNX requires that order but
// files merely out of order are common enough to accept; the sort is
// stable (among ready nodes the earliest in the file goes first), so an
// ordered file keeps its order exactly.
func sortNodes(entries []nodeEntry) ([]nodeEntry, error) {
	producer := map[string]int{}
	for i, e := range entries {
		for _, o := range e.np.Output {
			if o == "" {
				continue
			}
			if j, dup := producer[o]; dup {
				return nil, fmt.Errorf("value %q is defined twice: as output of %s and of %s; values must be assigned once (SSA)", o, entries[j], e)
			}
			producer[o] = i
		}
	}
	preds := make([][]int, len(entries))
	succs := make([][]int, len(entries))
	ordered := true
	for i, e := range entries {
		for _, name := range reads(e.np) {
			j, ok := producer[name]
			if !ok {
				continue
			}
			if j == i {
				return nil, fmt.Errorf("graph has a cycle: %s reads its own output %q", e, name)
			}
			if j > i {
				ordered = false
			}
			preds[i] = append(preds[i], j)
			succs[j] = append(succs[j], i)
		}
	}
	if ordered {
		return entries, nil
	}
	indeg := make([]int, len(entries))
	ready := &intHeap{}
	for i := range entries {
		indeg[i] = len(preds[i])
		if indeg[i] == 0 {
			heap.Push(ready, i)
		}
	}
	out := make([]nodeEntry, 0, len(entries))
	done := make([]bool, len(entries))
	for ready.Len() > 0 {
		i := heap.Pop(ready).(int)
		done[i] = true
		out = append(out, entries[i])
		for _, s := range succs[i] {
			if indeg[s]--; indeg[s] == 0 {
				heap.Push(ready, s)
			}
		}
	}
	if len(out) == len(entries) {
		return out, nil
	}
	return nil, cycleError(entries, preds, done)
}

// cycleError names the nodes of one cycle among the nodes the sort could
// not place. Every such node has a predecessor that was not placed either,
// so walking predecessors must come back to a node already seen.
func cycleError(entries []nodeEntry, preds [][]int, done []bool) error {
	start := 0
	for done[start] {
		start++
	}
	pos := map[int]int{}
	var path []int
	for i := start; ; {
		if p, seen := pos[i]; seen {
			path = path[p:]
			break
		}
		pos[i] = len(path)
		path = append(path, i)
		next := -1
		for _, j := range preds[i] {
			if !done[j] {
				next = j
				break
			}
		}
		if next < 0 { // cannot happen (see above); name what we have
			break
		}
		i = next
	}
	// path runs consumer -> producer; print it in data-flow order, from
	// the node that comes first in the file.
	cyc := make([]int, len(path))
	first := 0
	for k := range path {
		cyc[k] = path[len(path)-1-k]
		if cyc[k] < cyc[first] {
			first = k
		}
	}
	cyc = append(cyc[first:], cyc[:first]...)
	parts := make([]string, 0, len(cyc)+1)
	for _, i := range cyc {
		parts = append(parts, entries[i].String())
	}
	parts = append(parts, entries[cyc[0]].String())
	return fmt.Errorf("graph has a cycle: %s", strings.Join(parts, " -> "))
}

type intHeap []int

func (h intHeap) Len() int           { return len(h) }
func (h intHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h intHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *intHeap) Push(x any)        { *h = append(*h, x.(int)) }
func (h *intHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// customDomain reports whether ops of domain d are custom ops, which the
// op table does not list: any domain but ONNX's own.
func customDomain(d string) bool {
	return d != "" && d != "ai.onnx" && !strings.HasPrefix(d, "ai.onnx.")
}

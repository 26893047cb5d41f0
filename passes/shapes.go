package passes

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/cuvil/cuvil/ir"
)

// Shapes infers the dtype and shape of every value, subgraphs included.
var Shapes = &Pass{
	Name:     "shapes",
	Doc:      "infer the dtype and shape of every value (symbolic dims kept, declared types only as hints)",
	Required: true,
	Run: func(m *ir.Model) error {
		_, err := InferShapes(m)
		return err
	},
}

// ShapeInfo is what shape inference knows beyond Value.Type: the contents of
// small integer tensors (shapes, sizes, indices) and of the bool tensors
// computed from them (0 or 1), element by element, each a constant or a
// symbol. It lets Reshape(x, Concat(Shape(y)[0], 64)) get the
// shape [seq,64] even though seq is only known at run time, and lets
// constfold replace such tensors when all their elements are constant.
type ShapeInfo struct {
	Values map[*ir.Value][]ir.Dim
}

// maxTracked bounds the tensors whose contents inference tracks: shape
// tensors are short.
const maxTracked = 64

// InferShapes sets Value.Type on every node output of m's graph and its
// subgraphs and returns the tracked contents of shape-like tensors.
//
// Declared types (from the model's value_info and outputs) are hints only:
// inference wins wherever it knows something, and a declared type fills in
// only an unknown dtype, an unknown rank, or a dim inference had to invent a
// symbol for.
func InferShapes(m *ir.Model) (*ShapeInfo, error) {
	x := &inferer{
		m:     m,
		info:  &ShapeInfo{Values: map[*ir.Value][]ir.Dim{}},
		taken: map[string]bool{},
		fresh: map[string]bool{},
		byKey: map[string]ir.Dim{},
	}
	m.Graph.Walk(func(g *ir.Graph) {
		for _, v := range g.Inputs {
			for _, d := range v.Type.Shape {
				if d.Sym != "" {
					x.taken[d.Sym] = true
				}
			}
		}
	})
	if err := x.graph(m.Graph); err != nil {
		return nil, err
	}
	return x.info, nil
}

type inferFunc func(x *inferer, n *ir.Node) error

// inferFuncs maps an ai.onnx op name (another domain's op as
// "domain::Op") to its inference rule; the shapes_*.go files fill it by op
// family.
var inferFuncs = map[string]inferFunc{}

func reg(f inferFunc, ops ...string) {
	for _, op := range ops {
		if _, dup := inferFuncs[op]; dup {
			panic("passes: two shape rules for " + op)
		}
		inferFuncs[op] = f
	}
}

// InferableOps lists the ops shape inference has a rule for, sorted.
func InferableOps() []string {
	out := make([]string, 0, len(inferFuncs))
	for op := range inferFuncs {
		out = append(out, op)
	}
	sort.Strings(out)
	return out
}

type inferer struct {
	m     *ir.Model
	info  *ShapeInfo
	taken map[string]bool   // symbol names in use
	fresh map[string]bool   // symbols this run invented (unknown sizes)
	byKey map[string]ir.Dim // invented dims by the expression they stand for
	node  *ir.Node
	nth   int // symbols invented for the current node
	// chain names the control-flow nodes and graph attributes enclosing
	// the graph being inferred, outermost first, for error messages.
	chain []string
	// conflict is the first declared type (value_info, graph output) the
	// current node's inferred type contradicts.
	conflict error
}

func (x *inferer) graph(g *ir.Graph) error {
	for _, c := range g.Consts {
		if c.Const != nil {
			c.Type = c.Const.Type()
			x.trackTensor(c, c.Const)
		}
	}
	for _, n := range g.Nodes {
		if err := x.infer(n); err != nil {
			return err
		}
	}
	return nil
}

func (x *inferer) infer(n *ir.Node) error {
	at(x.m, n)
	x.node, x.nth = n, 0
	f := inferFuncs[n.Op]
	if n.Domain != "" && n.Domain != "ai.onnx" {
		f = inferFuncs[n.Domain+"::"+n.Op]
	}
	if f == nil {
		for i, v := range n.Outputs {
			if v != nil && !hintUsable(v.Type) {
				where := n.String()
				if len(x.chain) > 0 {
					where = strings.Join(x.chain, " > ") + " > " + where
				}
				return &chainError{msg: fmt.Sprintf("%s: no shape inference for op %s (domain %q) and the model declares no type for output %d (%s)", where, n.Op, n.Domain, i, v.Name)}
			}
		}
		return nil
	}
	// An input of unknown rank or dtype leaves the outputs unknown; the
	// declared types, if any, fill in.
	// The op's type constraints still give the outputs' dtype where an
	// output shares its letter with a known input or the letter allows
	// one dtype.
	if !isControlFlow(n.Op) {
		for _, v := range n.Inputs {
			if v != nil && v.Type.Kind == ir.TensorKind && (v.Type.Unranked || v.Type.DType == ir.Undefined) {
				for i, o := range n.Outputs {
					if k, ok := schemaKind(n, i); ok {
						// A sequence or map output (ZipMap's): its
						// kind is known, keep a declared type of it.
						if o != nil && o.Type.Kind != k {
							x.set(o, ir.Type{Kind: k})
						}
						continue
					}
					x.set(o, ir.Type{DType: schemaDType(n, i), Unranked: true})
				}
				return nil
			}
		}
	}
	if ins := unpackedInputs(n); ins != nil {
		// Prepacked weights (prepack.go) are 1-D; the rules see their
		// ONNX shapes, which the node's attributes keep.
		orig := n.Inputs
		n.Inputs = ins
		defer func() { n.Inputs = orig }()
	}
	if err := f(x, n); err != nil {
		var u *chainError
		if errors.As(err, &u) {
			return err // names the whole chain already
		}
		if len(x.chain) > 0 {
			// Inside a subgraph: name the enclosing nodes and graph
			// attributes, as for an untyped value.
			return &chainError{msg: fmt.Sprintf("%s > %v: %v", strings.Join(x.chain, " > "), n, err), err: err}
		}
		return fmt.Errorf("%v: %w", n, err)
	}
	if err := checkShapes(n); err != nil {
		return fmt.Errorf("%v: %w", n, err)
	}
	if err := x.conflict; err != nil {
		x.conflict = nil
		return fmt.Errorf("%v: %w", n, err)
	}
	for i, v := range n.Outputs {
		if v != nil && v.Type.Kind == ir.TensorKind && v.Type.DType == ir.Undefined {
			return x.untyped(n, i)
		}
	}
	return nil
}

// schemaKind is the kind output i of n has by the op table when that is
// a single kind other than tensor.
func schemaKind(n *ir.Node, i int) (ir.TypeKind, bool) {
	s := ir.LookupOp(n.Domain, n.Op)
	if s == nil {
		return 0, false
	}
	f, ok := ir.Formal(s.Outputs, i)
	if !ok || f.Heterogeneous {
		return 0, false
	}
	if ks := s.Kinds[f.Type]; len(ks) == 1 && ks[0] != ir.TensorKind {
		return ks[0], true
	}
	return 0, false
}

// schemaDType is the dtype output i of n must have by the op table's type
// constraints alone: that of an input bound to the same constraint letter,
// or the letter's only dtype. Undefined when neither says.
func schemaDType(n *ir.Node, i int) ir.DType {
	s := ir.LookupOp(n.Domain, n.Op)
	if s == nil {
		return ir.Undefined
	}
	f, ok := ir.Formal(s.Outputs, i)
	if !ok {
		return ir.Undefined
	}
	if !f.Heterogeneous {
		for j, v := range n.Inputs {
			if g, ok := ir.Formal(s.Inputs, j); ok && v != nil && g.Type == f.Type && v.Type.Kind == ir.TensorKind && v.Type.DType != ir.Undefined {
				return v.Type.DType
			}
		}
	}
	if dts := s.Types[f.Type]; len(dts) == 1 && len(s.Kinds[f.Type]) <= 1 {
		return dts[0]
	}
	return ir.Undefined
}

// untyped is the error for output i of n whose dtype nothing determines:
// it names the value, the chain of enclosing control-flow nodes and what
// is known about the value and the node's inputs.
func (x *inferer) untyped(n *ir.Node, i int) error {
	v := n.Outputs[i]
	where := n.String()
	if len(x.chain) > 0 {
		where = strings.Join(x.chain, " > ") + " > " + where
	}
	var known []string
	if !v.Type.Unranked {
		known = append(known, fmt.Sprintf("its shape is %v", v.Type.Shape))
	} else {
		known = append(known, "its rank is unknown")
	}
	for j, in := range n.Inputs {
		if in != nil {
			known = append(known, fmt.Sprintf("input %d (%s) is %s", j, in.Name, in.Type))
		}
	}
	if n.Op == "If" {
		for _, name := range []string{"then_branch", "else_branch"} {
			if a := n.Attr(name); a != nil && a.G != nil && i < len(a.G.Outputs) {
				o := a.G.Outputs[i]
				known = append(known, fmt.Sprintf("%s output %s is %s", name, o.Name, o.Type))
			}
		}
	}
	known = append(known, "the model declares no type for it (value_info)")
	return &chainError{msg: fmt.Sprintf("%s: output %d (%s): dtype could not be inferred: %s", where, i, v.Name, strings.Join(known, "; "))}
}

// chainError is an error inside a subgraph, or untyped's; its message
// names the enclosing nodes, so the control-flow rules above it do not
// prefix them again.
type chainError struct {
	msg string
	err error // the rule's error, if any
}

func (e *chainError) Error() string { return e.msg }
func (e *chainError) Unwrap() error { return e.err }

func isControlFlow(op string) bool {
	return op == "If" || op == "Loop" || op == "Scan" || op == "SequenceMap"
}

// hintUsable reports whether a declared type says anything. The zero Type
// (what the importer leaves when nothing is declared) has no dtype.
func hintUsable(t ir.Type) bool {
	if t.Kind != ir.TensorKind {
		return t.Elem != nil
	}
	return t.DType != ir.Undefined
}

// set gives v the inferred type t, merged with v's current (declared) type.
func (x *inferer) set(v *ir.Value, t ir.Type) {
	if v == nil {
		return
	}
	h := v.Type
	if t.Kind == ir.TensorKind && h.Kind == ir.TensorKind && hintUsable(h) {
		// A model's declared types must agree with inference; the
		// fused ops' types are the passes' own (concat-into gives a
		// FusedConv its slice of the Concat's output).
		if x.conflict == nil && (x.node == nil || x.node.Domain != ir.CuvilDomain) {
			x.conflict = declaredConflict(v, h, t)
		}
		if t.DType == ir.Undefined {
			t.DType = h.DType
		}
		switch {
		case t.Unranked && !h.Unranked:
			t.Unranked = false
			t.Shape = append(ir.Shape(nil), h.Shape...)
		case !t.Unranked && !h.Unranked && len(t.Shape) == len(h.Shape):
			for i, d := range t.Shape {
				if x.fresh[d.Sym] && h.Shape[i].IsConst() {
					t.Shape[i] = h.Shape[i]
				}
			}
		}
	}
	v.Type = t
}

// declaredConflict says how the inferred type t of v contradicts its
// declared type h: another dtype, another rank, or another constant size
// of a dim. Declared symbols are names, not sizes: they never conflict.
func declaredConflict(v *ir.Value, h, t ir.Type) error {
	switch {
	case h.DType != ir.Undefined && t.DType != ir.Undefined && h.DType != t.DType:
	case h.Unranked || t.Unranked:
		return nil
	case len(h.Shape) != len(t.Shape):
	default:
		for i, d := range h.Shape {
			if e := t.Shape[i]; d.IsConst() && e.IsConst() && d.Size != e.Size {
				return fmt.Errorf("value %q is declared %s but computes %s (dim %d)", v.Name, h, t, i)
			}
		}
		return nil
	}
	return fmt.Errorf("value %q is declared %s but computes %s", v.Name, h, t)
}

// setOut sets output i of the current node, when present.
func (x *inferer) setOut(n *ir.Node, i int, dt ir.DType, s ir.Shape) {
	if i < len(n.Outputs) {
		x.set(n.Outputs[i], ir.TensorType(dt, s))
	}
}

// freshDim invents a symbol for a size inference cannot know. Names are
// deterministic (node name and a counter), so repeated runs agree. A
// non-empty key makes every request for the same expression share one symbol.
func (x *inferer) freshDim(key string) ir.Dim {
	if key != "" {
		if d, ok := x.byKey[key]; ok {
			return d
		}
	}
	base := x.node.Name
	if base == "" {
		base = x.node.Op
	}
	base = sanitizeSym(base)
	var name string
	for {
		x.nth++
		name = base + "_d" + strconv.Itoa(x.nth)
		if !x.taken[name] {
			break
		}
	}
	x.taken[name] = true
	x.fresh[name] = true
	d := ir.S(name)
	if key != "" {
		x.byKey[key] = d
	}
	return d
}

func sanitizeSym(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '_'
		}
	}
	if len(b) == 0 || b[0] >= '0' && b[0] <= '9' {
		return "s" + string(b)
	}
	return string(b)
}

// ---- inputs ----

// in returns the type of input i, which must be present and a tensor.
func (x *inferer) in(n *ir.Node, i int) (ir.Type, error) {
	v := n.Input(i)
	if v == nil {
		return ir.Type{}, fmt.Errorf("input %d is missing", i)
	}
	if v.Type.Kind != ir.TensorKind {
		return ir.Type{}, fmt.Errorf("input %d (%s) is %s, want a tensor", i, v.Name, v.Type)
	}
	return v.Type, nil
}

// inRank is in plus a rank check (rank < 0: any rank; min..max otherwise).
func (x *inferer) inRank(n *ir.Node, i, min, max int) (ir.Type, error) {
	t, err := x.in(n, i)
	if err != nil {
		return t, err
	}
	if r := len(t.Shape); r < min || max >= 0 && r > max {
		if min == max {
			return t, fmt.Errorf("input %d (%s) has rank %d, want %d", i, n.Inputs[i].Name, r, min)
		}
		return t, fmt.Errorf("input %d (%s) has rank %d, want %d..%d", i, n.Inputs[i].Name, r, min, max)
	}
	return t, nil
}

// vals returns the tracked contents of v.
func (x *inferer) vals(v *ir.Value) ([]ir.Dim, bool) {
	if v == nil {
		return nil, false
	}
	d, ok := x.info.Values[v]
	return d, ok
}

// ints returns v's contents when they are known integers.
func (x *inferer) ints(v *ir.Value) ([]int64, bool) {
	if v == nil {
		return nil, false
	}
	if v.Const != nil && (v.Const.DType.IsInt() || v.Const.DType == ir.Bool) {
		return v.Const.Int64s(), true
	}
	d, ok := x.info.Values[v]
	if !ok {
		return nil, false
	}
	return ir.Shape(d).Consts()
}

// floats returns v's contents when it is a constant of a numeric dtype.
func (x *inferer) floats(v *ir.Value) ([]float64, bool) {
	if v == nil {
		return nil, false
	}
	if v.Const != nil && v.Const.DType.IsNumeric() {
		return v.Const.Float64s(), true
	}
	if is, ok := x.ints(v); ok {
		f := make([]float64, len(is))
		for i, n := range is {
			f[i] = float64(n)
		}
		return f, true
	}
	return nil, false
}

// track records the contents of v (an integer or bool tensor of rank <=
// 1; a bool's elements are 0 and 1).
func (x *inferer) track(v *ir.Value, d []ir.Dim) {
	if v == nil || len(d) > maxTracked || !trackable(v.Type.DType) || len(v.Type.Shape) > 1 {
		return
	}
	x.info.Values[v] = d
}

// trackable reports whether inference follows the contents of tensors of
// dtype dt: integers (shapes, sizes, indices) and bools (conditions on
// them, such as an If's Equal(Size(x), 4)).
func trackable(dt ir.DType) bool { return dt.IsInt() || dt == ir.Bool }

func (x *inferer) trackTensor(v *ir.Value, t *ir.Tensor) {
	if !trackable(t.DType) || len(t.Shape) > 1 || t.NumElements() > maxTracked {
		return
	}
	is := t.Int64s()
	d := make([]ir.Dim, len(is))
	for i, n := range is {
		d[i] = ir.D(n)
	}
	x.info.Values[v] = d
}

// intsAttrOrInput reads a list that older op versions take as an attribute
// and newer ones as input i (axes, pads, split, starts...). present says
// whether either form was given; ok whether its value is known.
func (x *inferer) intsAttrOrInput(n *ir.Node, attr string, i int) (vals []int64, present, ok bool) {
	if v := n.Input(i); v != nil {
		is, ok := x.ints(v)
		return is, true, ok
	}
	if a := n.Attr(attr); a != nil {
		return a.Ints, true, true
	}
	return nil, false, true
}

// ---- dims ----

func normAxis(axis int64, rank int) (int, error) {
	if axis < -int64(rank) || axis >= int64(rank) {
		return 0, fmt.Errorf("axis %d is out of range for rank %d", axis, rank)
	}
	if axis < 0 {
		axis += int64(rank)
	}
	return int(axis), nil
}

func normAxes(axes []int64, rank int) ([]int, error) {
	out := make([]int, len(axes))
	seen := map[int]bool{}
	for i, a := range axes {
		ax, err := normAxis(a, rank)
		if err != nil {
			return nil, err
		}
		if seen[ax] {
			return nil, fmt.Errorf("axis %d is repeated in %v", a, axes)
		}
		seen[ax] = true
		out[i] = ax
	}
	return out, nil
}

// broadcast applies ONNX multidirectional broadcasting. A symbol against 1
// stays the symbol; against a constant N > 1 it becomes N (the only size
// that can run); two different symbols give a fresh one.
func (x *inferer) broadcast(shapes ...ir.Shape) (ir.Shape, error) {
	rank := 0
	for _, s := range shapes {
		rank = max(rank, len(s))
	}
	out := make(ir.Shape, rank)
	for i := range out {
		d := ir.D(1)
		for _, s := range shapes {
			j := i - (rank - len(s))
			if j < 0 {
				continue
			}
			e := s[j]
			switch {
			case d == e, e == ir.D(1):
			case d == ir.D(1):
				d = e
			case d.IsConst() && e.IsConst():
				return nil, fmt.Errorf("shapes %v do not broadcast: dim %d is %d in one and %d in another", shapes, i, d.Size, e.Size)
			case d.IsConst():
			case e.IsConst():
				d = e
			default:
				a, b := d.Sym, e.Sym
				if a > b {
					a, b = b, a
				}
				d = x.freshDim("broadcast(" + a + "," + b + ")")
			}
		}
		out[i] = d
	}
	return out, nil
}

// satMul is a*b for dims (a, b >= 0), saturated at MaxInt64 instead of
// wrapping, so that an overflowing shape fails checkShapes instead of
// becoming a small one.
func satMul(a, b int64) int64 {
	if a < 0 || b < 0 {
		return a * b // a negative dim is an error checkShapes reports
	}
	if a != 0 && b > math.MaxInt64/a {
		return math.MaxInt64
	}
	return a * b
}

// MaxElements bounds the element count of any value's known shape (2^48):
// past it, sizes in bytes could overflow, and no machine holds it anyway.
const MaxElements = 1 << 48

// checkShapes refuses an output whose known dims are negative or whose
// element count exceeds MaxElements (an overflowing Tile, Expand,
// ConstantOfShape or Reshape), naming the output.
func checkShapes(n *ir.Node) error {
	for i, v := range n.Outputs {
		if v == nil || v.Type.Kind != ir.TensorKind || v.Type.Unranked {
			continue
		}
		count := int64(1)
		for _, d := range v.Type.Shape {
			if !d.IsConst() {
				continue
			}
			if d.Size < 0 {
				return fmt.Errorf("output %d (%s) would have shape %v: a negative dim", i, v.Name, v.Type.Shape)
			}
			count = satMul(count, d.Size)
		}
		if count > MaxElements {
			why := "more than 2^48 elements"
			for _, d := range v.Type.Shape {
				if d.IsConst() && d.Size == math.MaxInt64 {
					why = "a dim overflows int64"
				}
			}
			return fmt.Errorf("output %d (%s) would have shape %v: %s", i, v.Name, v.Type.Shape, why)
		}
	}
	return nil
}

// product is c times the product of syms: the size of a group of dims.
type product struct {
	c    int64
	syms []string // sorted
}

func productOf(dims []ir.Dim) product {
	p := product{c: 1}
	for _, d := range dims {
		if d.IsConst() {
			p.c = satMul(p.c, d.Size)
		} else {
			p.syms = append(p.syms, d.Sym)
		}
	}
	sort.Strings(p.syms)
	return p
}

func (p product) key() string {
	return strconv.FormatInt(p.c, 10) + "*" + strings.Join(p.syms, "*")
}

// div returns p/q when it is exact: q's symbols all cancel and the constant
// divides.
func (p product) div(q product) (product, bool) {
	if q.c == 0 || p.c%q.c != 0 {
		return product{}, false
	}
	rest := append([]string(nil), p.syms...)
	for _, s := range q.syms {
		i := sort.SearchStrings(rest, s)
		if i == len(rest) || rest[i] != s {
			return product{}, false
		}
		rest = append(rest[:i], rest[i+1:]...)
	}
	return product{c: p.c / q.c, syms: rest}, true
}

// dim turns a product into one dim: a constant, a lone symbol, or a fresh
// symbol shared by every equal product.
func (x *inferer) dim(p product) ir.Dim {
	switch {
	case len(p.syms) == 0:
		return ir.D(p.c)
	case p.c == 0:
		return ir.D(0)
	case len(p.syms) == 1 && p.c == 1:
		return ir.S(p.syms[0])
	}
	return x.freshDim("product(" + p.key() + ")")
}

func (x *inferer) prodDim(dims []ir.Dim) ir.Dim { return x.dim(productOf(dims)) }

// mulDim multiplies a dim by a constant.
func (x *inferer) mulDim(d ir.Dim, k int64) ir.Dim {
	if d.IsConst() {
		return ir.D(satMul(d.Size, k))
	}
	return x.dim(product{c: k, syms: []string{d.Sym}})
}

// divDim divides a dim by a constant, exactly.
func (x *inferer) divDim(d ir.Dim, k int64) (ir.Dim, error) {
	if k <= 0 {
		return ir.Dim{}, fmt.Errorf("division of dim %v by %d", d, k)
	}
	if d.IsConst() {
		if d.Size%k != 0 {
			return ir.Dim{}, fmt.Errorf("dim %d is not a multiple of %d", d.Size, k)
		}
		return ir.D(d.Size / k), nil
	}
	if k == 1 {
		return d, nil
	}
	return x.freshDim("div(" + d.Sym + "," + strconv.FormatInt(k, 10) + ")"), nil
}

// addDim adds a constant to a dim.
func (x *inferer) addDim(d ir.Dim, k int64) ir.Dim {
	if d.IsConst() {
		if k > 0 && d.Size > math.MaxInt64-k {
			return ir.D(math.MaxInt64)
		}
		return ir.D(d.Size + k)
	}
	if k == 0 {
		return d
	}
	return x.freshDim("add(" + d.Sym + "," + strconv.FormatInt(k, 10) + ")")
}

// sameDim merges two dims that must be equal: a constant beats a symbol.
func sameDim(a, b ir.Dim) (ir.Dim, error) {
	switch {
	case a == b:
		return a, nil
	case a.IsConst() && b.IsConst():
		return a, fmt.Errorf("dims %d and %d must be equal", a.Size, b.Size)
	case a.IsConst():
		return a, nil
	case b.IsConst():
		return b, nil
	}
	return a, nil
}

func constDims(ns []int64) []ir.Dim {
	d := make([]ir.Dim, len(ns))
	for i, n := range ns {
		d[i] = ir.D(n)
	}
	return d
}

// attrDType reads a dtype attribute ("to", "dtype"...).
func attrDType(n *ir.Node, name string, def ir.DType) (ir.DType, error) {
	a := n.Attr(name)
	if a == nil {
		return def, nil
	}
	dt := ir.DType(a.I)
	if a.Kind != ir.AttrInt || !dt.Valid() {
		return 0, fmt.Errorf("attribute %s: invalid dtype %d", name, a.I)
	}
	return dt, nil
}

// clamp limits v to [lo, hi].
func clamp(v, lo, hi int64) int64 { return min(max(v, lo), hi) }

// bigIndex: ends at or past this (PyTorch exports INT64_MAX, some tools
// INT32_MAX) mean "to the end".
const bigIndex = math.MaxInt32

func cloneShape(s ir.Shape) ir.Shape { return append(ir.Shape{}, s...) }

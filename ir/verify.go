package ir

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// maxVerifyErrors caps the errors one Verify reports: past a few dozen the
// rest are usually echoes of the first.
const maxVerifyErrors = 20

// Verify checks the invariants every pass relies on: SSA (each value
// defined once, before its uses, subgraphs reading outer values only from
// enclosing scopes), known ops at versions the model's opsets resolve to,
// arity and attributes per the op table, dtypes consistent with the type
// constraints where they are known, defined graph outputs and well-formed
// constants. It returns every problem found (up to 20), joined.
func Verify(m *Model) error {
	if m == nil || m.Graph == nil {
		return errors.New("model has no graph")
	}
	v := &verifier{opsets: m.Opsets}
	v.graph(m.Graph, nil)
	return v.result()
}

// VerifyGraph is Verify without a model: node versions are checked to be
// versions of their op, not against an opset import.
func VerifyGraph(g *Graph) error {
	v := &verifier{}
	v.graph(g, nil)
	return v.result()
}

type verifier struct {
	opsets  map[string]int64 // nil: no model
	errs    []error
	dropped int
	defined map[*Value]string // value -> where it was defined, for messages
}

func (v *verifier) errorf(format string, args ...any) {
	if len(v.errs) >= maxVerifyErrors {
		v.dropped++
		return
	}
	v.errs = append(v.errs, fmt.Errorf(format, args...))
}

func (v *verifier) result() error {
	if v.dropped > 0 {
		v.errs = append(v.errs, fmt.Errorf("... and %d more errors", v.dropped))
	}
	return errors.Join(v.errs...)
}

// scope is the set of values visible at a point: those defined so far in
// a graph and, through parent, in the graphs enclosing it.
type scope struct {
	vals   map[*Value]bool
	names  map[string]*Value
	parent *scope
}

func (s *scope) lookup(name string) *Value {
	for ; s != nil; s = s.parent {
		if x, ok := s.names[name]; ok {
			return x
		}
	}
	return nil
}

func (s *scope) has(x *Value) bool {
	for ; s != nil; s = s.parent {
		if s.vals[x] {
			return true
		}
	}
	return false
}

func graphLabel(g *Graph) string { return fmt.Sprintf("graph %q", g.Name) }

// define records a definition, reporting values defined twice and
// distinct visible values sharing a name (the text form refers to values
// by name; sibling subgraphs may reuse names).
func (v *verifier) define(sc *scope, x *Value, where string) {
	if v.defined == nil {
		v.defined = map[*Value]string{}
	}
	if prev, ok := v.defined[x]; ok {
		v.errorf("%s: value %s is already defined by %s", where, x, prev)
		return
	}
	v.defined[x] = where
	if x.Name == "" {
		v.errorf("%s: value has no name", where)
	} else if other := sc.lookup(x.Name); other != nil {
		v.errorf("%s: value name %s is also used by the value defined by %s", where, x, v.defined[other])
	} else {
		sc.names[x.Name] = x
	}
	sc.vals[x] = true
}

func (v *verifier) graph(g *Graph, parent *scope) {
	sc := &scope{vals: map[*Value]bool{}, names: map[string]*Value{}, parent: parent}
	for i, x := range g.Inputs {
		where := fmt.Sprintf("%s input %d", graphLabel(g), i)
		if x == nil {
			v.errorf("%s is nil", where)
			continue
		}
		v.define(sc, x, where)
		if x.Def != nil || x.Const != nil {
			v.errorf("%s %s: is a graph input but has a defining node or constant data", where, x)
		}
	}
	for i, x := range g.Consts {
		where := fmt.Sprintf("%s const %d", graphLabel(g), i)
		if x == nil {
			v.errorf("%s is nil", where)
			continue
		}
		v.define(sc, x, fmt.Sprintf("const %s", x))
		v.constant(x)
	}
	for _, n := range g.Nodes {
		if n == nil {
			v.errorf("%s: nil node", graphLabel(g))
			continue
		}
		v.node(n, sc)
		for _, x := range n.Outputs {
			if x == nil {
				continue
			}
			v.define(sc, x, n.String())
			if x.Def != n {
				v.errorf("%s: output %s has Def %v, want this node", n, x, defLabel(x.Def))
			}
		}
	}
	for i, x := range g.Outputs {
		switch {
		case x == nil:
			v.errorf("%s: output %d is nil", graphLabel(g), i)
		case !sc.has(x):
			v.errorf("%s: output %d %s is not defined", graphLabel(g), i, x)
		}
	}
}

func defLabel(n *Node) string {
	if n == nil {
		return "nil"
	}
	return n.String()
}

func (v *verifier) constant(x *Value) {
	if x.Const == nil {
		v.errorf("const %s: has no tensor", x)
		return
	}
	if x.Def != nil {
		v.errorf("const %s: has a defining node %s", x, x.Def)
	}
	if err := x.Const.Check(); err != nil {
		v.errorf("const %s: %v", x, err)
		return
	}
	if want := x.Const.Type(); !x.Type.Equal(want) {
		v.errorf("const %s: has type %s, want %s (its tensor's)", x, x.Type, want)
	}
}

func (v *verifier) node(n *Node, sc *scope) {
	for i, x := range n.Inputs {
		if x != nil && !sc.has(x) {
			v.errorf("%s: input %d %s is not defined before use", n, i, x)
		}
	}
	// Subgraphs see the values defined before this node.
	for _, a := range n.Attrs {
		if a.G != nil {
			v.graph(a.G, sc)
		}
		for _, g := range a.Graphs {
			v.graph(g, sc)
		}
	}
	s := LookupOp(n.Domain, n.Op)
	if s == nil {
		if n.Domain == "" || n.Domain == "ai.onnx" {
			v.errorf("%s: unknown op %s", n, n.Op)
		}
		// Ops of other domains without a schema (custom ops) are not
		// checked further.
		return
	}
	if !v.version(n, s) {
		return
	}
	minIn, maxIn, minOut, maxOut, older := s.Arity(n.Version)
	nIn := presentCount(n.Inputs)
	nOut := presentCount(n.Outputs)
	if nIn < minIn || (maxIn >= 0 && nIn > maxIn) {
		v.errorf("%s: has %d inputs, want %s", n, nIn, arityRange(minIn, maxIn))
	}
	if nOut < minOut || (maxOut >= 0 && nOut > maxOut) {
		v.errorf("%s: has %d outputs, want %s", n, nOut, arityRange(minOut, maxOut))
	}
	if !older {
		for i := 0; i < nIn && i < minIn; i++ {
			if f, ok := Formal(s.Inputs, i); ok && !f.Optional && n.Inputs[i] == nil {
				v.errorf("%s: input %d (%s) is missing", n, i, f.Name)
			}
		}
	}
	v.attrs(n, s)
	if !older {
		v.dtypes(n, s)
	}
}

// version checks the node's resolved version; false stops further checks.
func (v *verifier) version(n *Node, s *OpSchema) bool {
	if !slices.Contains(s.Versions, n.Version) {
		v.errorf("%s: version %d is not a version of %s (have %s)", n, n.Version, n.Op, joinInts(s.Versions))
		return false
	}
	if v.opsets == nil {
		return true
	}
	domain := n.Domain
	if domain == "ai.onnx" {
		domain = ""
	}
	opset, ok := v.opsets[domain]
	if !ok {
		v.errorf("%s: the model imports no opset for domain %q", n, domain)
		return false
	}
	want, ok := s.VersionFor(opset)
	if !ok {
		v.errorf("%s: op has no version for opset %d (versions %s)", n, opset, joinInts(s.Versions))
		return false
	}
	if want != n.Version {
		v.errorf("%s: version %d, want %d for opset %d", n, n.Version, want, opset)
	}
	return true
}

func joinInts(vs []int) string {
	parts := make([]string, len(vs))
	for i, x := range vs {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, ",")
}

func arityRange(lo, hi int) string {
	switch {
	case hi < 0:
		return fmt.Sprintf("at least %d", lo)
	case lo == hi:
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d to %d", lo, hi)
}

// presentCount is the count up to the last non-nil value: omitted
// trailing optionals are not there at all.
func presentCount(vs []*Value) int {
	n := len(vs)
	for n > 0 && vs[n-1] == nil {
		n--
	}
	return n
}

func (v *verifier) attrs(n *Node, s *OpSchema) {
	seen := map[string]bool{}
	for i, a := range n.Attrs {
		if a == nil {
			v.errorf("%s: attribute %d is nil", n, i)
			continue
		}
		if i > 0 && n.Attrs[i-1] != nil && n.Attrs[i-1].Name >= a.Name {
			v.errorf("%s: attributes not sorted by name: %q after %q", n, a.Name, n.Attrs[i-1].Name)
		}
		seen[a.Name] = true
		spec := s.AttrFor(a.Name, n.Version)
		if spec == nil {
			v.errorf("%s: unknown attribute %q for %s-%d", n, a.Name, n.Op, n.Version)
			continue
		}
		if a.Kind != spec.Kind {
			v.errorf("%s: attribute %q is %s, want %s", n, a.Name, a.Kind, spec.Kind)
		}
	}
	for _, spec := range s.Attrs {
		if spec.Required && spec.InVersion(n.Version) && !seen[spec.Name] {
			v.errorf("%s: missing required attribute %q", n, spec.Name)
		}
	}
}

// binding is one actual value bound to a constraint letter.
type binding struct {
	what string // "input 1 (W)"
	x    *Value
}

func (v *verifier) dtypes(n *Node, s *OpSchema) {
	var letters []string
	bound := map[string][]binding{}
	bind := func(args []ArgSpec, vals []*Value, kind string) {
		for i, x := range vals {
			f, ok := Formal(args, i)
			if !ok || x == nil {
				continue
			}
			if kind == "input" && i == 1 && x.Const != nil && x.Const.DType == BF16 && (n.Attr("packed_b_shape") != nil || n.Attr("packed_w_shape") != nil) {
				continue // B (or conv W) prepacked in bf16 (-precision bf16): A (X) keeps T
			}
			b := binding{fmt.Sprintf("%s %d (%s)", kind, i, f.Name), x}
			v.kind(n, s, f, b)
			if f.Heterogeneous {
				v.allowed(n, s, f.Type, b)
				continue
			}
			if _, ok := bound[f.Type]; !ok {
				letters = append(letters, f.Type)
			}
			bound[f.Type] = append(bound[f.Type], b)
		}
	}
	bind(s.Inputs, n.Inputs, "input")
	bind(s.Outputs, n.Outputs, "output")
	for _, l := range letters {
		var first *binding
		for i := range bound[l] {
			b := &bound[l][i]
			if !v.allowed(n, s, l, *b) {
				continue
			}
			dt := b.x.Type.ElemDType()
			if dt == Undefined {
				continue
			}
			if first == nil {
				first = b
				continue
			}
			if want := first.x.Type.ElemDType(); dt != want {
				v.errorf("%s: %s has dtype %s, want %s", n, b.what, dt, want)
			}
		}
	}
}

// kind checks the value is a tensor, sequence or optional as the formal's
// constraint says.
func (v *verifier) kind(n *Node, s *OpSchema, f ArgSpec, b binding) {
	kinds, ok := s.Kinds[f.Type]
	if !ok {
		kinds = []TypeKind{TensorKind}
	}
	t := b.x.Type
	if t.Kind == TensorKind && t.DType == Undefined {
		return // not known yet (the importer's type for what ONNX leaves undeclared or declares without an element type)
	}
	if !slices.Contains(kinds, t.Kind) {
		names := make([]string, len(kinds))
		for i, k := range kinds {
			names[i] = k.String()
		}
		v.errorf("%s: %s is a %s, want %s", n, b.what, b.x.Type.Kind, strings.Join(names, " or "))
	}
}

// allowed checks a known dtype is one the letter admits.
func (v *verifier) allowed(n *Node, s *OpSchema, letter string, b binding) bool {
	dt := b.x.Type.ElemDType()
	if dt == Undefined {
		return true
	}
	dts := s.Types[letter]
	if slices.Contains(dts, dt) {
		return true
	}
	names := make([]string, len(dts))
	for i, d := range dts {
		names[i] = d.String()
	}
	want := "one of " + strings.Join(names, ",")
	if len(dts) == 1 {
		want = names[0]
	}
	v.errorf("%s: %s has dtype %s, want %s", n, b.what, dt, want)
	return false
}

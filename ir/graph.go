package ir

import "fmt"

// Value is an SSA value: defined once, by a node, a graph input, or a
// constant (initializer). Values are compared by pointer.
type Value struct {
	Name  string
	Type  Type
	Def   *Node   // defining node; nil for graph inputs and constants
	Const *Tensor // non-nil for initializers and folded constants
}

func (v *Value) String() string { return "%" + v.Name }

// IsConst reports whether the value's contents are known at compile time.
func (v *Value) IsConst() bool { return v != nil && v.Const != nil }

// Node is one operation. Omitted optional inputs are nil in Inputs;
// omitted optional outputs are nil in Outputs.
type Node struct {
	Name    string
	Op      string
	Domain  string // "" is the default ONNX domain (ai.onnx)
	Version int    // op version resolved from the opset (since_version)
	Inputs  []*Value
	Outputs []*Value
	Attrs   []*Attr // sorted by name
	// Fused lists the imported nodes a folding or fusion pass merged into
	// this one, in graph order (the node itself among them when it stayed
	// and absorbed others); nil when no pass merged anything into it. It
	// is not an ONNX attribute: the printer shows it as a trailing comment
	// (which the parser skips), cuvil inspect -graph boxes it, and the
	// ONNX encoder ignores it.
	Fused []Origin
}

// Origin names one imported node a fused node stands for.
type Origin struct {
	Op   string // domain-qualified outside ai.onnx ("cuvil.Gelu")
	Name string
}

func (n *Node) String() string { return fmt.Sprintf("node %q (%s)", n.Name, n.Op) }

// Attr returns the attribute with the given name, or nil.
func (n *Node) Attr(name string) *Attr {
	for _, a := range n.Attrs {
		if a.Name == name {
			return a
		}
	}
	return nil
}

// AttrInt returns an int attribute or def.
func (n *Node) AttrInt(name string, def int64) int64 {
	if a := n.Attr(name); a != nil && a.Kind == AttrInt {
		return a.I
	}
	return def
}

// AttrFloat returns a float attribute or def.
func (n *Node) AttrFloat(name string, def float32) float32 {
	if a := n.Attr(name); a != nil && a.Kind == AttrFloat {
		return a.F
	}
	return def
}

// AttrString returns a string attribute or def.
func (n *Node) AttrString(name string, def string) string {
	if a := n.Attr(name); a != nil && a.Kind == AttrString {
		return a.S
	}
	return def
}

// AttrInts returns an ints attribute or def.
func (n *Node) AttrInts(name string, def []int64) []int64 {
	if a := n.Attr(name); a != nil && a.Kind == AttrInts {
		return a.Ints
	}
	return def
}

// SetAttr adds or replaces an attribute, keeping Attrs sorted.
func (n *Node) SetAttr(a *Attr) {
	for i, b := range n.Attrs {
		if b.Name == a.Name {
			n.Attrs[i] = a
			return
		}
		if b.Name > a.Name {
			n.Attrs = append(n.Attrs[:i], append([]*Attr{a}, n.Attrs[i:]...)...)
			return
		}
	}
	n.Attrs = append(n.Attrs, a)
}

// Input returns input i, or nil when absent.
func (n *Node) Input(i int) *Value {
	if i < len(n.Inputs) {
		return n.Inputs[i]
	}
	return nil
}

// AttrKind is the type of an attribute's value.
type AttrKind uint8

const (
	AttrUndefined AttrKind = iota
	AttrFloat
	AttrInt
	AttrString
	AttrTensor
	AttrGraph
	AttrFloats
	AttrInts
	AttrStrings
	AttrTensors
	AttrGraphs
	AttrTypeProto
	AttrTypeProtos
)

var attrKindNames = [...]string{"undef", "float", "int", "string", "tensor", "graph", "floats", "ints", "strings", "tensors", "graphs", "type", "types"}

func (k AttrKind) String() string {
	if int(k) < len(attrKindNames) {
		return attrKindNames[k]
	}
	return fmt.Sprintf("attrkind(%d)", uint8(k))
}

// Attr is a node attribute. Exactly the field matching Kind is set.
type Attr struct {
	Name    string
	Kind    AttrKind
	F       float32
	I       int64
	S       string
	T       *Tensor
	G       *Graph
	Floats  []float32
	Ints    []int64
	Strings []string
	Tensors []*Tensor
	Graphs  []*Graph
	Types   []Type // AttrTypeProto (one) and AttrTypeProtos
}

// Graph is a list of nodes in topological order over SSA values. Subgraphs
// (If/Loop/Scan bodies) are Graphs held by attributes; Parent links them to
// the graph whose values they may capture.
type Graph struct {
	Name    string
	Inputs  []*Value // run-time inputs only: initializers are not listed here
	Outputs []*Value
	Nodes   []*Node
	Consts  []*Value // initializers and constants, in a stable order
	Parent  *Graph
}

// Model is an imported model.
type Model struct {
	Graph      *Graph
	Opsets     map[string]int64 // domain ("" for ai.onnx) -> version
	IRVersion  int64
	Producer   string
	Path       string // file the model came from, for messages
	SourceHash string // sha256 of the file, hex
	DocString  string
	Metadata   map[string]string
}

// Opset returns the opset version imported for a domain ("" and "ai.onnx"
// are the same domain).
func (m *Model) Opset(domain string) int64 {
	if domain == "ai.onnx" {
		domain = ""
	}
	return m.Opsets[domain]
}

// Walk calls f on g and every subgraph below it, parents first.
func (g *Graph) Walk(f func(*Graph)) {
	f(g)
	for _, n := range g.Nodes {
		for _, a := range n.Attrs {
			if a.G != nil {
				a.G.Walk(f)
			}
			for _, s := range a.Graphs {
				s.Walk(f)
			}
		}
	}
}

// Uses returns, for each value, the nodes of g that read it (subgraph
// captures count as uses by the node holding the subgraph).
func (g *Graph) Uses() map[*Value][]*Node {
	uses := map[*Value][]*Node{}
	for _, n := range g.Nodes {
		seen := map[*Value]bool{}
		add := func(v *Value) {
			if v != nil && !seen[v] {
				seen[v] = true
				uses[v] = append(uses[v], n)
			}
		}
		for _, in := range n.Inputs {
			add(in)
		}
		for _, a := range n.Attrs {
			subs := a.Graphs
			if a.G != nil {
				subs = append([]*Graph{a.G}, subs...)
			}
			for _, s := range subs {
				for _, v := range s.Captures() {
					add(v)
				}
			}
		}
	}
	return uses
}

// Captures returns the values of enclosing graphs that g (or its own
// subgraphs) reads, in first-use order.
func (g *Graph) Captures() []*Value {
	local := map[*Value]bool{}
	var out []*Value
	seen := map[*Value]bool{}
	var visit func(s *Graph)
	visit = func(s *Graph) {
		for _, v := range s.Inputs {
			local[v] = true
		}
		for _, v := range s.Consts {
			local[v] = true
		}
		for _, n := range s.Nodes {
			for _, v := range n.Outputs {
				if v != nil {
					local[v] = true
				}
			}
		}
		check := func(v *Value) {
			if v != nil && !local[v] && !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
		}
		for _, n := range s.Nodes {
			for _, v := range n.Inputs {
				check(v)
			}
			for _, a := range n.Attrs {
				if a.G != nil {
					visit(a.G)
				}
				for _, sg := range a.Graphs {
					visit(sg)
				}
			}
		}
		for _, v := range s.Outputs {
			check(v)
		}
	}
	visit(g)
	return out
}

package ir

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
)

// The IR text form, one line per value:
//
//	opset ai.onnx 17
//	graph main(%x: f32[N,3,224,224]) -> (%y) {
//	  %w = const f32[2,3] {1, 2, 3, 4, 5, 6}
//	  %y = Conv @Conv_12 <f32[N,2,222,222]> %x %w {kernel_shape=[3,3]}
//	}
//
// A node line is `outputs = Op[:version] [@name] <output types> inputs
// {attributes}`. The version is printed only when it differs from what the
// opset header resolves; the node name only when it differs from the first
// output's name. Omitted optional inputs and outputs print as `_`. Names
// outside [A-Za-z0-9_./] are quoted. Constants of up to 16 elements print
// inline; larger ones as a sha256 digest, which Parse rejects.

// maxInlineElements is the largest constant printed with its data.
const maxInlineElements = 16

// Print writes m in the text form.
func Print(w io.Writer, m *Model) error {
	bw := bufio.NewWriter(w)
	p := &printer{w: bw, opsets: m.Opsets}
	if m.IRVersion != 0 {
		fmt.Fprintf(bw, "ir_version %d\n", m.IRVersion)
	}
	if m.Producer != "" {
		fmt.Fprintf(bw, "producer %s\n", strconv.Quote(m.Producer))
	}
	domains := make([]string, 0, len(m.Opsets))
	for d := range m.Opsets {
		domains = append(domains, d)
	}
	sort.Strings(domains)
	for _, d := range domains {
		name := d
		if name == "" {
			name = "ai.onnx"
		}
		fmt.Fprintf(bw, "opset %s %d\n", quoteName(name), m.Opsets[d])
	}
	if m.Graph != nil {
		p.graph(m.Graph, "", "graph")
		bw.WriteString("\n")
	}
	return bw.Flush()
}

// String prints the graph alone; with no opset header every node shows its
// version.
func (g *Graph) String() string {
	var b strings.Builder
	bw := bufio.NewWriter(&b)
	p := &printer{w: bw}
	p.graph(g, "", "graph")
	bw.Flush()
	return b.String()
}

// String prints the model in the text form.
func (m *Model) String() string {
	var b strings.Builder
	Print(&b, m)
	return b.String()
}

type printer struct {
	w      *bufio.Writer
	opsets map[string]int64 // nil: print every node's version
}

// graph prints `graph name(inputs) -> (outputs) {`, the body indented by
// indent+2, and the closing brace at indent (with no newline after it).
func (p *printer) graph(g *Graph, indent, keyword string) {
	w := p.w
	fmt.Fprintf(w, "%s %s(", keyword, quoteName(g.Name))
	for i, x := range g.Inputs {
		if i > 0 {
			w.WriteString(", ")
		}
		fmt.Fprintf(w, "%s: %s", valueName(x), typeString(typeOf(x)))
	}
	w.WriteString(") -> (")
	for i, x := range g.Outputs {
		if i > 0 {
			w.WriteString(", ")
		}
		w.WriteString(valueName(x))
	}
	w.WriteString(") {\n")
	in := indent + "  "
	for _, x := range g.Consts {
		fmt.Fprintf(w, "%s%s = const %s %s%s\n", in, valueName(x), typeString(typeOf(x)), tensorData(x.Const), storeSuffix(x.Const))
	}
	for _, n := range g.Nodes {
		w.WriteString(in)
		p.node(n, in)
		w.WriteString("\n")
	}
	w.WriteString(indent + "}")
}

func (p *printer) node(n *Node, indent string) {
	w := p.w
	if len(n.Outputs) > 0 {
		for i, x := range n.Outputs {
			if i > 0 {
				w.WriteString(", ")
			}
			w.WriteString(valueName(x))
		}
		w.WriteString(" = ")
	}
	op := n.Op
	if n.Domain != "" && n.Domain != "ai.onnx" {
		op = n.Domain + "." + n.Op
	}
	w.WriteString(op)
	if v, ok := resolveVersion(p.opsets, n.Domain, n.Op); !ok || v != n.Version {
		fmt.Fprintf(w, ":%d", n.Version)
	}
	if n.Name != defaultNodeName(n.Outputs) {
		w.WriteString(" @" + quoteName(n.Name))
	}
	if len(n.Outputs) > 0 {
		w.WriteString(" <")
		for i, x := range n.Outputs {
			if i > 0 {
				w.WriteString(", ")
			}
			if x == nil {
				w.WriteString("_")
			} else {
				w.WriteString(typeString(x.Type))
			}
		}
		w.WriteString(">")
	}
	for _, x := range n.Inputs {
		w.WriteString(" " + valueName(x))
	}
	if len(n.Attrs) > 0 {
		w.WriteString(" {")
		for i, a := range n.Attrs {
			if i > 0 {
				w.WriteString(" ")
			}
			w.WriteString(quoteName(a.Name) + "=")
			p.attr(a, indent)
		}
		w.WriteString("}")
	}
	if len(n.Fused) > 0 {
		w.WriteString("  # fused:")
		for i, o := range n.Fused {
			if i > 0 {
				w.WriteString(",")
			}
			w.WriteString(" " + o.Op + " " + quoteName(o.Name))
		}
	}
}

// resolveVersion is the version a node without an explicit one gets: the
// op's version for the imported opset, or for ops the table does not know,
// the opset version itself.
func resolveVersion(opsets map[string]int64, domain, op string) (int, bool) {
	if opsets == nil {
		return 0, false
	}
	if domain == "ai.onnx" {
		domain = ""
	}
	opset, ok := opsets[domain]
	if !ok {
		return 0, false
	}
	if s := LookupOp(domain, op); s != nil {
		return s.VersionFor(opset)
	}
	if domain == "" {
		return 0, false
	}
	return int(opset), true
}

func defaultNodeName(outs []*Value) string {
	if len(outs) > 0 && outs[0] != nil {
		return outs[0].Name
	}
	return ""
}

func typeOf(x *Value) Type {
	if x == nil {
		return Type{}
	}
	return x.Type
}

func valueName(x *Value) string {
	if x == nil {
		return "_"
	}
	return "%" + quoteName(x.Name)
}

func isNameChar(c rune) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '/'
}

// quoteName leaves names of [A-Za-z0-9_./] bare and quotes the rest.
func quoteName(s string) string {
	if s == "" || strings.IndexFunc(s, func(c rune) bool { return !isNameChar(c) }) >= 0 {
		return strconv.Quote(s)
	}
	return s
}

// typeString is Type.String with odd symbol names quoted.
func typeString(t Type) string {
	switch t.Kind {
	case SequenceKind:
		return "seq<" + elemTypeString(t.Elem) + ">"
	case OptionalKind:
		return "opt<" + elemTypeString(t.Elem) + ">"
	case MapKind:
		return "map<" + t.DType.String() + "," + elemTypeString(t.Elem) + ">"
	}
	dt := "?"
	if t.DType != Undefined {
		dt = t.DType.String()
	}
	if t.Unranked {
		return dt + "[?]"
	}
	parts := make([]string, len(t.Shape))
	for i, d := range t.Shape {
		if d.Sym != "" {
			parts[i] = quoteName(d.Sym)
		} else {
			parts[i] = strconv.FormatInt(d.Size, 10)
		}
	}
	return dt + "[" + strings.Join(parts, ",") + "]"
}

func elemTypeString(e *Type) string {
	if e == nil {
		return "?"
	}
	return typeString(*e)
}

func (p *printer) attr(a *Attr, indent string) {
	w := p.w
	switch a.Kind {
	case AttrFloat:
		w.WriteString(formatAttrFloat(a.F))
	case AttrInt:
		w.WriteString(strconv.FormatInt(a.I, 10))
	case AttrString:
		w.WriteString(strconv.Quote(a.S))
	case AttrTensor:
		w.WriteString(tensorLiteral(a.T))
	case AttrGraph:
		p.graph(a.G, indent+"  ", "graph")
	case AttrFloats:
		list(w, "floats", len(a.Floats), func(i int) string { return formatAttrFloat(a.Floats[i]) })
	case AttrInts:
		list(w, "ints", len(a.Ints), func(i int) string { return strconv.FormatInt(a.Ints[i], 10) })
	case AttrStrings:
		list(w, "strings", len(a.Strings), func(i int) string { return strconv.Quote(a.Strings[i]) })
	case AttrTensors:
		list(w, "tensors", len(a.Tensors), func(i int) string { return tensorLiteral(a.Tensors[i]) })
	case AttrGraphs:
		if len(a.Graphs) == 0 {
			w.WriteString("graphs[]")
			return
		}
		w.WriteString("[")
		for i, g := range a.Graphs {
			if i > 0 {
				w.WriteString(", ")
			}
			p.graph(g, indent+"  ", "graph")
		}
		w.WriteString("]")
	case AttrTypeProto:
		var t Type
		if len(a.Types) > 0 {
			t = a.Types[0]
		}
		w.WriteString("type<" + typeString(t) + ">")
	case AttrTypeProtos:
		list(w, "types", len(a.Types), func(i int) string { return "type<" + typeString(a.Types[i]) + ">" })
	default:
		fmt.Fprintf(w, "<%s>", a.Kind)
	}
}

// list prints [a,b,c], or kind[] when empty so the kind survives. Lists
// of tensors and types, which hold spaces themselves, separate with ", ".
func list(w *bufio.Writer, kind string, n int, elem func(int) string) {
	sep := ","
	if kind == "tensors" || kind == "types" {
		sep = ", "
	}
	if n == 0 {
		w.WriteString(kind + "[]")
		return
	}
	w.WriteString("[")
	for i := 0; i < n; i++ {
		if i > 0 {
			w.WriteString(sep)
		}
		w.WriteString(elem(i))
	}
	w.WriteString("]")
}

// formatAttrFloat always shows a float as one (1.0, not 1) so that the
// parser tells float attributes from int ones.
func formatAttrFloat(f float32) string {
	s := strconv.FormatFloat(float64(f), 'g', -1, 32)
	if !strings.ContainsAny(s, ".eIN") {
		s += ".0"
	}
	return s
}

func tensorLiteral(t *Tensor) string {
	if t == nil {
		return "tensor ?[] {}"
	}
	return "tensor " + typeString(t.Type()) + " " + tensorData(t)
}

// tensorData prints {e0, e1, ...} row-major, or a digest for large tensors.
// storeSuffix is " store=f16" for a constant weights.bin stores half.
func storeSuffix(t *Tensor) string {
	if t == nil || t.Store == 0 || t.Store == t.DType {
		return ""
	}
	return " store=" + t.Store.String()
}

func tensorData(t *Tensor) string {
	if t == nil {
		return "{}"
	}
	if t.Check() != nil || t.NumElements() > maxInlineElements {
		return digest(t)
	}
	n := int(t.NumElements())
	parts := make([]string, n)
	for i := range parts {
		parts[i] = formatElem(t, i)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func digest(t *Tensor) string {
	h := sha256.New()
	if t.DType == String {
		for _, s := range t.Strings {
			h.Write([]byte(strconv.Quote(s)))
		}
	} else {
		h.Write(t.Raw)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))[:16]
}

func formatElem(t *Tensor, i int) string {
	b := t.Raw
	switch t.DType {
	case F32:
		return strconv.FormatFloat(float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))), 'g', -1, 32)
	case F64:
		return strconv.FormatFloat(math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:])), 'g', -1, 64)
	case F16, BF16, F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F4E2M1, F8E8M0:
		// Every half, bfloat16 and smaller float value is exactly a float32.
		return strconv.FormatFloat(t.at(b, i), 'g', -1, 32)
	case Bool:
		return strconv.FormatBool(b[i] != 0)
	case String:
		return strconv.Quote(t.Strings[i])
	case U64:
		return strconv.FormatUint(binary.LittleEndian.Uint64(b[8*i:]), 10)
	case I64:
		return strconv.FormatInt(int64(binary.LittleEndian.Uint64(b[8*i:])), 10)
	case C64:
		re := math.Float32frombits(binary.LittleEndian.Uint32(b[8*i:]))
		im := math.Float32frombits(binary.LittleEndian.Uint32(b[8*i+4:]))
		return strconv.FormatComplex(complex(float64(re), float64(im)), 'g', -1, 64)
	case C128:
		re := math.Float64frombits(binary.LittleEndian.Uint64(b[16*i:]))
		im := math.Float64frombits(binary.LittleEndian.Uint64(b[16*i+8:]))
		return strconv.FormatComplex(complex(re, im), 'g', -1, 128)
	}
	return strconv.FormatInt(int64(t.at(b, i)), 10)
}

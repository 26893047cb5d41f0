package ir

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Parse reads the text form Print writes. Errors give line:col. Constants
// printed as digests cannot be rebuilt and are rejected.
func Parse(text string) (*Model, error) {
	p := &parser{lx: lexer{src: text, line: 1, col: 1}}
	p.next()
	m, err := p.model()
	if err != nil {
		return nil, err
	}
	return m, nil
}

type tokKind int

const (
	tEOF tokKind = iota
	tNewline
	tName   // bare name: letters, digits, _ . /
	tNumber // starts with a digit or a sign
	tString // "quoted"
	tValue  // %name
	tAt     // @name
	tArrow  // ->
	tPunct  // = , ( ) [ ] { } < > : ?
)

type token struct {
	kind      tokKind
	text      string // unquoted for tString, tValue, tAt
	line, col int
}

func (t token) String() string {
	switch t.kind {
	case tEOF:
		return "end of input"
	case tNewline:
		return "end of line"
	case tString:
		return strconv.Quote(t.text)
	case tValue:
		return "%" + quoteName(t.text)
	case tAt:
		return "@" + quoteName(t.text)
	}
	return fmt.Sprintf("%q", t.text)
}

type lexer struct {
	src       string
	pos       int
	line, col int
}

type parseError struct {
	line, col int
	msg       string
}

func (e *parseError) Error() string { return fmt.Sprintf("%d:%d: %s", e.line, e.col, e.msg) }

func (lx *lexer) advance(n int) {
	for _, c := range lx.src[lx.pos : lx.pos+n] {
		if c == '\n' {
			lx.line++
			lx.col = 1
		} else {
			lx.col++
		}
	}
	lx.pos += n
}

func (lx *lexer) lex() (token, error) {
	for lx.pos < len(lx.src) {
		c := lx.src[lx.pos]
		if c == ' ' || c == '\t' || c == '\r' {
			lx.advance(1)
			continue
		}
		if c == '#' { // comment to end of line
			for lx.pos < len(lx.src) && lx.src[lx.pos] != '\n' {
				lx.advance(1)
			}
			continue
		}
		break
	}
	t := token{line: lx.line, col: lx.col}
	if lx.pos >= len(lx.src) {
		return t, nil
	}
	rest := lx.src[lx.pos:]
	c := rest[0]
	errorf := func(format string, args ...any) (token, error) {
		return t, &parseError{t.line, t.col, fmt.Sprintf(format, args...)}
	}
	name := func(s string) (string, int, error) {
		if strings.HasPrefix(s, `"`) {
			q, err := strconv.QuotedPrefix(s)
			if err != nil {
				return "", 0, err
			}
			u, _ := strconv.Unquote(q)
			return u, len(q), nil
		}
		n := strings.IndexFunc(s, func(r rune) bool { return !isNameChar(r) })
		if n < 0 {
			n = len(s)
		}
		if n == 0 {
			return "", 0, fmt.Errorf("want a name")
		}
		return s[:n], n, nil
	}
	switch {
	case c == '\n':
		t.kind, t.text = tNewline, "\n"
		lx.advance(1)
	case c == '%' || c == '@':
		s, n, err := name(rest[1:])
		if err != nil {
			return errorf("bad name after %c: %v", c, err)
		}
		t.kind, t.text = tValue, s
		if c == '@' {
			t.kind = tAt
		}
		lx.advance(1 + n)
	case c == '"':
		q, err := strconv.QuotedPrefix(rest)
		if err != nil {
			return errorf("bad string: %v", err)
		}
		t.kind = tString
		t.text, _ = strconv.Unquote(q)
		lx.advance(len(q))
	case strings.HasPrefix(rest, "->"):
		t.kind, t.text = tArrow, "->"
		lx.advance(2)
	case c >= '0' && c <= '9' || (c == '-' || c == '+') && len(rest) > 1 && strings.IndexByte("0123456789.IN", rest[1]) >= 0:
		n := 1
		for n < len(rest) && (isNameChar(rune(rest[n])) && rest[n] != '/' || rest[n] == '+' || rest[n] == '-') {
			n++
		}
		t.kind, t.text = tNumber, rest[:n]
		lx.advance(n)
	case isNameChar(rune(c)):
		s, n, _ := name(rest)
		t.kind, t.text = tName, s
		lx.advance(n)
	case strings.IndexByte("=,()[]{}<>:?", c) >= 0:
		t.kind, t.text = tPunct, rest[:1]
		lx.advance(1)
	default:
		return errorf("unexpected character %q", c)
	}
	return t, nil
}

type parser struct {
	lx     lexer
	tok    token
	err    error
	opsets map[string]int64
}

// next moves to the next token; a lexing error becomes the parse error.
func (p *parser) next() {
	if p.err != nil {
		return
	}
	t, err := p.lx.lex()
	if err != nil {
		p.err = err
		p.tok = token{kind: tEOF, line: t.line, col: t.col}
		return
	}
	p.tok = t
}

func (p *parser) errorf(t token, format string, args ...any) error {
	if p.err != nil {
		return p.err
	}
	return &parseError{t.line, t.col, fmt.Sprintf(format, args...)}
}

func (p *parser) is(text string) bool {
	return (p.tok.kind == tPunct || p.tok.kind == tName || p.tok.kind == tArrow) && p.tok.text == text
}

func (p *parser) expect(text string) error {
	if !p.is(text) {
		return p.errorf(p.tok, "want %q, have %s", text, p.tok)
	}
	p.next()
	return p.err
}

func (p *parser) skipNewlines() {
	for p.tok.kind == tNewline {
		p.next()
	}
}

func (p *parser) number() (token, error) {
	t := p.tok
	if t.kind != tNumber {
		return t, p.errorf(t, "want a number, have %s", t)
	}
	p.next()
	return t, p.err
}

func (p *parser) int64() (int64, error) {
	t, err := p.number()
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(t.text, 10, 64)
	if err != nil {
		return 0, p.errorf(t, "bad integer %s", t)
	}
	return n, nil
}

// nameOrString reads a bare or quoted name.
func (p *parser) nameOrString() (string, error) {
	t := p.tok
	if t.kind != tName && t.kind != tString {
		return "", p.errorf(t, "want a name, have %s", t)
	}
	p.next()
	return t.text, p.err
}

func (p *parser) model() (*Model, error) {
	m := &Model{Opsets: map[string]int64{}}
	p.opsets = m.Opsets
	for {
		p.skipNewlines()
		t := p.tok
		switch {
		case p.is("ir_version"):
			p.next()
			n, err := p.int64()
			if err != nil {
				return nil, err
			}
			m.IRVersion = n
		case p.is("producer"):
			p.next()
			if p.tok.kind != tString {
				return nil, p.errorf(p.tok, "want a quoted producer, have %s", p.tok)
			}
			m.Producer = p.tok.text
			p.next()
		case p.is("opset"):
			p.next()
			d, err := p.nameOrString()
			if err != nil {
				return nil, err
			}
			if d == "ai.onnx" {
				d = ""
			}
			n, err := p.int64()
			if err != nil {
				return nil, err
			}
			if _, dup := m.Opsets[d]; dup {
				return nil, p.errorf(t, "opset for domain %q given twice", d)
			}
			m.Opsets[d] = n
		case p.is("graph"):
			p.next()
			g, err := p.graph(nil, nil)
			if err != nil {
				return nil, err
			}
			m.Graph = g
			p.skipNewlines()
			if p.tok.kind != tEOF {
				return nil, p.errorf(p.tok, "want end of input after the graph, have %s", p.tok)
			}
			return m, p.err
		default:
			return nil, p.errorf(t, "want ir_version, producer, opset or graph, have %s", t)
		}
		if p.tok.kind != tNewline {
			return nil, p.errorf(p.tok, "want end of line, have %s", p.tok)
		}
	}
}

// pscope maps names to values for one graph, chained to the enclosing
// graph's scope as it stood at the node holding the subgraph.
type pscope struct {
	names  map[string]*Value
	parent *pscope
}

func (s *pscope) lookup(name string) *Value {
	for ; s != nil; s = s.parent {
		if x, ok := s.names[name]; ok {
			return x
		}
	}
	return nil
}

func (p *parser) define(sc *pscope, t token, x *Value) error {
	if sc.lookup(t.text) != nil {
		return p.errorf(t, "value %s is already defined", t)
	}
	sc.names[t.text] = x
	return nil
}

// graph parses from the graph's name (after the keyword graph) to its
// closing brace.
func (p *parser) graph(parentScope *pscope, parent *Graph) (*Graph, error) {
	name, err := p.nameOrString()
	if err != nil {
		return nil, err
	}
	g := &Graph{Name: name, Parent: parent}
	sc := &pscope{names: map[string]*Value{}, parent: parentScope}
	if err := p.expect("("); err != nil {
		return nil, err
	}
	for !p.is(")") {
		if len(g.Inputs) > 0 {
			if err := p.expect(","); err != nil {
				return nil, err
			}
		}
		t := p.tok
		if t.kind != tValue {
			return nil, p.errorf(t, "want a graph input %%name, have %s", t)
		}
		p.next()
		if err := p.expect(":"); err != nil {
			return nil, err
		}
		typ, err := p.typ()
		if err != nil {
			return nil, err
		}
		x := &Value{Name: t.text, Type: typ}
		if err := p.define(sc, t, x); err != nil {
			return nil, err
		}
		g.Inputs = append(g.Inputs, x)
	}
	p.next()
	if err := p.expect("->"); err != nil {
		return nil, err
	}
	if err := p.expect("("); err != nil {
		return nil, err
	}
	var outs []token
	for !p.is(")") {
		if len(outs) > 0 {
			if err := p.expect(","); err != nil {
				return nil, err
			}
		}
		if p.tok.kind != tValue {
			return nil, p.errorf(p.tok, "want a graph output %%name, have %s", p.tok)
		}
		outs = append(outs, p.tok)
		p.next()
	}
	p.next()
	if err := p.expect("{"); err != nil {
		return nil, err
	}
	if p.tok.kind != tNewline {
		return nil, p.errorf(p.tok, "want end of line after {, have %s", p.tok)
	}
	for {
		p.skipNewlines()
		if p.is("}") {
			p.next()
			break
		}
		if p.err != nil {
			return nil, p.err
		}
		if p.tok.kind == tEOF {
			return nil, p.errorf(p.tok, "graph %s is not closed", quoteName(g.Name))
		}
		if err := p.stmt(g, sc); err != nil {
			return nil, err
		}
		if p.tok.kind != tNewline {
			return nil, p.errorf(p.tok, "want end of line, have %s", p.tok)
		}
	}
	for _, t := range outs {
		x := sc.lookup(t.text)
		if x == nil {
			return nil, p.errorf(t, "graph output %s is not defined", t)
		}
		g.Outputs = append(g.Outputs, x)
	}
	return g, p.err
}

// stmt parses a const or node line.
func (p *parser) stmt(g *Graph, sc *pscope) error {
	var outs []token
	if p.tok.kind == tValue || p.is("_") {
		for {
			if p.tok.kind != tValue && !p.is("_") {
				return p.errorf(p.tok, "want an output %%name or _, have %s", p.tok)
			}
			outs = append(outs, p.tok)
			p.next()
			if !p.is(",") {
				break
			}
			p.next()
		}
		if err := p.expect("="); err != nil {
			return err
		}
	}
	if p.is("const") {
		return p.constStmt(g, sc, outs)
	}
	opTok := p.tok
	if opTok.kind != tName {
		return p.errorf(opTok, "want an op name, have %s", opTok)
	}
	p.next()
	n := &Node{Op: opTok.text}
	if i := strings.LastIndexByte(opTok.text, '.'); i >= 0 {
		n.Domain, n.Op = opTok.text[:i], opTok.text[i+1:]
	}
	if p.is(":") {
		p.next()
		v, err := p.int64()
		if err != nil {
			return err
		}
		n.Version = int(v)
	} else {
		v, ok := resolveVersion(p.opsets, n.Domain, n.Op)
		if !ok {
			return p.errorf(opTok, "cannot resolve the version of %s: no opset for its domain, or the op does not exist at that opset; write %s:N", opTok.text, opTok.text)
		}
		n.Version = v
	}
	hasName := false
	if p.tok.kind == tAt {
		n.Name, hasName = p.tok.text, true
		p.next()
	}
	var types []*Type
	if p.is("<") {
		p.next()
		for {
			if p.is("_") {
				types = append(types, nil)
				p.next()
			} else {
				t, err := p.typ()
				if err != nil {
					return err
				}
				types = append(types, &t)
			}
			if !p.is(",") {
				break
			}
			p.next()
		}
		if err := p.expect(">"); err != nil {
			return err
		}
	}
	if len(types) != len(outs) {
		return p.errorf(opTok, "%s has %d outputs but %d output types", opTok.text, len(outs), len(types))
	}
	for p.tok.kind == tValue || p.is("_") {
		if p.is("_") {
			n.Inputs = append(n.Inputs, nil)
		} else {
			x := sc.lookup(p.tok.text)
			if x == nil {
				return p.errorf(p.tok, "undefined value %s", p.tok)
			}
			n.Inputs = append(n.Inputs, x)
		}
		p.next()
	}
	if p.is("{") {
		p.next()
		if err := p.attrs(n, g, sc); err != nil {
			return err
		}
	}
	for i, t := range outs {
		if t.kind != tValue {
			if types[i] != nil {
				return p.errorf(t, "omitted output %d has a type", i)
			}
			n.Outputs = append(n.Outputs, nil)
			continue
		}
		if types[i] == nil {
			return p.errorf(t, "output %s has no type", t)
		}
		x := &Value{Name: t.text, Type: *types[i], Def: n}
		if err := p.define(sc, t, x); err != nil {
			return err
		}
		n.Outputs = append(n.Outputs, x)
	}
	if !hasName {
		n.Name = defaultNodeName(n.Outputs)
	}
	g.Nodes = append(g.Nodes, n)
	return p.err
}

func (p *parser) constStmt(g *Graph, sc *pscope, outs []token) error {
	kw := p.tok
	p.next()
	if len(outs) != 1 || outs[0].kind != tValue {
		return p.errorf(kw, "const defines exactly one %%name")
	}
	typ, err := p.typ()
	if err != nil {
		return err
	}
	t, err := p.tensorData(outs[0].text, typ)
	if err != nil {
		return err
	}
	if p.is("store") {
		p.next()
		if err := p.expect("="); err != nil {
			return err
		}
		st := p.tok
		if st.text != "f16" || t.DType != F32 {
			return p.errorf(st, "store=%s: only an f32 constant may be stored f16", st.text)
		}
		t.Store = F16
		p.next()
	}
	x := &Value{Name: outs[0].text, Type: typ, Const: t}
	if err := p.define(sc, outs[0], x); err != nil {
		return err
	}
	g.Consts = append(g.Consts, x)
	return nil
}

// typ parses f32[N,3], ?[?], seq<...>, opt<...>, map<k,...>.
func (p *parser) typ() (Type, error) {
	t := p.tok
	switch {
	case p.is("seq") || p.is("opt"):
		kind := SequenceKind
		if p.is("opt") {
			kind = OptionalKind
		}
		p.next()
		if err := p.expect("<"); err != nil {
			return Type{}, err
		}
		e, err := p.elemType()
		if err != nil {
			return Type{}, err
		}
		return Type{Kind: kind, Elem: e}, p.expect(">")
	case p.is("map"):
		p.next()
		if err := p.expect("<"); err != nil {
			return Type{}, err
		}
		kt := p.tok
		key, ok := ParseDType(kt.text)
		if kt.kind != tName || !ok {
			return Type{}, p.errorf(kt, "want a map key dtype, have %s", kt)
		}
		p.next()
		if err := p.expect(","); err != nil {
			return Type{}, err
		}
		e, err := p.elemType()
		if err != nil {
			return Type{}, err
		}
		return Type{Kind: MapKind, DType: key, Elem: e}, p.expect(">")
	}
	var typ Type
	switch {
	case p.is("?"):
	case t.kind == tName:
		dt, ok := ParseDType(t.text)
		if !ok || dt == Undefined {
			return Type{}, p.errorf(t, "unknown dtype %s", t)
		}
		typ.DType = dt
	default:
		return Type{}, p.errorf(t, "want a type, have %s", t)
	}
	p.next()
	if err := p.expect("["); err != nil {
		return Type{}, err
	}
	if p.is("?") {
		p.next()
		typ.Unranked = true
		return typ, p.expect("]")
	}
	typ.Shape = Shape{}
	for !p.is("]") {
		if len(typ.Shape) > 0 {
			if err := p.expect(","); err != nil {
				return Type{}, err
			}
		}
		d := p.tok
		switch d.kind {
		case tNumber:
			n, err := strconv.ParseInt(d.text, 10, 64)
			if err != nil || n < 0 {
				return Type{}, p.errorf(d, "bad dim %s", d)
			}
			typ.Shape = append(typ.Shape, D(n))
		case tName, tString:
			typ.Shape = append(typ.Shape, S(d.text))
		default:
			return Type{}, p.errorf(d, "want a dim, have %s", d)
		}
		p.next()
	}
	if len(typ.Shape) == 0 {
		typ.Shape = nil // scalar
	}
	p.next()
	return typ, p.err
}

func (p *parser) elemType() (*Type, error) {
	if p.is("?") {
		// A bare ? is an unknown element type; ?[...] is a tensor of
		// unknown dtype.
		save := *p
		p.next()
		if !p.is("[") {
			return nil, p.err
		}
		*p = save
	}
	t, err := p.typ()
	return &t, err
}

// tensorData parses {e0, e1, ...} into a tensor of the given type.
func (p *parser) tensorData(name string, typ Type) (*Tensor, error) {
	start := p.tok
	if p.is("sha256") {
		return nil, p.errorf(start, "constant %s is printed as a digest; the text form cannot rebuild its data", "%"+quoteName(name))
	}
	if typ.Kind != TensorKind || typ.DType == Undefined || typ.Unranked {
		return nil, p.errorf(start, "a constant needs a tensor type with a known dtype and rank, have %s", typ)
	}
	dims, ok := typ.Shape.Consts()
	if !ok {
		return nil, p.errorf(start, "a constant needs a constant shape, have %s", typ)
	}
	if len(dims) == 0 {
		dims = nil
	}
	t := &Tensor{Name: name, DType: typ.DType, Shape: dims}
	if err := p.expect("{"); err != nil {
		return nil, err
	}
	count := 0
	for !p.is("}") {
		if count > 0 {
			if err := p.expect(","); err != nil {
				return nil, err
			}
		}
		if err := p.elem(t); err != nil {
			return nil, err
		}
		count++
	}
	p.next()
	if want := t.NumElements(); int64(count) != want {
		return nil, p.errorf(start, "constant %s has %d elements, want %d for %s", "%"+quoteName(name), count, want, typ)
	}
	return t, p.err
}

// elem appends one element to t.
func (p *parser) elem(t *Tensor) error {
	tk := p.tok
	bad := func() error { return p.errorf(tk, "bad %s element %s", t.DType, tk) }
	switch t.DType {
	case String:
		if tk.kind != tString {
			return bad()
		}
		t.Strings = append(t.Strings, tk.text)
		p.next()
		return p.err
	case Bool:
		switch {
		case p.is("true"):
			t.Raw = append(t.Raw, 1)
		case p.is("false"):
			t.Raw = append(t.Raw, 0)
		default:
			return bad()
		}
		p.next()
		return p.err
	case C64, C128:
		if err := p.expect("("); err != nil {
			return err
		}
		num := p.tok
		p.next()
		if err := p.expect(")"); err != nil {
			return err
		}
		size := 64
		if t.DType == C128 {
			size = 128
		}
		c, err := strconv.ParseComplex("("+num.text+")", size)
		if err != nil {
			return p.errorf(num, "bad %s element %s", t.DType, num)
		}
		if t.DType == C64 {
			t.Raw = binary.LittleEndian.AppendUint32(t.Raw, math.Float32bits(float32(real(c))))
			t.Raw = binary.LittleEndian.AppendUint32(t.Raw, math.Float32bits(float32(imag(c))))
		} else {
			t.Raw = binary.LittleEndian.AppendUint64(t.Raw, math.Float64bits(real(c)))
			t.Raw = binary.LittleEndian.AppendUint64(t.Raw, math.Float64bits(imag(c)))
		}
		return nil
	}
	if tk.kind != tNumber && !(tk.kind == tName && (tk.text == "NaN" || tk.text == "Inf")) {
		return bad()
	}
	p.next()
	s := tk.text
	if t.DType.IsSmallFloat() {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return bad()
		}
		c, ok := smallFloatCode(t.DType, f)
		if !ok {
			return bad()
		}
		t.Raw = append(t.Raw, c)
		return nil
	}
	if t.DType.IsFloat() {
		size := 32
		if t.DType == F64 {
			size = 64
		}
		f, err := strconv.ParseFloat(s, size)
		if err != nil {
			return bad()
		}
		switch t.DType {
		case F32:
			t.Raw = binary.LittleEndian.AppendUint32(t.Raw, math.Float32bits(float32(f)))
		case F64:
			t.Raw = binary.LittleEndian.AppendUint64(t.Raw, math.Float64bits(f))
		case F16:
			t.Raw = binary.LittleEndian.AppendUint16(t.Raw, f32ToF16(float32(f)))
		case BF16:
			t.Raw = binary.LittleEndian.AppendUint16(t.Raw, f32ToBF16(float32(f)))
		}
		return nil
	}
	size := t.DType.Bits()
	if t.DType.IsUnsigned() {
		u, err := strconv.ParseUint(s, 10, size)
		if err != nil {
			return bad()
		}
		t.Raw = appendUint(t.Raw, u, t.DType.Size())
		return nil
	}
	n, err := strconv.ParseInt(s, 10, size)
	if err != nil {
		return bad()
	}
	t.Raw = appendUint(t.Raw, uint64(n), t.DType.Size())
	return nil
}

func appendUint(b []byte, u uint64, size int) []byte {
	switch size {
	case 1:
		return append(b, byte(u))
	case 2:
		return binary.LittleEndian.AppendUint16(b, uint16(u))
	case 4:
		return binary.LittleEndian.AppendUint32(b, uint32(u))
	}
	return binary.LittleEndian.AppendUint64(b, u)
}

// attrs parses name=value pairs up to the closing brace.
func (p *parser) attrs(n *Node, g *Graph, sc *pscope) error {
	for {
		p.skipNewlines()
		if p.is("}") {
			p.next()
			return p.err
		}
		t := p.tok
		name, err := p.nameOrString()
		if err != nil {
			return err
		}
		if err := p.expect("="); err != nil {
			return err
		}
		a := &Attr{Name: name}
		if err := p.attrValue(a, g, sc); err != nil {
			return err
		}
		if n.Attr(name) != nil {
			return p.errorf(t, "attribute %q given twice", name)
		}
		n.SetAttr(a)
	}
}

var emptyListKinds = map[string]AttrKind{"floats": AttrFloats, "ints": AttrInts, "strings": AttrStrings,
	"tensors": AttrTensors, "graphs": AttrGraphs, "types": AttrTypeProtos}

func isFloatText(s string) bool { return strings.ContainsAny(s, ".eEIN") }

func (p *parser) attrValue(a *Attr, g *Graph, sc *pscope) error {
	t := p.tok
	switch {
	case t.kind == tNumber || p.is("NaN") || p.is("Inf"):
		p.next()
		if isFloatText(t.text) {
			f, err := strconv.ParseFloat(t.text, 32)
			if err != nil {
				return p.errorf(t, "bad float %s", t)
			}
			a.Kind, a.F = AttrFloat, float32(f)
			return p.err
		}
		i, err := strconv.ParseInt(t.text, 10, 64)
		if err != nil {
			return p.errorf(t, "bad int %s", t)
		}
		a.Kind, a.I = AttrInt, i
		return p.err
	case t.kind == tString:
		p.next()
		a.Kind, a.S = AttrString, t.text
		return p.err
	case p.is("tensor"):
		tt, err := p.tensorLiteral()
		a.Kind, a.T = AttrTensor, tt
		return err
	case p.is("graph"):
		p.next()
		sub, err := p.graph(sc, g)
		a.Kind, a.G = AttrGraph, sub
		return err
	case p.is("type"):
		typ, err := p.typeLiteral()
		a.Kind, a.Types = AttrTypeProto, []Type{typ}
		return err
	case t.kind == tName && emptyListKinds[t.text] != 0:
		p.next()
		if err := p.expect("["); err != nil {
			return err
		}
		a.Kind = emptyListKinds[t.text]
		return p.expect("]")
	case p.is("["):
		p.next()
		first := p.tok
		for i := 0; !p.is("]"); i++ {
			if i > 0 {
				if err := p.expect(","); err != nil {
					return err
				}
			}
			if err := p.listElem(a, first, g, sc); err != nil {
				return err
			}
		}
		if a.Kind == AttrUndefined {
			return p.errorf(t, "an empty list needs its kind, e.g. ints[]")
		}
		p.next()
		return p.err
	}
	return p.errorf(t, "want an attribute value, have %s", t)
}

// listElem appends one element; the first element fixes the list's kind.
func (p *parser) listElem(a *Attr, first token, g *Graph, sc *pscope) error {
	t := p.tok
	want := func(k AttrKind) error {
		if a.Kind == AttrUndefined {
			a.Kind = k
		}
		if a.Kind != k {
			return p.errorf(t, "%s in a list of %s", t, a.Kind)
		}
		return nil
	}
	switch {
	case t.kind == tNumber || p.is("NaN") || p.is("Inf"):
		p.next()
		if isFloatText(first.text) {
			if err := want(AttrFloats); err != nil {
				return err
			}
			f, err := strconv.ParseFloat(t.text, 32)
			if err != nil {
				return p.errorf(t, "bad float %s", t)
			}
			a.Floats = append(a.Floats, float32(f))
			return p.err
		}
		if err := want(AttrInts); err != nil {
			return err
		}
		i, err := strconv.ParseInt(t.text, 10, 64)
		if err != nil {
			return p.errorf(t, "bad int %s", t)
		}
		a.Ints = append(a.Ints, i)
		return p.err
	case t.kind == tString:
		if err := want(AttrStrings); err != nil {
			return err
		}
		p.next()
		a.Strings = append(a.Strings, t.text)
		return p.err
	case p.is("tensor"):
		if err := want(AttrTensors); err != nil {
			return err
		}
		tt, err := p.tensorLiteral()
		a.Tensors = append(a.Tensors, tt)
		return err
	case p.is("graph"):
		if err := want(AttrGraphs); err != nil {
			return err
		}
		p.next()
		sub, err := p.graph(sc, g)
		a.Graphs = append(a.Graphs, sub)
		return err
	case p.is("type"):
		if err := want(AttrTypeProtos); err != nil {
			return err
		}
		typ, err := p.typeLiteral()
		a.Types = append(a.Types, typ)
		return err
	}
	return p.errorf(t, "want a list element, have %s", t)
}

func (p *parser) tensorLiteral() (*Tensor, error) {
	p.next() // tensor
	typ, err := p.typ()
	if err != nil {
		return nil, err
	}
	return p.tensorData("", typ)
}

func (p *parser) typeLiteral() (Type, error) {
	p.next() // type
	if err := p.expect("<"); err != nil {
		return Type{}, err
	}
	typ, err := p.typ()
	if err != nil {
		return Type{}, err
	}
	return typ, p.expect(">")
}

// f32ToF16 converts to IEEE half precision, rounding to nearest even; NaN
// becomes a quiet NaN.
func f32ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23&0xff) - 127
	man := b & 0x7fffff
	switch {
	case exp == 128: // Inf or NaN
		if man != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	case exp > 15:
		return sign | 0x7c00
	case exp >= -14:
		// Normal: keep 10 mantissa bits, round the 13 dropped ones.
		h := uint32(exp+15)<<10 | man>>13
		h += roundBits(man, 13)
		return sign | uint16(h) // a carry into the exponent is the right result
	case exp >= -25:
		// Subnormal: shift the implicit 1 in too.
		m := man | 0x800000
		shift := uint(-exp - 1)
		h := m >> shift
		h += roundBits(m, shift)
		return sign | uint16(h)
	}
	return sign
}

// roundBits is 1 when dropping the low n bits of m should round up (to
// nearest, ties to even).
func roundBits(m uint32, n uint) uint32 {
	half := uint32(1) << (n - 1)
	low := m & (1<<n - 1)
	if low > half || low == half && (m>>n)&1 == 1 {
		return 1
	}
	return 0
}

// f32ToBF16 converts to bfloat16, rounding to nearest even; NaN stays NaN.
func f32ToBF16(f float32) uint16 {
	b := math.Float32bits(f)
	if f != f {
		return uint16(b>>16) | 0x40
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

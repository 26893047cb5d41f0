package gen

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	"github.com/cuvil/cuvil/ir"
	"github.com/cuvil/cuvil/templates"

	"github.com/dave/jennifer/jen"
)

// A custom operator is an op that templates/ has no kernel for, run by a Go
// function from the user's own package. The function never imports cuvil:
// it takes each input as a slice and its shape, then each attribute (sorted
// by name) as a Go value, then for each output a pointer to a slice and a
// pointer to a shape, which it sets (reusing their memory keeps runs free
// of allocation), and returns an error:
//
//	func FastGelu(x0 []float32, x0Shape []int, alpha float32, y0 *[]float32, y0Shape *[]int) error

// CustomOp binds an op (Domain::Op) to a Go function Path.Func.
type CustomOp struct {
	Domain string
	Op     string
	Path   string // import path of the function's package
	Func   string // exported function name
}

// AttrSig is an attribute in an op signature.
type AttrSig struct {
	Name string
	Kind ir.AttrKind
}

// OpSignature is what a custom op's function must accept: the op, the
// dtypes of its inputs and outputs and its attributes by name and kind.
type OpSignature struct {
	Domain  string
	Op      string
	Inputs  []ir.DType
	Outputs []ir.DType
	Attrs   []AttrSig // sorted by name
}

// Key is the op's registry key, "domain::Op".
func (s OpSignature) Key() string { return domainName(s.Domain) + "::" + s.Op }

// String is the signature's stable text form:
// com.acme::FastGelu(f32) -> (f32) {alpha: float}.
func (s OpSignature) String() string {
	dts := func(ds []ir.DType) string {
		p := make([]string, len(ds))
		for i, d := range ds {
			p[i] = d.String()
		}
		return strings.Join(p, ", ")
	}
	attrs := make([]string, len(s.Attrs))
	for i, a := range s.Attrs {
		attrs[i] = a.Name + ": " + a.Kind.String()
	}
	return fmt.Sprintf("%s(%s) -> (%s) {%s}", s.Key(), dts(s.Inputs), dts(s.Outputs), strings.Join(attrs, ", "))
}

// Hash is a short stable hash of String.
func (s OpSignature) Hash() string {
	h := sha256.Sum256([]byte(s.String()))
	return hex.EncodeToString(h[:8])
}

// GoParam is one parameter of a custom op's Go function.
type GoParam struct {
	Name string
	Type string // as types.TypeString writes it
}

// GoParams lists the parameters the Go function must take, in order.
func (s OpSignature) GoParams() []GoParam {
	var ps []GoParam
	for i, d := range s.Inputs {
		n := fmt.Sprintf("x%d", i)
		ps = append(ps, GoParam{n, "[]" + goElem(d)}, GoParam{n + "Shape", "[]int"})
	}
	for _, a := range s.Attrs {
		ps = append(ps, GoParam{attrParam(a.Name), attrGoType(a.Kind)})
	}
	for i, d := range s.Outputs {
		n := fmt.Sprintf("y%d", i)
		ps = append(ps, GoParam{n, "*[]" + goElem(d)}, GoParam{n + "Shape", "*[]int"})
	}
	return ps
}

// GoSignature is the Go function type the op needs, with parameter names.
func (s OpSignature) GoSignature() string {
	ps := s.GoParams()
	p := make([]string, len(ps))
	for i, x := range ps {
		p[i] = x.Name + " " + x.Type
	}
	return "func(" + strings.Join(p, ", ") + ") error"
}

func attrParam(name string) string {
	n := goName(name)
	n = strings.ToLower(n[:1]) + n[1:]
	if isCReserved(n) {
		n += "_"
	}
	return n
}

func goElem(d ir.DType) string {
	switch d {
	case ir.F32:
		return "float32"
	case ir.F64:
		return "float64"
	case ir.F16, ir.BF16, ir.U16:
		return "uint16"
	case ir.I8, ir.I4, ir.I2:
		return "int8"
	case ir.U8, ir.U4, ir.U2, ir.F8E4M3FN, ir.F8E4M3FNUZ, ir.F8E5M2, ir.F8E5M2FNUZ, ir.F4E2M1, ir.F8E8M0:
		return "uint8"
	case ir.I16:
		return "int16"
	case ir.I32:
		return "int32"
	case ir.I64:
		return "int64"
	case ir.U32:
		return "uint32"
	case ir.U64:
		return "uint64"
	case ir.Bool:
		return "bool"
	case ir.String:
		return "string"
	}
	return ""
}

func attrGoType(k ir.AttrKind) string {
	switch k {
	case ir.AttrInt:
		return "int64"
	case ir.AttrFloat:
		return "float32"
	case ir.AttrString:
		return "string"
	case ir.AttrInts:
		return "[]int64"
	case ir.AttrFloats:
		return "[]float32"
	case ir.AttrStrings:
		return "[]string"
	}
	return ""
}

// NeedsCustomKernel reports whether n is an op that templates/ does not
// implement (so it must be registered as a custom op).
func NeedsCustomKernel(n *ir.Node) bool {
	if n.Domain == "" && n.Op == "Constant" {
		return false
	}
	key := n.Op
	if n.Domain != "" && n.Domain != "ai.onnx" {
		key = n.Domain + "::" + n.Op
	}
	_, ok := templates.Kernels[key]
	return !ok
}

// NodeSignature returns the signature a custom op function needs to run n.
func NodeSignature(n *ir.Node) (OpSignature, error) {
	s := OpSignature{Domain: n.Domain, Op: n.Op}
	where := fmt.Sprintf("node %q (%s::%s)", n.Name, domainName(n.Domain), n.Op)
	for i, v := range n.Inputs {
		if v == nil {
			return s, fmt.Errorf("%s: input %d is omitted; custom ops take every input", where, i)
		}
		if v.Type.Kind != ir.TensorKind || goElem(v.Type.DType) == "" {
			return s, fmt.Errorf("%s: input %d (%q) has type %s; custom ops take tensors of known dtype", where, i, v.Name, v.Type)
		}
		s.Inputs = append(s.Inputs, v.Type.DType)
	}
	for i, v := range n.Outputs {
		if v == nil {
			return s, fmt.Errorf("%s: output %d is omitted; custom ops write every output", where, i)
		}
		if v.Type.Kind != ir.TensorKind || goElem(v.Type.DType) == "" {
			return s, fmt.Errorf("%s: output %d (%q) has type %s; declare its dtype in the model (value_info or graph output) so the custom op's signature is known", where, i, v.Name, v.Type)
		}
		s.Outputs = append(s.Outputs, v.Type.DType)
	}
	for _, a := range n.Attrs {
		if attrGoType(a.Kind) == "" {
			return s, fmt.Errorf("%s: attribute %q is a %s; custom ops take int, float, string and lists of them", where, a.Name, a.Kind)
		}
		s.Attrs = append(s.Attrs, AttrSig{a.Name, a.Kind})
	}
	sort.Slice(s.Attrs, func(i, j int) bool { return s.Attrs[i].Name < s.Attrs[j].Name })
	return s, nil
}

// CustomSignatures returns the signatures of the model's nodes that need
// a custom kernel, one per distinct signature, sorted by text.
func CustomSignatures(m *ir.Model) ([]OpSignature, error) {
	seen := map[string]bool{}
	var out []OpSignature
	var err error
	walkNodes(m.Graph, func(n *ir.Node) {
		if err != nil || !NeedsCustomKernel(n) {
			return
		}
		var s OpSignature
		if s, err = NodeSignature(n); err != nil {
			return
		}
		if !seen[s.String()] {
			seen[s.String()] = true
			out = append(out, s)
		}
	})
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out, err
}

func walkNodes(g *ir.Graph, f func(*ir.Node)) {
	if g == nil {
		return
	}
	for _, n := range g.Nodes {
		f(n)
		for _, a := range n.Attrs {
			if a.G != nil {
				walkNodes(a.G, f)
			}
			for _, sg := range a.Graphs {
				walkNodes(sg, f)
			}
		}
	}
}

// unregisteredError is the error for a node no kernel or custom op runs.
func unregisteredError(where string, n *ir.Node) error {
	s, err := NodeSignature(n)
	if err != nil {
		return fmt.Errorf("gen: %s: no kernel for this op, and it cannot be a custom op: %v", where, err)
	}
	return fmt.Errorf("gen: %s: no kernel for this op; register a custom op with signature %s [%s]: "+
		"a Go function %s, with -op %s=IMPORT/PATH.Func", where, s, s.Hash(), s.GoSignature(), s.Key())
}

// customLowering holds the custom ops a model uses, for lower and the
// wrapper file.
type customLowering struct {
	ops  map[string]CustomOp // by key
	used []customUse
	byFn map[string]bool
}

type customUse struct {
	fn  string // wrapper name
	sig OpSignature
	op  CustomOp
}

func newCustomLowering(ops []CustomOp) (*customLowering, error) {
	cl := &customLowering{ops: map[string]CustomOp{}, byFn: map[string]bool{}}
	for _, op := range ops {
		key := domainName(op.Domain) + "::" + op.Op
		if _, dup := cl.ops[key]; dup {
			return nil, fmt.Errorf("gen: custom op %s registered twice", key)
		}
		if op.Path == "" || op.Func == "" {
			return nil, fmt.Errorf("gen: custom op %s: want an import path and a function name", key)
		}
		cl.ops[key] = op
	}
	return cl, nil
}

// kernel returns the wrapper function that runs n, or ok=false when no
// custom op is registered for it.
func (cl *customLowering) kernel(n *ir.Node) (string, bool, error) {
	op, ok := cl.ops[domainName(n.Domain)+"::"+n.Op]
	if !ok {
		return "", false, nil
	}
	s, err := NodeSignature(n)
	if err != nil {
		return "", true, err
	}
	fn := "cuvilCustom" + goName(n.Op) + "_" + s.Hash()[:8]
	if !cl.byFn[fn] {
		cl.byFn[fn] = true
		cl.used = append(cl.used, customUse{fn: fn, sig: s, op: op})
	}
	return fn, true, nil
}

// file renders customops.go: one wrapper per signature that adapts a Node
// to the user's function.
func (cl *customLowering) file(pkg, header string) ([]byte, error) {
	f := jen.NewFile(pkg)
	f.HeaderComment(header)
	f.Comment("cuvilCustomState keeps a custom op's outputs between runs, so the")
	f.Comment("user's function can reuse their memory.")
	f.Type().Id("cuvilCustomState").Struct(
		jen.Id("data").Index().Any(),
		jen.Id("shapes").Index().Index().Int(),
	)
	f.Line()
	for _, u := range cl.used {
		s := u.sig
		f.Add(lineComment(fmt.Sprintf("%s runs %s with %s.%s.", u.fn, s, u.op.Path, u.op.Func)))
		f.Func().Id(u.fn).Params(jen.Id("n").Op("*").Id("Node")).Error().BlockFunc(func(g *jen.Group) {
			g.List(jen.Id("st"), jen.Id("_")).Op(":=").Id("n").Dot("Cache").Assert(jen.Op("*").Id("cuvilCustomState"))
			g.If(jen.Id("st").Op("==").Nil()).Block(
				jen.Id("st").Op("=").Op("&").Id("cuvilCustomState").Values(
					jen.Id("data").Op(":").Make(jen.Index().Any(), jen.Lit(len(s.Outputs))),
					jen.Id("shapes").Op(":").Make(jen.Index().Index().Int(), jen.Lit(len(s.Outputs))),
				),
				jen.Id("n").Dot("Cache").Op("=").Id("st"),
			)
			var args []jen.Code
			for i, d := range s.Inputs {
				x := fmt.Sprintf("x%d", i)
				g.List(jen.Id(x), jen.Id("ok"+x)).Op(":=").Id("n").Dot("In").Index(jen.Lit(i)).Dot("Data").Assert(jen.Index().Id(goElem(d)))
				g.If(jen.Op("!").Id("ok" + x)).Block(jen.Return(jen.Id("n").Dot("Errorf").Call(jen.Lit(fmt.Sprintf("input %d holds %%T, want []%s", i, goElem(d))), jen.Id("n").Dot("In").Index(jen.Lit(i)).Dot("Data"))))
				args = append(args, jen.Id(x), jen.Id("n").Dot("In").Index(jen.Lit(i)).Dot("Shape"))
			}
			for _, a := range s.Attrs {
				v := attrParam(a.Name)
				g.List(jen.Id("a_"+v), jen.Id("_")).Op(":=").Id("n").Dot("Attrs").Index(jen.Lit(a.Name)).Assert(jen.Id(attrGoType(a.Kind)))
				args = append(args, jen.Id("a_"+v))
			}
			for i, d := range s.Outputs {
				y := fmt.Sprintf("y%d", i)
				g.List(jen.Id(y), jen.Id("_")).Op(":=").Id("st").Dot("data").Index(jen.Lit(i)).Assert(jen.Op("*").Index().Id(goElem(d)))
				g.If(jen.Id(y).Op("==").Nil()).Block(
					jen.Id(y).Op("=").New(jen.Index().Id(goElem(d))),
					jen.Id("st").Dot("data").Index(jen.Lit(i)).Op("=").Id(y),
				)
				args = append(args, jen.Id(y), jen.Op("&").Id("st").Dot("shapes").Index(jen.Lit(i)))
			}
			g.If(jen.Err().Op(":=").Qual(u.op.Path, u.op.Func).Call(args...), jen.Err().Op("!=").Nil()).Block(
				jen.Return(jen.Id("n").Dot("Errorf").Call(jen.Lit("%v"), jen.Err())),
			)
			for i, d := range s.Outputs {
				y := fmt.Sprintf("y%d", i)
				want := fmt.Sprintf("want%d", i)
				shape := jen.Id("st").Dot("shapes").Index(jen.Lit(i))
				g.Id(want).Op(":=").Lit(1)
				g.For(jen.List(jen.Id("_"), jen.Id("d")).Op(":=").Range().Add(shape)).Block(
					jen.If(jen.Id("d").Op("<").Lit(0)).Block(jen.Return(jen.Id("n").Dot("Errorf").Call(jen.Lit(fmt.Sprintf("%s.%s set output %d's shape to %%v", u.op.Path, u.op.Func, i)), jen.Id("st").Dot("shapes").Index(jen.Lit(i))))),
					jen.Id(want).Op("*=").Id("d"),
				)
				g.If(jen.Len(jen.Op("*").Id(y)).Op("!=").Id(want)).Block(jen.Return(jen.Id("n").Dot("Errorf").Call(
					jen.Lit(fmt.Sprintf("%s.%s returned %%d elements for output %d of shape %%v, want %%d", u.op.Path, u.op.Func, i)),
					jen.Len(jen.Op("*").Id(y)), jen.Id("st").Dot("shapes").Index(jen.Lit(i)), jen.Id(want))))
				out := jen.Id("n").Dot("Out").Index(jen.Lit(i))
				g.Add(out).Dot("DType").Op("=").Add(dtypeID(d))
				g.Add(out).Dot("Shape").Op("=").Id("st").Dot("shapes").Index(jen.Lit(i))
				g.Comment("Re-boxing the slice allocates: only when it changed.")
				g.If(jen.List(jen.Id("old"), jen.Id("ok")).Op(":=").Add(out).Dot("Data").Assert(jen.Index().Id(goElem(d))),
					jen.Op("!").Id("ok").Op("||").Len(jen.Id("old")).Op("!=").Len(jen.Op("*").Id(y)).Op("||").Len(jen.Id("old")).Op(">").Lit(0).Op("&&").Op("&").Id("old").Index(jen.Lit(0)).Op("!=").Op("&").Parens(jen.Op("*").Id(y)).Index(jen.Lit(0))).Block(
					jen.Add(out).Dot("Data").Op("=").Op("*").Id(y),
				)
			}
			g.Return(jen.Nil())
		})
		f.Line()
	}
	var buf strings.Builder
	if err := f.Render(&buf); err != nil {
		return nil, fmt.Errorf("gen: rendering customops.go: %v", err)
	}
	return []byte(buf.String()), nil
}

// customKernel is the kernel of an op templates/ lacks: the wrapper of a
// registered custom op, or an error saying how to register one.
func (c *compiled) customKernel(where string, n *ir.Node) (string, error) {
	fn, ok, err := c.custom.kernel(n)
	if err != nil {
		return "", fmt.Errorf("gen: %s: %v", where, err)
	}
	if !ok {
		return "", unregisteredError(where, n)
	}
	return fn, nil
}

package gen

import (
	"fmt"

	"github.com/cuvil/cuvil/ir"

	"github.com/dave/jennifer/jen"
)

// The generated session is set up from data, not code, so that `go build`
// time and memory grow linearly with the model (a 10,000-node model's
// NewSession used to be one function with a struct literal and a map
// literal per node): cuvilNodeTable describes every kernel node (name, op,
// version, inputs and outputs as value references, typed attributes) and
// cuvilViewTable every memory-plan value; NewSession walks both
// (templates/gen_support.go's cuvilSetupNodes and cuvilSetupViews). Run is
// split into methods of at most runChunk main-graph nodes each.

// runChunk bounds the main-graph nodes of one generated Run method.
const runChunk = 200

// ref encodes a value as a cuvilRef: -1 none, else index<<2 | where (0
// session values, 1 inputs, 2 constants).
func (c *compiled) ref(v *ir.Value) int32 {
	if v == nil {
		return -1
	}
	if k, ok := c.constIndex[v]; ok {
		return int32(k)<<2 | 2
	}
	for k, in := range c.inputs {
		if in == v {
			return int32(k)<<2 | 1
		}
	}
	return int32(c.valIndex[v]) << 2
}

func (c *compiled) refsLit(vs []*ir.Value) jen.Code {
	items := make([]jen.Code, len(vs))
	for i, v := range vs {
		items[i] = jen.Lit(int(c.ref(v)))
	}
	return jen.Index().Int32().Values(items...)
}

// attrEntry renders one attribute as a cuvilAttr literal.
func (c *compiled) attrEntry(a *ir.Attr) jen.Code {
	f := []jen.Code{jen.Id("name").Op(":").Lit(a.Name)}
	kind := func(k int) { f = append(f, jen.Id("kind").Op(":").Lit(k)) }
	switch a.Kind {
	case ir.AttrInt:
		kind(0)
		if a.I != 0 {
			f = append(f, jen.Id("i").Op(":").Add(intCode(a.I)))
		}
	case ir.AttrFloat:
		kind(1)
		f = append(f, jen.Id("f").Op(":").Add(floatCode(a.F)))
	case ir.AttrString:
		kind(2)
		f = append(f, jen.Id("s").Op(":").Lit(a.S))
	case ir.AttrInts:
		kind(3)
		items := make([]jen.Code, len(a.Ints))
		for i, x := range a.Ints {
			items[i] = intCode(x)
		}
		f = append(f, jen.Id("ints").Op(":").Index().Int64().Values(items...))
	case ir.AttrFloats:
		kind(4)
		items := make([]jen.Code, len(a.Floats))
		for i, x := range a.Floats {
			items[i] = floatCode(x)
		}
		f = append(f, jen.Id("floats").Op(":").Index().Float32().Values(items...))
	case ir.AttrStrings:
		kind(5)
		items := make([]jen.Code, len(a.Strings))
		for i, x := range a.Strings {
			items[i] = jen.Lit(x)
		}
		f = append(f, jen.Id("strs").Op(":").Index().String().Values(items...))
	case ir.AttrTensor:
		kind(6)
		f = append(f, jen.Id("i").Op(":").Lit(c.tensorIndex[a.T]))
	default:
		panic("gen: attribute kind checked in lower: " + a.Kind.String())
	}
	return jen.Values(f...)
}

// nodeTable writes cuvilNodeTable, one descriptor per kernel node.
func (c *compiled) nodeTable(f *jen.File) {
	f.Comment("cuvilNodeTable describes the session's kernel nodes (NewSession's cuvilSetupNodes).")
	f.Var().Id("cuvilNodeTable").Op("=").Index(jen.Op("...")).Id("cuvilNodeDesc").ValuesFunc(func(g *jen.Group) {
		for _, ln := range c.nodes {
			n := ln.n
			fields := []jen.Code{
				jen.Id("name").Op(":").Lit(n.Name),
				jen.Id("op").Op(":").Lit(n.Op),
				jen.Id("version").Op(":").Lit(n.Version),
			}
			if len(n.Inputs) > 0 {
				fields = append(fields, jen.Id("in").Op(":").Add(c.refsLit(n.Inputs)))
			}
			if len(n.Outputs) > 0 {
				fields = append(fields, jen.Id("out").Op(":").Add(c.refsLit(n.Outputs)))
			}
			if len(n.Attrs) > 0 {
				var attrs []jen.Code
				for _, a := range n.Attrs {
					if a.Kind == ir.AttrTypeProto {
						continue // Optional's type: the session gives the output its dtype (lower checked)
					}
					attrs = append(attrs, c.attrEntry(a))
				}
				if len(attrs) > 0 {
					fields = append(fields, jen.Id("attrList").Op(":").Index().Id("cuvilAttr").Values(attrs...))
				}
				fields = append(fields, jen.Id("hasAttrs").Op(":").True())
			}
			g.Line().Values(fields...)
		}
		if len(c.nodes) > 0 {
			g.Line()
		}
	})
}

// viewTable writes cuvilViewTable, the memory plan's values as views of
// the arenas (numbered as c.plan.Arenas).
func (c *compiled) viewTable(f *jen.File) {
	arena := map[ir.DType]int{}
	for i, a := range c.plan.Arenas {
		arena[a.DType] = i
	}
	f.Comment("cuvilViewTable places the values of known size in the arenas (NewSession's cuvilSetupViews).")
	f.Var().Id("cuvilViewTable").Op("=").Index(jen.Op("...")).Id("cuvilViewDesc").ValuesFunc(func(g *jen.Group) {
		for _, b := range c.plan.Buffers {
			v := b.Value
			shape, _ := v.Type.Shape.Consts()
			n, _ := v.Type.Shape.NumElements()
			g.Line().Values(
				jen.Id("val").Op(":").Lit(c.valIndex[v]),
				jen.Id("arena").Op(":").Lit(arena[b.DType]),
				jen.Id("dtype").Op(":").Add(dtypeID(v.Type.DType)),
				jen.Id("shape").Op(":").Add(intsLit(shape)),
				jen.Id("off").Op(":").Lit(int(b.Offset)/b.DType.Size()),
				jen.Id("n").Op(":").Lit(int(n)),
			)
		}
		if len(c.plan.Buffers) > 0 {
			g.Line()
		}
	})
}

// emitPlan writes, in NewSession, the arenas and the views of them that
// the static values are.
func (c *compiled) emitPlan(g *jen.Group) {
	g.Comment("Memory plan: values of known size are views of one arena per dtype.")
	g.Id("cuvilSetupViews").Call(jen.Id("s").Dot("vals").Index(jen.Op(":")), jen.Index().Any().ValuesFunc(func(g *jen.Group) {
		for _, a := range c.plan.Arenas {
			g.Line().Id("cuvilAlloc").Call(dtypeID(a.DType), jen.Lit(int(a.Bytes)/a.DType.Size()))
		}
		if len(c.plan.Arenas) > 0 {
			g.Line()
		}
	}), jen.Id("cuvilViewTable").Index(jen.Op(":")))
}

// runChunks writes the main graph's nodes as Session methods of at most
// runChunk nodes each and, in Run, the calls of them.
func (c *compiled) runChunks(f *jen.File, g *jen.Group) {
	for lo := 0; lo < len(c.run); lo += runChunk {
		hi := min(lo+runChunk, len(c.run))
		method := fmt.Sprintf("cuvilRun%d", lo/runChunk)
		g.If(jen.Err().Op(":=").Id("s").Dot(method).Call(), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Id("Output").Values(), jen.Err()))
		e := &emitter{c: c, fail: func(err jen.Code) jen.Code { return jen.Return(err) }, mark: true, base: lo}
		f.Line()
		f.Add(lineComment(fmt.Sprintf("%s runs main-graph nodes %d to %d.", method, lo, hi-1)))
		f.Func().Params(jen.Id("s").Op("*").Id("Session")).Id(method).Params().Error().BlockFunc(func(b *jen.Group) {
			e.nodes(b, c.run[lo:hi])
			b.Return(jen.Nil())
		})
	}
}
